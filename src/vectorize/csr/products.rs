//! The matrix's products with thin dense matrices, `X D`, `X^T D` and the fused `X^T (X D)`,
//! and the kernels they run. The parent module says why they are hand-written and how they stay
//! bit-identical whatever the number of threads and the CPU. Here are the module's only
//! `unsafe` blocks: the prefetch hint and the call of the AVX build once the CPU is known to
//! have AVX (`crate::simd`).

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

use super::CsrMatrix;

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
    // 16 f32 = one 64-byte cache line.
    for line in row.chunks(16) {
        crate::simd::prefetch(line.as_ptr());
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
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
