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
//! to the baseline build). These are the module's only `unsafe` blocks. Gathering in cache-sized
//! column panels or re-sorting row chunks by column was measured and was slower.
//!
//! Values are `f32` (half the memory of `f64`; a million abstracts with ~100 terms each is
//! 800 MB already) and column ids are `u32` for the same reason.

use ndarray::{Array1, Array2, ArrayView2};
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

/// Adds `a * x` to `y` element-wise; written so that the compiler vectorises it.
#[inline(always)]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (yv, &xv) in y.iter_mut().zip(x) {
        *yv += a * xv;
    }
}

/// How many entries ahead the kernels prefetch the rows they will touch.
const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to start loading `row` into cache (no effect on results).
#[inline(always)]
fn prefetch_row(row: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // 16 f32 = one 64-byte cache line.
        for line in row.chunks(16) {
            // SAFETY: prefetching is a hint that never faults, the pointer comes from a live
            // slice, and SSE is part of the x86_64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr() as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// The CSR arrays, borrowed by the kernels.
struct Rows<'a> {
    indptr: &'a [usize],
    indices: &'a [u32],
    data: &'a [f32],
}

/// Kernel of [`CsrMatrix::dot_dense`]: rows `first..first + out.len() / l` of `X * rhs` into
/// `out` (row-major, zero on entry). Each output row is accumulated over the row's entries in
/// order; the rhs rows are prefetched a few entries ahead to hide their memory latency.
#[inline(always)]
fn dot_rows(x: &Rows, rhs: &[f32], l: usize, first: usize, out: &mut [f32]) {
    let last = first + out.len() / l;
    let end = x.indptr[last];
    for (k, out_row) in out.chunks_exact_mut(l).enumerate() {
        for e in x.indptr[first + k]..x.indptr[first + k + 1] {
            if e + PREFETCH_AHEAD < end {
                let pc = x.indices[e + PREFETCH_AHEAD] as usize;
                prefetch_row(&rhs[pc * l..(pc + 1) * l]);
            }
            let c = x.indices[e] as usize;
            axpy(x.data[e], &rhs[c * l..(c + 1) * l], out_row);
        }
    }
}

/// Kernel of [`CsrMatrix::t_dot_dense`]: columns `c0..c1` of `X^T * rhs` into `piece`
/// (row-major `(c1 - c0) x l`, zero on entry), scanning the documents in order.
#[inline(always)]
fn t_dot_block(x: &Rows, rhs: &[f32], l: usize, c0: usize, c1: usize, piece: &mut [f32]) {
    if c0 == c1 {
        return;
    }
    for (r, w) in x.indptr.windows(2).enumerate() {
        let cols = &x.indices[w[0]..w[1]];
        // Entries of this row that fall in [c0, c1).
        let start = cols.partition_point(|&c| (c as usize) < c0);
        let end = start + cols[start..].partition_point(|&c| (c as usize) < c1);
        if start == end {
            continue;
        }
        let rhs_row = &rhs[r * l..(r + 1) * l];
        for k in start..end {
            if k + PREFETCH_AHEAD < end {
                let pc = cols[k + PREFETCH_AHEAD] as usize - c0;
                prefetch_row(&piece[pc * l..(pc + 1) * l]);
            }
            let c = cols[k] as usize - c0;
            axpy(x.data[w[0] + k], rhs_row, &mut piece[c * l..(c + 1) * l]);
        }
    }
}

/// [`dot_rows`] compiled with AVX enabled (wider vectors, same operations: no FMA, so the
/// results are bit-identical to the baseline build).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn dot_rows_avx(x: &Rows, rhs: &[f32], l: usize, first: usize, out: &mut [f32]) {
    dot_rows(x, rhs, l, first, out)
}

/// [`t_dot_block`] compiled with AVX enabled (same operations, bit-identical results).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn t_dot_block_avx(x: &Rows, rhs: &[f32], l: usize, c0: usize, c1: usize, piece: &mut [f32]) {
    t_dot_block(x, rhs, l, c0, c1, piece)
}

/// Runs [`dot_rows`], with AVX when the CPU has it.
fn dispatch_dot_rows(x: &Rows, rhs: &[f32], l: usize, first: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has(crate::simd::Level::Avx) {
        // SAFETY: the CPU supports AVX, checked just above.
        return unsafe { dot_rows_avx(x, rhs, l, first, out) };
    }
    dot_rows(x, rhs, l, first, out)
}

/// Runs [`t_dot_block`], with AVX when the CPU has it.
fn dispatch_t_dot_block(x: &Rows, rhs: &[f32], l: usize, c0: usize, c1: usize, piece: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has(crate::simd::Level::Avx) {
        // SAFETY: the CPU supports AVX, checked just above.
        return unsafe { t_dot_block_avx(x, rhs, l, c0, c1, piece) };
    }
    t_dot_block(x, rhs, l, c0, c1, piece)
}

/// `out = x * rhs` (row-major, `x`'s rows by `l`), parallel over tasks of [`ROWS_PER_TASK`]
/// rows.
fn dot_into(x: &Rows, rhs: &[f32], l: usize, out: &mut [f32]) {
    if l == 0 {
        return;
    }
    out.par_chunks_mut(ROWS_PER_TASK * l)
        .enumerate()
        .for_each(|(chunk, block)| {
            block.fill(0.0);
            dispatch_dot_rows(x, rhs, l, chunk * ROWS_PER_TASK, block);
        });
}

/// `out += x^T * rhs` (`out` row-major, `n_cols` by `l`), the columns cut at `bounds` (see
/// [`CsrMatrix::column_blocks`]) into blocks filled in parallel.
fn t_dot_add(x: &Rows, rhs: &[f32], l: usize, bounds: &[usize], out: &mut [f32]) {
    let mut pieces: Vec<(usize, usize, &mut [f32])> = Vec::with_capacity(bounds.len());
    let mut rest = out;
    for w in bounds.windows(2) {
        let (piece, tail) = rest.split_at_mut((w[1] - w[0]) * l);
        pieces.push((w[0], w[1], piece));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(c0, c1, piece)| {
        dispatch_t_dot_block(x, rhs, l, c0, c1, piece);
    });
}

/// Rows per parallel task in [`CsrMatrix::dot_dense`]: large enough to amortise scheduling,
/// small enough to balance uneven rows. Does not influence the result.
const ROWS_PER_TASK: usize = 1024;

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

    /// `self (n x m) * rhs (m x l) -> n x l`, parallel over rows.
    ///
    /// Deterministic: each output row is accumulated over the row's entries in column order,
    /// whatever the number of threads.
    ///
    /// # Panics
    /// If `rhs.nrows() != n_cols()`.
    pub fn dot_dense(&self, rhs: ArrayView2<f32>) -> Array2<f32> {
        assert_eq!(
            rhs.nrows(),
            self.n_cols,
            "dot_dense: rhs has {} rows, the matrix has {} columns",
            rhs.nrows(),
            self.n_cols
        );
        let l = rhs.ncols();
        let mut out = Array2::<f32>::zeros((self.n_rows(), l));
        let rhs = rhs.as_standard_layout();
        let rhs = rhs.as_slice().expect("standard layout is contiguous");
        let out_slice = out.as_slice_mut().expect("a fresh Array2 is contiguous");
        dot_into(&self.kernel_rows(), rhs, l, out_slice);
        out
    }

    /// `self^T (m x n) * rhs (n x l) -> m x l`, without a transposed copy of the matrix.
    ///
    /// The output rows (matrix columns) are cut into one contiguous block per thread, each
    /// holding about the same number of stored entries; blocks are filled in parallel, each
    /// scanning all documents in order and using only its own columns (found by binary search in
    /// each row). One block per thread, because every block rescans the rows and more, smaller
    /// (cache-sized) blocks cost more in rescans than they save. Every output element is
    /// therefore accumulated in document order, so the result is bit-identical
    /// whatever the number of threads or blocks.
    ///
    /// The pipeline makes this product only inside [`Self::t_dot_dot_dense`]; on its own it is
    /// the reference that one is tested against.
    ///
    /// # Panics
    /// If `rhs.nrows() != n_rows()`.
    #[cfg(test)]
    pub fn t_dot_dense(&self, rhs: ArrayView2<f32>) -> Array2<f32> {
        assert_eq!(
            rhs.nrows(),
            self.n_rows(),
            "t_dot_dense: rhs has {} rows, the matrix has {} rows",
            rhs.nrows(),
            self.n_rows()
        );
        let l = rhs.ncols();
        let m = self.n_cols;
        let rhs = rhs.as_standard_layout();
        let rhs = rhs.as_slice().expect("standard layout is contiguous");
        let mut out = Array2::<f32>::zeros((m, l));
        if l == 0 || m == 0 || self.nnz() == 0 {
            return out;
        }
        let bounds = self.column_blocks(rayon::current_num_threads());
        let out_slice = out.as_slice_mut().expect("a fresh Array2 is contiguous");
        t_dot_add(&self.kernel_rows(), rhs, l, &bounds, out_slice);
        out
    }

    /// `self^T (self * rhs)` (`m x l`, for `rhs` `m x l`) without holding `self * rhs`
    /// (`n x l`) whole: for each block of `block_rows` rows in order, `Y = X_block * rhs` is made
    /// (as [`Self::dot_dense`] makes those rows), handed to `each_block`, then `X_block^T Y` is
    /// added in (as `t_dot_dense` adds those rows). Every output element is accumulated
    /// over the documents in order, as there, so the result is bit-identical to
    /// `t_dot_dense(dot_dense(rhs))`, whatever the block size and number of threads. One block
    /// of `Y` stays in cache between the two products instead of making a round trip through
    /// memory (tens of megabytes at 100k rows).
    ///
    /// # Panics
    /// If `rhs.nrows() != n_cols()` or `block_rows == 0`.
    pub fn t_dot_dot_dense(
        &self,
        rhs: ArrayView2<f32>,
        block_rows: usize,
        mut each_block: impl FnMut(ArrayView2<f32>),
    ) -> Array2<f32> {
        assert_eq!(
            rhs.nrows(),
            self.n_cols,
            "t_dot_dot_dense: rhs has {} rows, the matrix has {} columns",
            rhs.nrows(),
            self.n_cols
        );
        assert!(block_rows > 0, "t_dot_dot_dense: empty blocks");
        let (n, m, l) = (self.n_rows(), self.n_cols, rhs.ncols());
        let rhs = rhs.as_standard_layout();
        let rhs = rhs.as_slice().expect("standard layout is contiguous");
        let mut out = Array2::<f32>::zeros((m, l));
        let bounds = self.column_blocks(rayon::current_num_threads());
        let mut y = vec![0f32; block_rows.min(n) * l];
        for first in (0..n).step_by(block_rows) {
            let last = (first + block_rows).min(n);
            // The block's rows, numbered from 0 (entry offsets stay absolute).
            let rows = Rows {
                indptr: &self.indptr()[first..=last],
                indices: self.indices(),
                data: self.data(),
            };
            let y = &mut y[..(last - first) * l];
            dot_into(&rows, rhs, l, y);
            each_block(ArrayView2::from_shape((last - first, l), &*y).expect("block shape"));
            if l > 0 && m > 0 {
                let out = out.as_slice_mut().expect("a fresh Array2 is contiguous");
                t_dot_add(&rows, y, l, &bounds, out);
            }
        }
        out
    }

    /// All rows, as the kernels read them.
    fn kernel_rows(&self) -> Rows<'_> {
        Rows {
            indptr: self.indptr(),
            indices: self.indices(),
            data: self.data(),
        }
    }

    /// Column boundaries `0 = b_0 <= ... <= b_k = n_cols` of at most `n_blocks` contiguous
    /// blocks with about equal numbers of stored entries.
    fn column_blocks(&self, n_blocks: usize) -> Vec<usize> {
        let m = self.n_cols;
        let n_blocks = n_blocks.clamp(1, m.max(1));
        let mut counts = vec![0usize; m];
        for &c in self.indices() {
            counts[c as usize] += 1;
        }
        let nnz = self.nnz();
        let mut bounds = Vec::with_capacity(n_blocks + 1);
        bounds.push(0);
        let mut acc = 0usize;
        for (c, &count) in counts.iter().enumerate() {
            acc += count;
            // Close block b once it holds its share b * nnz / n_blocks of the entries.
            let b = bounds.len();
            if b < n_blocks && acc * n_blocks >= b * nnz {
                bounds.push(c + 1);
            }
        }
        bounds.push(m);
        bounds
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
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256Plus;

    /// A pseudo-random `n x m` matrix with about `density * m` entries per row, some empty
    /// rows (every 7th) and an empty last column.
    fn random_csr(n: usize, m: usize, density: f64, seed: u64) -> CsrMatrix {
        let mut rng = Xoshiro256Plus::seed_from_u64(seed);
        let (mut indptr, mut indices, mut data) = (vec![0], vec![], vec![]);
        for i in 0..n {
            if i % 7 != 3 {
                for j in 0..m.saturating_sub(1) {
                    if rng.gen::<f64>() < density {
                        indices.push(j as u32);
                        data.push(rng.gen_range(-1.0f32..2.0));
                    }
                }
            }
            indptr.push(indices.len());
        }
        CsrMatrix::new(m, indptr, indices, data).unwrap()
    }

    fn random_dense(n: usize, l: usize, seed: u64) -> Array2<f32> {
        let mut rng = Xoshiro256Plus::seed_from_u64(seed);
        Array2::from_shape_simple_fn((n, l), || rng.gen_range(-1.0f32..1.0))
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

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

    #[test]
    fn dot_dense_matches_dense_product() {
        let x = random_csr(2500, 61, 0.2, 1);
        let rhs = random_dense(61, 7, 2);
        let got = x.dot_dense(rhs.view());
        let want = x.to_dense().dot(&rhs);
        assert_eq!(got.dim(), (2500, 7));
        for (a, b) in got.iter().zip(want.iter()) {
            assert_abs_diff_eq!(*a, *b, epsilon = 1e-4);
        }
        // A non-standard-layout rhs gives the same result.
        let rhs_t = rhs.t().to_owned();
        assert_eq!(x.dot_dense(rhs_t.t()), got);
        // Degenerate shapes.
        assert_eq!(x.dot_dense(Array2::zeros((61, 0)).view()).dim(), (2500, 0));
        let empty = CsrMatrix::new(61, vec![0], vec![], vec![]).unwrap();
        assert_eq!(empty.dot_dense(rhs.view()).dim(), (0, 7));
    }

    #[test]
    fn t_dot_dense_matches_dense_product_and_row_order_sum() {
        let x = random_csr(2500, 61, 0.2, 3);
        let rhs = random_dense(2500, 5, 4);
        let got = x.t_dot_dense(rhs.view());
        let want = x.to_dense().t().dot(&rhs);
        assert_eq!(got.dim(), (61, 5));
        for (a, b) in got.iter().zip(want.iter()) {
            assert_abs_diff_eq!(*a, *b, epsilon = 1e-3);
        }
        // Empty last column gives a zero output row.
        assert!(got.row(60).iter().all(|&v| v == 0.0));
        // Bit-identical to the naive loop that accumulates in document order.
        let mut naive = Array2::<f32>::zeros((61, 5));
        for r in 0..x.n_rows() {
            let (cols, vals) = x.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                for j in 0..5 {
                    naive[[c as usize, j]] += v * rhs[[r, j]];
                }
            }
        }
        assert_eq!(got, naive);
    }

    #[test]
    fn the_fused_product_is_the_two_products_bit_for_bit() {
        let x = random_csr(5000, 300, 0.05, 8);
        let z = random_dense(300, 9, 9);
        let y = x.dot_dense(z.view());
        let want = x.t_dot_dense(y.view());
        for (block, threads) in [(1000, 2), (4096, 1), (5000, 3), (7, 2), (100_000, 2)] {
            let mut seen = Vec::new();
            let got = pool(threads)
                .install(|| x.t_dot_dot_dense(z.view(), block, |b| seen.extend(b.iter().copied())));
            assert_eq!(got, want, "block {block}, {threads} threads");
            // Every block of `X Z`, in order.
            assert_eq!(seen.as_slice(), y.as_slice().unwrap(), "block {block}");
        }
        // An empty matrix gives a zero product and no block.
        let empty = CsrMatrix::new(300, vec![0], vec![], vec![]).unwrap();
        let got = empty.t_dot_dot_dense(z.view(), 64, |_| panic!("no rows, no block"));
        assert_eq!(got, Array2::<f32>::zeros((300, 9)));
    }

    #[test]
    fn products_do_not_depend_on_thread_count() {
        let x = random_csr(5000, 300, 0.05, 5);
        let z = random_dense(300, 9, 6);
        let y = random_dense(5000, 9, 7);
        let runs: Vec<(Array2<f32>, Array2<f32>)> = [1, 2, 3]
            .iter()
            .map(|&t| pool(t).install(|| (x.dot_dense(z.view()), x.t_dot_dense(y.view()))))
            .collect();
        for r in &runs[1..] {
            assert_eq!(r.0, runs[0].0);
            assert_eq!(r.1, runs[0].1);
        }
    }

    #[test]
    fn dispatched_kernels_match_baseline_bitwise() {
        // On a CPU with AVX the dispatch runs the AVX build; it must equal the baseline build
        // bit for bit (odd widths exercise the vector tails).
        let x = random_csr(700, 40, 0.3, 9);
        let rows = Rows {
            indptr: x.indptr(),
            indices: x.indices(),
            data: x.data(),
        };
        for l in [1, 13, 110] {
            let rhs = random_dense(40, l, 10);
            let rhs = rhs.as_slice().unwrap();
            let (mut a, mut b) = (vec![0f32; 700 * l], vec![0f32; 700 * l]);
            dot_rows(&rows, rhs, l, 0, &mut a);
            dispatch_dot_rows(&rows, rhs, l, 0, &mut b);
            assert_eq!(a, b);
            let y = random_dense(700, l, 11);
            let y = y.as_slice().unwrap();
            let (mut a, mut b) = (vec![0f32; 30 * l], vec![0f32; 30 * l]);
            t_dot_block(&rows, y, l, 5, 35, &mut a);
            dispatch_t_dot_block(&rows, y, l, 5, 35, &mut b);
            assert_eq!(a, b);
            assert!(a.iter().any(|&v| v != 0.0));
        }
    }

    #[test]
    fn column_blocks_cover_all_columns_in_order() {
        let x = random_csr(300, 50, 0.3, 8);
        for n_blocks in [1, 2, 3, 8, 100] {
            let b = x.column_blocks(n_blocks);
            assert_eq!(b[0], 0);
            assert_eq!(*b.last().unwrap(), 50);
            assert!(b.windows(2).all(|w| w[0] <= w[1]));
            assert!(b.len() <= n_blocks.min(50) + 1);
        }
    }
}
