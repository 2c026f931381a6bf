//! The encoder's dense products `x W (+ bias)`: on CPUs with AVX-512 or AVX2 and FMA, a kernel
//! of our own over weights packed once when the model loads; elsewhere candle's matmul.
//!
//! Why: these products are nearly all of the transformer's time (three quarters of it on short
//! texts). candle's matmul (the gemm crate) uses AVX2 at most on a stable compiler (its AVX-512
//! kernels sit behind its `nightly` feature), packs the weights again for every product and
//! zero-fills every output before writing it. Here the weights are laid out once in panels of
//! two registers' width (32 columns with AVX-512, 16 with AVX2), each output tile is held in
//! registers (12 rows by 32 columns in 24 of AVX-512's 32; 6 rows by 16 columns in 12 of AVX2's
//! 16), and the output is written once. The same tiles read the attention's small products
//! where their operands lie, rows a stride apart ([`InRows`]), with nothing packed.
//!
//! Every output value is one chain of fused multiply-adds over `k` in order, started at its
//! column's bias (or 0), whatever its row's place in the batch: so a text's vector does not
//! depend on the batch it ran in (the encoder's test checks the bits), nor on which of the two
//! kernels ran.

use super::int8::{self, Quantized};
#[cfg(target_arch = "x86_64")]
use super::storage::rows_at;
use super::storage::values_of;
use crate::simd::{self, Level};
use candle_core::{Result, Tensor};

/// Bytes of packed weights a group of panels holds (see [`Packed::tiles`]).
const GROUP_BYTES: usize = 256 * 1024;

/// The AVX-512 tile: 12 rows by one panel of 32 columns (two registers), held in 24 of the
/// 32 registers.
const AVX512_TILE: Tile = Tile {
    rows: 12,
    panel: 32,
};
/// The AVX2 tile: 6 rows by one panel of 16 columns (two registers), held in 12 of the 16.
const AVX2_TILE: Tile = Tile { rows: 6, panel: 16 };
/// The most rows any kernel's tile has: [`Packed::product`] gathers this many row slices.
const MAX_TILE_ROWS: usize = 12;
const _: () = assert!(AVX512_TILE.rows <= MAX_TILE_ROWS && AVX2_TILE.rows <= MAX_TILE_ROWS);

/// A kernel's tile shape: the rows of a packed block and the columns of a panel. The kernels'
/// bodies hold exactly this many accumulators and read exactly this many values, so the shape
/// is written once, here.
#[derive(Debug, Clone, Copy)]
struct Tile {
    rows: usize,
    panel: usize,
}

/// One output tile's kernel (see [`tile512`]).
///
/// # Safety
/// A caller guarantees what [`tile512`] lists, for its kernel's [`Tile`], and that the CPU has
/// the kernel's instructions.
#[cfg(target_arch = "x86_64")]
type TileFn = unsafe fn(&TileArgs);

/// What a tile reads and writes: pointers into the operands and the output.
#[cfg(target_arch = "x86_64")]
struct TileArgs {
    /// The left-hand side: a packed block (`k` columns of the tile's rows, one column after
    /// the other), or `rows` rows `lda` apart read in place.
    a: *const f32,
    lda: usize,
    k: usize,
    /// The panel: `k` rows of the kernel's width, `ldb` apart.
    b: *const f32,
    ldb: usize,
    /// The panel's columns' biases (the kernel's width of them).
    bias: *const f32,
    /// The output: `rows` rows `ldc` apart, of which the first `cols` columns are written.
    c: *mut f32,
    ldc: usize,
    rows: usize,
    cols: usize,
}

/// A kernel: its tile's shape and the tile function, for a packed left-hand side and for one
/// read in place.
#[derive(Clone, Copy)]
struct Kernel {
    tile: Tile,
    #[cfg(target_arch = "x86_64")]
    packed: TileFn,
    #[cfg(target_arch = "x86_64")]
    in_rows: TileFn,
}

impl Kernel {
    /// The kernel for `level`, if there is one (candle's matmul runs otherwise).
    fn of(level: Level) -> Option<Kernel> {
        match level {
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => Some(Kernel {
                tile: AVX512_TILE,
                packed: tile512::<true>,
                in_rows: tile512::<false>,
            }),
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => Some(Kernel {
                tile: AVX2_TILE,
                packed: tile256::<true>,
                in_rows: tile256::<false>,
            }),
            _ => None,
        }
    }
}

/// A dense layer's weight `(k, m)` and optional bias `(m)`: packed for our kernel, or
/// as candle tensors for its matmul (one or the other, never both).
pub enum Dense {
    Packed(Packed),
    /// In int8 ([`super::int8`], `[embed] precision = "int8"` on a CPU with VNNI).
    Int8(Quantized),
    Candle {
        /// `(k, m)`, contiguous: the right-hand side.
        weight: Tensor,
        bias: Option<Tensor>,
    },
}

/// `W` in panels of the kernel's width `w` (the layer's only copy of it): panel `j` holds rows
/// `0..k` of columns `w j .. w j + w`, one row after the other, zero beyond `m`.
pub struct Packed {
    kernel: Kernel,
    k: usize,
    m: usize,
    panels: Vec<f32>,
    /// The bias, zero-padded to whole panels (zeros when the layer adds none here).
    bias: Vec<f32>,
}

impl Dense {
    /// `weight` is `(m, k)`, as checkpoints store a linear layer's; `bias`, when given, is
    /// added here (leave it out when a later fused pass adds it); with `int8`, in int8 on that
    /// kernel.
    pub fn new(weight: &Tensor, bias: Option<Tensor>, int8: Option<int8::Kernel>) -> Result<Dense> {
        let weight = weight.t()?.contiguous()?;
        if let Some(kernel) = int8 {
            let (k, m) = weight.dims2()?;
            let b = match &bias {
                Some(b) => b.to_vec1::<f32>()?,
                None => vec![0.0; m],
            };
            let w = weight.flatten_all()?.to_vec1::<f32>()?;
            return Ok(Dense::Int8(Quantized::new(kernel, &w, &b, k, m)));
        }
        let Some(kernel) = Kernel::of(simd::level()) else {
            return Ok(Dense::Candle { weight, bias });
        };
        let (k, m) = weight.dims2()?;
        let b = match &bias {
            Some(b) => b.to_vec1::<f32>()?,
            None => vec![0.0; m],
        };
        let w = weight.flatten_all()?.to_vec1::<f32>()?;
        Ok(Dense::Packed(Packed::new(kernel, &w, &b, k, m)))
    }

    /// `x W + bias` for `x` of shape `(n, k)`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let ours = |want: usize, m: usize, product: &dyn Fn(&[f32], usize) -> Vec<f32>| {
            let (n, k) = x.dims2()?;
            if k != want {
                candle_core::bail!("dense product: {k} inputs for a {want}-row weight");
            }
            let x = x.contiguous()?;
            let (storage, layout) = x.storage_and_layout();
            let values = match &*storage {
                candle_core::Storage::Cpu(s) => values_of(s, layout)?,
                _ => candle_core::bail!("dense product: not on the CPU"),
            };
            Tensor::from_vec(product(values, n), (n, m), x.device())
        };
        match self {
            Dense::Packed(p) => ours(p.k, p.m, &|v, n| p.product(v, n)),
            Dense::Int8(q) => ours(q.k(), q.m(), &|v, n| q.product(v, n)),
            Dense::Candle { weight, bias } => {
                let y = x.matmul(weight)?;
                match bias {
                    Some(b) => y.broadcast_add(b),
                    None => Ok(y),
                }
            }
        }
    }
}

/// Products whose operands are read where they lie, rows a stride apart, with no bias: the
/// attention's (`attention.rs`), formed during a pass, too small to be worth packing. Each output
/// is one chain of fused multiply-adds over `k` in order, as [`Packed`]'s.
#[derive(Clone, Copy)]
pub(super) struct InRows(Kernel);

/// Zeros for the bias of a product without one (two AVX-512 registers' worth).
static NO_BIAS: [f32; AVX512_TILE.panel] = [0.0; AVX512_TILE.panel];

impl InRows {
    /// The kernel of this CPU's level; `None` where no kernel of ours runs.
    pub(super) fn new() -> Option<InRows> {
        Kernel::of(simd::level()).map(InRows)
    }

    /// The columns of a panel: the right-hand side is read this many columns at a time.
    pub(super) fn width(&self) -> usize {
        self.0.tile.panel
    }

    /// The rows of a tile: a product of at most this many rows is one pass over its panels.
    pub(super) fn block(&self) -> usize {
        self.0.tile.rows
    }

    /// `c = a b`: `a` is `n` rows of `k` values, `lda` apart; `b` is `k` rows, `ldb` apart,
    /// of which the first `m` columns count, read in whole panels of [`Self::width`] columns
    /// (so `b` must hold them: the panels past `m` are read, not used); `c` gets `n` rows of
    /// `m` values, `ldc` apart. Panics when a slice is too short for that.
    pub(super) fn product(
        &self,
        (a, lda): (&[f32], usize),
        (b, ldb): (&[f32], usize),
        (c, ldc): (&mut [f32], usize),
        n: usize,
        k: usize,
        m: usize,
    ) {
        let Tile { rows, panel } = self.0.tile;
        if n == 0 || m == 0 {
            return;
        }
        let panels = m.div_ceil(panel);
        assert!(
            k > 0 && a.len() >= (n - 1) * lda + k,
            "left-hand side too short"
        );
        assert!(
            b.len() >= (k - 1) * ldb + panels * panel,
            "right-hand side too short"
        );
        assert!(c.len() >= (n - 1) * ldc + m, "output too short");
        #[cfg(target_arch = "x86_64")]
        for first in (0..n).step_by(rows) {
            let live = (n - first).min(rows);
            for j in 0..panels {
                let args = TileArgs {
                    a: a[first * lda..].as_ptr(),
                    lda,
                    k,
                    b: b[j * panel..].as_ptr(),
                    ldb,
                    bias: NO_BIAS.as_ptr(),
                    c: c[first * ldc + j * panel..].as_mut_ptr(),
                    ldc,
                    rows: live,
                    cols: (m - j * panel).min(panel),
                };
                // SAFETY: the asserts above: rows `first..first + live` of `a` hold `k`
                // values each, `b` holds `k` rows of panel `j`'s `panel` values, and `c`
                // has room for `live` rows of `cols` values; the bias holds `panel` zeros;
                // the kernel came from `Kernel::of`, for instructions this CPU runs.
                unsafe { (self.0.in_rows)(&args) };
            }
        }
    }
}

impl Packed {
    fn new(kernel: Kernel, w: &[f32], bias: &[f32], k: usize, m: usize) -> Packed {
        let width = kernel.tile.panel;
        let count = m.div_ceil(width);
        let mut panels = vec![0.0; count * k * width];
        for (j, panel) in panels.chunks_exact_mut(k * width).enumerate() {
            let cols = (m - j * width).min(width);
            for (p, row) in panel.chunks_exact_mut(width).enumerate() {
                row[..cols].copy_from_slice(&w[p * m + j * width..][..cols]);
            }
        }
        let mut padded = vec![0.0; count * width];
        padded[..m].copy_from_slice(bias);
        Packed {
            kernel,
            k,
            m,
            panels,
            bias: padded,
        }
    }

    /// `x W + bias` for `x`, `n` rows of `k` values one after the other.
    fn product(&self, x: &[f32], n: usize) -> Vec<f32> {
        let (k, tile_rows) = (self.k, self.kernel.tile.rows);
        assert_eq!(x.len(), n * k);
        // The rows in blocks of the tile's rows, each block column after column (zero rows pad
        // the last), so that a tile reads its left-hand side from one pointer.
        let blocks = n.div_ceil(tile_rows);
        let zeros = vec![0.0; k];
        let mut a = Vec::<f32>::with_capacity(blocks * k * tile_rows);
        let spare = &mut a.spare_capacity_mut()[..blocks * k * tile_rows];
        for (b, block) in spare.chunks_exact_mut(k * tile_rows).enumerate() {
            // The block's rows (the first `tile_rows` of `MAX_TILE_ROWS`: `zip` stops there).
            let rows: [&[f32]; MAX_TILE_ROWS] = std::array::from_fn(|r| match b * tile_rows + r {
                i if i < n => &x[i * k..][..k],
                _ => &zeros[..],
            });
            for (p, column) in block.chunks_exact_mut(tile_rows).enumerate() {
                for (value, row) in column.iter_mut().zip(&rows) {
                    value.write(row[p]);
                }
            }
        }
        // SAFETY: the loop above wrote every value of the first `blocks * k * tile_rows`.
        unsafe { a.set_len(blocks * k * tile_rows) };
        let mut out = Vec::<f32>::with_capacity(n * self.m);
        // SAFETY: `a` holds `blocks` packed blocks of `k` columns of the tile's rows and `out`
        // has room for `n * m` values, as `tiles` requires; the kernel came from `Kernel::of`,
        // for instructions this CPU runs. The tiles write all `n * m` values before the length
        // is set.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            self.tiles(&a, n, out.as_mut_ptr());
            out.set_len(n * self.m);
        }
        out
    }

    /// The tiles, a group of panels at a time (the group's weights stay in the core's cache
    /// while every block of rows passes over them).
    ///
    /// # Safety
    /// `a` is `n.div_ceil(rows)` packed blocks of `k * rows` values (`rows` the kernel's tile
    /// rows), `out` is valid for writing `n * m` values, and the CPU has the kernel's
    /// instructions.
    #[cfg(target_arch = "x86_64")]
    unsafe fn tiles(&self, a: &[f32], n: usize, out: *mut f32) {
        let (k, m) = (self.k, self.m);
        let Kernel {
            tile: Tile { rows, panel },
            packed,
            ..
        } = self.kernel;
        let panels = m.div_ceil(panel);
        let group = (GROUP_BYTES / (k * panel * 4)).max(1);
        for first in (0..panels).step_by(group) {
            for (b, block) in a.chunks_exact(k * rows).enumerate() {
                let live = (n - b * rows).min(rows);
                for j in first..(first + group).min(panels) {
                    // SAFETY: the block holds `k * rows` values; panel `j` is `k * panel`
                    // values of `self.panels` and its bias `panel` values of the padded bias;
                    // the tile writes `live <= rows` rows of at most `panel` columns, all
                    // within the `n * m` values of `out` (`live` stops at row `n`, the columns
                    // at `m`); the CPU has the kernel's instructions (the caller's promise).
                    unsafe {
                        packed(&TileArgs {
                            a: block.as_ptr(),
                            lda: 0,
                            k,
                            b: self.panels.as_ptr().add(j * k * panel),
                            ldb: panel,
                            bias: self.bias.as_ptr().add(j * panel),
                            c: out.add(b * rows * m + j * panel),
                            ldc: m,
                            rows: live,
                            cols: (m - j * panel).min(panel),
                        });
                    }
                }
            }
        }
    }
}

/// The left-hand side's value of tile row `r` at `p`: from a packed block of `R` rows, or
/// from row `r`'s own pointer.
///
/// # Safety
/// As the tile's: `p < k`, and `rows[r]` (in rows) or `a` (packed) readable there.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn left<const PACKED: bool, const R: usize>(
    a: *const f32,
    rows: &[*const f32; R],
    r: usize,
    p: usize,
) -> *const f32 {
    // SAFETY: the caller's promise.
    unsafe {
        if PACKED {
            a.add(p * R + r)
        } else {
            rows[r].add(p)
        }
    }
}

/// One AVX-512 output tile: [`AVX512_TILE`]'s 12 rows (`k` values of each, packed or in
/// rows) times one panel of its 32 columns, plus the bias, written to the first `rows` rows
/// (`ldc` apart) of `c`, their first `cols` columns.
///
/// # Safety
/// - The CPU has AVX-512F.
/// - Packed, `a` is readable for `k * 12` values; in rows, for `k` values at each of `rows`
///   rows `lda` apart. `b` is readable for 32 values at each of `k` rows `ldb` apart, `bias`
///   for 32.
/// - `1 <= rows <= 12`, `cols <= 32`, and `c` is writable for `cols` values at each of
///   `rows` rows `ldc` apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tile512<const PACKED: bool>(t: &TileArgs) {
    use std::arch::x86_64::*;
    const R: usize = AVX512_TILE.rows;
    let rows: [*const f32; R] = if PACKED {
        [t.a; R]
    } else {
        rows_at(t.a, t.lda, t.rows)
    };
    // SAFETY: every read is within the lengths the caller guarantees (bias 0..32, row p of
    // the panel and column p of the block, or of each live row, for p < k), and the masked
    // stores write the first `cols` columns of the first `rows` rows only.
    unsafe {
        let b0 = _mm512_loadu_ps(t.bias);
        let b1 = _mm512_loadu_ps(t.bias.add(16));
        let mut acc = [[b0, b1]; R];
        for p in 0..t.k {
            let w0 = _mm512_loadu_ps(t.b.add(p * t.ldb));
            let w1 = _mm512_loadu_ps(t.b.add(p * t.ldb + 16));
            for (r, acc) in acc.iter_mut().enumerate() {
                let v = _mm512_set1_ps(*left::<PACKED, R>(t.a, &rows, r, p));
                acc[0] = _mm512_fmadd_ps(v, w0, acc[0]);
                acc[1] = _mm512_fmadd_ps(v, w1, acc[1]);
            }
        }
        let (low, high) = super::math::tail_masks(t.cols);
        for (r, acc) in acc.iter().enumerate().take(t.rows) {
            let row = t.c.add(r * t.ldc);
            _mm512_mask_storeu_ps(row, low, acc[0]);
            _mm512_mask_storeu_ps(row.add(16), high, acc[1]);
        }
    }
}

/// One AVX2 output tile: as [`tile512`], with [`AVX2_TILE`]'s 6 rows and panels of 16
/// columns.
///
/// # Safety
/// - The CPU has AVX2 and FMA.
/// - As [`tile512`], with 6 rows and 16 columns.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile256<const PACKED: bool>(t: &TileArgs) {
    use std::arch::x86_64::*;
    const R: usize = AVX2_TILE.rows;
    const W: usize = AVX2_TILE.panel;
    let rows: [*const f32; R] = if PACKED {
        [t.a; R]
    } else {
        rows_at(t.a, t.lda, t.rows)
    };
    // SAFETY: every read is within the lengths the caller guarantees (bias 0..16, row p of
    // the panel and column p of the block, or of each live row, for p < k); a partial row
    // goes through a local buffer, so only the first `cols` columns of the first `rows` rows
    // are written.
    unsafe {
        let b0 = _mm256_loadu_ps(t.bias);
        let b1 = _mm256_loadu_ps(t.bias.add(8));
        let mut acc = [[b0, b1]; R];
        for p in 0..t.k {
            let w0 = _mm256_loadu_ps(t.b.add(p * t.ldb));
            let w1 = _mm256_loadu_ps(t.b.add(p * t.ldb + 8));
            for (r, acc) in acc.iter_mut().enumerate() {
                let v = _mm256_broadcast_ss(&*left::<PACKED, R>(t.a, &rows, r, p));
                acc[0] = _mm256_fmadd_ps(v, w0, acc[0]);
                acc[1] = _mm256_fmadd_ps(v, w1, acc[1]);
            }
        }
        for (r, acc) in acc.iter().enumerate().take(t.rows) {
            let row = t.c.add(r * t.ldc);
            if t.cols == W {
                _mm256_storeu_ps(row, acc[0]);
                _mm256_storeu_ps(row.add(8), acc[1]);
            } else {
                let mut part = [0.0f32; W];
                _mm256_storeu_ps(part.as_mut_ptr(), acc[0]);
                _mm256_storeu_ps(part.as_mut_ptr().add(8), acc[1]);
                std::ptr::copy_nonoverlapping(part.as_ptr(), row, t.cols);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels this CPU runs (with `None`, candle's matmul, always).
    fn kernels() -> Vec<Option<Kernel>> {
        let mut v = vec![None];
        for level in [Level::Avx2, Level::Avx512] {
            if simd::cpu() >= level {
                v.push(Kernel::of(level));
            } else {
                eprintln!("not on this CPU: the {level:?} kernel");
            }
        }
        v
    }

    /// `x W + b` by `kernel` (candle's matmul for `None`), `x` of `n` rows, `w` of `m` rows.
    fn product(kernel: Option<Kernel>, x: &[f32], w: &[f32], b: &[f32], n: usize) -> Vec<f32> {
        let (m, k) = (b.len(), x.len() / n);
        let device = candle_core::Device::Cpu;
        let weight = Tensor::from_vec(w.to_vec(), (m, k), &device).unwrap();
        let dense = match kernel {
            Some(kernel) => {
                let wt = weight.t().unwrap().contiguous().unwrap();
                let wt = wt.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                Dense::Packed(Packed::new(kernel, &wt, b, k, m))
            }
            None => Dense::Candle {
                weight: weight.t().unwrap().contiguous().unwrap(),
                bias: Some(Tensor::from_vec(b.to_vec(), m, &device).unwrap()),
            },
        };
        let x = Tensor::from_vec(x.to_vec(), (n, k), &device).unwrap();
        dense
            .forward(&x)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap()
    }

    /// Every output of every kernel against a plain `f64` product, whatever the rows' and
    /// columns' remainders; and our kernels give the same bits as each other.
    #[test]
    fn products_match_a_plain_product() {
        for (n, k, m) in [
            (1, 3, 5),
            (13, 7, 32),
            (25, 16, 70),
            (12, 384, 96),
            (7, 9, 21),
        ] {
            let value = |i: usize, s: usize| ((i * s % 97) as f32 - 48.0) / 31.0;
            let x: Vec<f32> = (0..n * k).map(|i| value(i, 7)).collect();
            let w: Vec<f32> = (0..m * k).map(|i| value(i, 11)).collect();
            let b: Vec<f32> = (0..m).map(|i| value(i, 5)).collect();
            let mut ours: Vec<Vec<f32>> = Vec::new();
            for kernel in kernels() {
                let y = product(kernel, &x, &w, &b, n);
                assert_eq!(y.len(), n * m);
                for i in 0..n {
                    for j in 0..m {
                        let exact: f64 = b[j] as f64
                            + (0..k)
                                .map(|p| x[i * k + p] as f64 * w[j * k + p] as f64)
                                .sum::<f64>();
                        let got = y[i * m + j] as f64;
                        assert!(
                            (got - exact).abs() <= 1e-4 * (1.0 + exact.abs()),
                            "({n}, {k}, {m}) at ({i}, {j}): {got} against {exact}"
                        );
                    }
                }
                if kernel.is_some() {
                    ours.push(y);
                }
            }
            for y in &ours[1..] {
                assert!(y == &ours[0], "({n}, {k}, {m}): the kernels differ in bits");
            }
        }
    }

    /// A row's values do not depend on the other rows in the product: the same bits with our
    /// kernels; with candle's matmul, within rounding.
    #[test]
    fn a_row_gives_the_same_bits_alone_and_in_a_batch() {
        let (n, k, m) = (29, 40, 48);
        let x: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let w: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.11).cos()).collect();
        let b = vec![0.0; m];
        for kernel in kernels() {
            let all = product(kernel, &x, &w, &b, n);
            for i in [0, 5, 6, 11, 12, 28] {
                let one = product(kernel, &x[i * k..][..k], &w, &b, 1);
                let row = &all[i * m..][..m];
                if kernel.is_some() {
                    assert!(one == row, "row {i}");
                } else {
                    for (a, b) in one.iter().zip(row) {
                        assert!((a - b).abs() <= 1e-6 * (1.0 + b.abs()), "row {i}: {a}, {b}");
                    }
                }
            }
        }
    }
}
