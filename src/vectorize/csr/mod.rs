//! Compressed sparse row (CSR) matrix of `f32`, documents x terms: the TF-IDF matrix.
//!
//! Why a home-made CSR type held in ndarray arrays rather than a sparse-matrix crate: the
//! pipeline needs exactly three operations on the TF-IDF matrix (`X * D`, `X^T * D` with a
//! thin dense `D`, and row sampling), they dominate the run time of dimension reduction, and
//! they must be bit-for-bit deterministic whatever the number of threads. Owning the kernels
//! lets us guarantee that:
//!
//! * [`CsrMatrix::dot_dense`] is parallel over rows; every output row is a sum over that row's
//!   entries in column order, so the result cannot depend on the thread count.
//! * [`CsrMatrix::t_dot_dense`] splits the *output* rows (= the columns of the matrix) into
//!   blocks that are filled in parallel; each block scans the documents in order, so every
//!   output element is accumulated in document order, again whatever the split. No transposed
//!   copy of the matrix and no per-thread dense accumulators are needed.
//! * [`CsrMatrix::t_dot_dot_dense`] is `X^T (X D)`, the randomized SVD's round trip, made
//!   block of rows by block with the two kernels above: the same sums in the same order as
//!   `t_dot_dense(dot_dense(D))`, but `X D` (33 MB on arXiv) is never held whole. (So the
//!   pipeline never calls `t_dot_dense` on its own; the tests do, as the reference.)
//!
//! Both kernels are memory-bound: each stored entry touches a random ~440-byte row of the
//! dense operand, which at a million documents lives in main memory. So they prefetch the rows
//! of the entries a few steps ahead (`_mm_prefetch`, a hint with no effect on results), and on
//! x86_64 CPUs with AVX they run a copy compiled for AVX (wider vectors, the very same
//! multiplications and additions in the same order and no FMA, so the results are bit-identical
//! to the baseline build). Gathering in cache-sized column panels or re-sorting row chunks by
//! column was measured and was slower. The kernels and the products are in `products.rs`, with
//! the module's only `unsafe` blocks; this file holds the matrix, its invariants, row selection
//! and column statistics.
//!
//! Values are `f32` (half the memory of `f64`; a million abstracts with ~100 terms each is
//! 800 MB already) and column ids are `u32` for the same reason.

mod products;

use ndarray::{Array1, Array2};
use rayon::prelude::*;

/// Errors returned by [`CsrMatrix::new`]: one variant per structural rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CsrError {
    /// `indptr` must have one more entry than there are rows (and at least one).
    #[error("indptr must have n_rows + 1 >= 1 entries, got {0}")]
    EmptyIndptr(usize),
    /// `indptr[0]` must be 0.
    #[error("indptr must start at 0, got {0}")]
    IndptrStart(usize),
    /// `indptr` must be non-decreasing.
    #[error("indptr must be non-decreasing, but indptr[{row}] > indptr[{row} + 1]")]
    IndptrNotMonotone {
        /// Row whose end lies before its start.
        row: usize,
    },
    /// The last `indptr` entry must equal the number of stored entries.
    #[error("the last indptr entry ({last}) must equal the number of stored entries ({nnz})")]
    IndptrEnd {
        /// Last entry of `indptr`.
        last: usize,
        /// Length of `indices`.
        nnz: usize,
    },
    /// `indices` and `data` must have the same length.
    #[error("indices and data must have the same length, got {indices} and {data}")]
    LengthMismatch {
        /// Length of `indices`.
        indices: usize,
        /// Length of `data`.
        data: usize,
    },
    /// Every column id must be smaller than `n_cols`.
    #[error("row {row} has column id {col}, but the matrix has only {n_cols} columns")]
    ColumnOutOfRange {
        /// Offending row.
        row: usize,
        /// Offending column id.
        col: u32,
        /// Number of columns of the matrix.
        n_cols: usize,
    },
    /// Column ids must be strictly increasing within a row (sorted, no duplicates).
    #[error("column ids of row {row} must be strictly increasing (sorted, no duplicates)")]
    ColumnsNotIncreasing {
        /// Offending row.
        row: usize,
    },
    /// Every stored value must be finite.
    #[error("stored value #{position} is not finite (NaN or infinite)")]
    NonFinite {
        /// Position of the value in `data`.
        position: usize,
    },
}

/// Compressed sparse row matrix of `f32`, documents x terms.
///
/// Row `i`'s entries are `indices[indptr[i]..indptr[i + 1]]` (strictly increasing column ids)
/// and the matching `data`. All invariants are checked once by [`CsrMatrix::new`], so the
/// kernels can rely on them.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    n_cols: usize,
    indptr: Array1<usize>,
    indices: Array1<u32>,
    data: Array1<f32>,
}

impl CsrMatrix {
    /// Builds a matrix with `n_cols` columns and `indptr.len() - 1` rows, validating every
    /// invariant: `indptr` starts at 0, is non-decreasing and ends at `indices.len()`;
    /// `indices` and `data` have equal length; column ids are `< n_cols` and strictly
    /// increasing within each row; values are finite.
    pub fn new(
        n_cols: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        data: Vec<f32>,
    ) -> Result<Self, CsrError> {
        if indptr.is_empty() {
            return Err(CsrError::EmptyIndptr(0));
        }
        if indptr[0] != 0 {
            return Err(CsrError::IndptrStart(indptr[0]));
        }
        if indices.len() != data.len() {
            return Err(CsrError::LengthMismatch {
                indices: indices.len(),
                data: data.len(),
            });
        }
        if let Some(row) = indptr.windows(2).position(|w| w[0] > w[1]) {
            return Err(CsrError::IndptrNotMonotone { row });
        }
        let last = indptr[indptr.len() - 1];
        if last != indices.len() {
            return Err(CsrError::IndptrEnd {
                last,
                nnz: indices.len(),
            });
        }
        for (row, w) in indptr.windows(2).enumerate() {
            let cols = &indices[w[0]..w[1]];
            if let Some(&col) = cols.iter().find(|&&c| c as usize >= n_cols) {
                return Err(CsrError::ColumnOutOfRange { row, col, n_cols });
            }
            if cols.windows(2).any(|p| p[0] >= p[1]) {
                return Err(CsrError::ColumnsNotIncreasing { row });
            }
        }
        if let Some(position) = data.iter().position(|v| !v.is_finite()) {
            return Err(CsrError::NonFinite { position });
        }
        Ok(Self {
            n_cols,
            indptr: Array1::from(indptr),
            indices: Array1::from(indices),
            data: Array1::from(data),
        })
    }

    /// Number of rows (documents).
    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of columns (terms).
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Column ids and values of row `i`.
    ///
    /// # Panics
    /// If `i >= n_rows()`, like slice indexing.
    pub fn row(&self, i: usize) -> (&[u32], &[f32]) {
        let (a, b) = (self.indptr()[i], self.indptr()[i + 1]);
        (&self.indices()[a..b], &self.data()[a..b])
    }

    /// Row pointer array (`n_rows + 1` entries).
    pub fn indptr(&self) -> &[usize] {
        self.indptr
            .as_slice()
            .expect("an owned Array1 is always contiguous")
    }

    /// Column ids of all stored entries, row after row.
    pub fn indices(&self) -> &[u32] {
        self.indices
            .as_slice()
            .expect("an owned Array1 is always contiguous")
    }

    /// Values of all stored entries, row after row.
    pub fn data(&self) -> &[f32] {
        self.data
            .as_slice()
            .expect("an owned Array1 is always contiguous")
    }

    /// Dense copy (`n_rows x n_cols`). Allocates `n_rows * n_cols` floats: only for small
    /// matrices.
    pub fn to_dense(&self) -> Array2<f32> {
        let mut out = Array2::zeros((self.n_rows(), self.n_cols));
        for (i, mut out_row) in out.outer_iter_mut().enumerate() {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                out_row[c as usize] = v;
            }
        }
        out
    }

    /// The rows `rows` (in that order, repeats allowed) as a new matrix with the same columns.
    ///
    /// # Panics
    /// If an index is `>= n_rows()`, like slice indexing.
    pub fn select_rows(&self, rows: &[usize]) -> CsrMatrix {
        let nnz: usize = rows
            .iter()
            .map(|&r| self.indptr()[r + 1] - self.indptr()[r])
            .sum();
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        let mut indices = Vec::with_capacity(nnz);
        let mut data = Vec::with_capacity(nnz);
        indptr.push(0);
        for &r in rows {
            let (cols, vals) = self.row(r);
            indices.extend_from_slice(cols);
            data.extend_from_slice(vals);
            indptr.push(indices.len());
        }
        CsrMatrix {
            n_cols: self.n_cols,
            indptr: Array1::from(indptr),
            indices: Array1::from(indices),
            data: Array1::from(data),
        }
    }

    /// Per-column mean and (population) variance in `f64`, implicit zeros included.
    ///
    /// One pass of sums and sums of squares in `f64` (TF-IDF values are small and
    /// non-negative, so `E[x^2] - E[x]^2` loses nothing that matters), over a fixed number of
    /// row ranges in parallel whose partial sums are added in order: the result does not
    /// depend on the number of threads.
    pub fn column_mean_var(&self) -> (Vec<f64>, Vec<f64>) {
        const PARTS: usize = 8;
        let m = self.n_cols;
        let n = self.n_rows();
        if n == 0 {
            return (vec![0.0; m], vec![0.0; m]);
        }
        let partials: Vec<(Vec<f64>, Vec<f64>)> = (0..PARTS)
            .into_par_iter()
            .map(|p| {
                let (a, b) = (
                    self.indptr()[p * n / PARTS],
                    self.indptr()[(p + 1) * n / PARTS],
                );
                let mut sum = vec![0f64; m];
                let mut sum_sq = vec![0f64; m];
                for (&c, &v) in self.indices()[a..b].iter().zip(&self.data()[a..b]) {
                    let v = f64::from(v);
                    sum[c as usize] += v;
                    sum_sq[c as usize] += v * v;
                }
                (sum, sum_sq)
            })
            .collect();
        let mut sum = vec![0f64; m];
        let mut sum_sq = vec![0f64; m];
        for (s, q) in &partials {
            sum.iter_mut().zip(s).for_each(|(t, v)| *t += v);
            sum_sq.iter_mut().zip(q).for_each(|(t, v)| *t += v);
        }
        let nf = n as f64;
        let mean: Vec<f64> = sum.iter().map(|s| s / nf).collect();
        let var = sum_sq
            .iter()
            .zip(&mean)
            .map(|(q, mu)| (q / nf - mu * mu).max(0.0))
            .collect();
        (mean, var)
    }

    /// Iterates over the rows' `(column ids, values)`.
    pub fn rows(&self) -> impl Iterator<Item = (&[u32], &[f32])> + '_ {
        (0..self.n_rows()).map(move |i| self.row(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
    use ndarray::array;

    #[test]
    fn new_checks_every_invariant() {
        let ok = CsrMatrix::new(3, vec![0, 2, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]);
        assert!(ok.is_ok());
        assert_eq!(
            CsrMatrix::new(3, vec![], vec![], vec![]),
            Err(CsrError::EmptyIndptr(0))
        );
        assert_eq!(
            CsrMatrix::new(3, vec![1, 1], vec![0], vec![1.0]),
            Err(CsrError::IndptrStart(1))
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 2, 1, 2], vec![0, 1], vec![1.0, 1.0]),
            Err(CsrError::IndptrNotMonotone { row: 1 })
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 1], vec![0, 1], vec![1.0, 1.0]),
            Err(CsrError::IndptrEnd { last: 1, nnz: 2 })
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 2], vec![0, 1], vec![1.0]),
            Err(CsrError::LengthMismatch {
                indices: 2,
                data: 1
            })
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 1, 2], vec![0, 3], vec![1.0, 1.0]),
            Err(CsrError::ColumnOutOfRange {
                row: 1,
                col: 3,
                n_cols: 3
            })
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 2], vec![1, 1], vec![1.0, 1.0]),
            Err(CsrError::ColumnsNotIncreasing { row: 0 })
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 2], vec![2, 1], vec![1.0, 1.0]),
            Err(CsrError::ColumnsNotIncreasing { row: 0 })
        );
        assert_eq!(
            CsrMatrix::new(3, vec![0, 2], vec![0, 1], vec![1.0, f32::NAN]),
            Err(CsrError::NonFinite { position: 1 })
        );
        // Zero rows is a valid (empty) matrix.
        let empty = CsrMatrix::new(4, vec![0], vec![], vec![]).unwrap();
        assert_eq!((empty.n_rows(), empty.n_cols(), empty.nnz()), (0, 4, 0));
    }

    #[test]
    fn accessors_dense_and_select() {
        let x = CsrMatrix::new(3, vec![0, 2, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
        assert_eq!((x.n_rows(), x.n_cols(), x.nnz()), (3, 3, 3));
        assert_eq!(x.row(0), (&[0u32, 2][..], &[1.0f32, 2.0][..]));
        assert_eq!(x.row(1), (&[][..], &[][..]));
        assert_eq!(x.indptr(), &[0, 2, 2, 3]);
        assert_eq!(x.indices(), &[0, 2, 1]);
        assert_eq!(x.data(), &[1.0, 2.0, 3.0]);
        let d = array![[1.0f32, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]];
        assert_eq!(x.to_dense(), d);
        assert_eq!(x.rows().count(), 3);

        let s = x.select_rows(&[2, 0, 2]);
        assert_eq!(
            s.to_dense(),
            array![[0.0f32, 3.0, 0.0], [1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
        );
        // The selection satisfies the invariants checked by `new`.
        let rebuilt = CsrMatrix::new(
            s.n_cols(),
            s.indptr().to_vec(),
            s.indices().to_vec(),
            s.data().to_vec(),
        )
        .unwrap();
        assert_eq!(rebuilt, s);
        assert_eq!(x.select_rows(&[]).n_rows(), 0);
    }

    #[test]
    fn column_mean_var_matches_hand_computation() {
        // Column 0: [1, 0, 0] -> mean 1/3, var (4/9 + 1/9 + 1/9) / 3 = 2/9.
        // Column 1: [0, 0, 3] -> mean 1, var (1 + 1 + 4) / 3 = 2.
        // Column 2: [2, 0, 0] -> mean 2/3, var (16/9 + 4/9 + 4/9) / 3 = 8/9.
        let x = CsrMatrix::new(3, vec![0, 2, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
        let (mean, var) = x.column_mean_var();
        for (a, b) in mean.iter().zip([1.0 / 3.0, 1.0, 2.0 / 3.0]) {
            assert_abs_diff_eq!(*a, b, epsilon = 1e-12);
        }
        for (a, b) in var.iter().zip([2.0 / 9.0, 2.0, 8.0 / 9.0]) {
            assert_abs_diff_eq!(*a, b, epsilon = 1e-12);
        }
    }
}
