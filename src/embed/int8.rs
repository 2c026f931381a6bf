//! The encoder's dense products in int8 (`[embed] precision = "int8"`), on CPUs with VNNI:
//! weights quantized per output column once when the model loads, each product's input
//! quantized per row, the products summed in i32 and scaled back to f32.
//!
//! Why: the dense products are nearly all of the transformer's time, and the f32 kernels
//! ([`super::dense`]) run near what f32 fused multiply-adds can do on two cores. VNNI's
//! `vpdpbusd` does four 8-bit multiply-adds where FMA does one f32 one. Softmax, GELU, the
//! layer norms and the pooling stay in f32 (`bert.rs`), and so do the attention's own
//! products, which are small beside these.
//!
//! How: `vpdpbusd` multiplies unsigned bytes by signed ones: a row's values go in as bytes
//! `a` over the row's own range (`v ≈ s a + low`), a weight as `q` in −127..127 times its
//! column's scale, and `low Σ q` of the column is added after. The tiles are those of
//! the f32 kernels (12 rows by 32 columns with AVX-512, 6 by 16 with AVX-VNNI's 256 bits), over
//! groups of 4 values of `k`, the quantized rows read as they were written, row after row (no
//! packing); each output is `s_row s_column Σ a q + low_row s_column Σ q + bias`. The i32 sums are exact, and a row's scale is its own, so a text's vector does not
//! depend on its batch, and both kernels give the same bits.

#[cfg(target_arch = "x86_64")]
use super::storage::rows_at;
use crate::simd::{self, Level};

/// Bytes of packed weights a group of panels holds (as the f32 kernels').
const GROUP_BYTES: usize = 256 * 1024;

/// A kernel's tile: rows of a block and columns of a panel.
#[derive(Debug, Clone, Copy)]
struct Tile {
    rows: usize,
    panel: usize,
}

const VNNI512_TILE: Tile = Tile {
    rows: 12,
    panel: 32,
};
const VNNI256_TILE: Tile = Tile { rows: 6, panel: 16 };
const MAX_TILE_ROWS: usize = 12;
const _: () = assert!(VNNI512_TILE.rows <= MAX_TILE_ROWS && VNNI256_TILE.rows <= MAX_TILE_ROWS);

/// One output tile's kernel (see [`tile512`]).
///
/// # Safety
/// A caller guarantees what [`tile512`] lists, for its kernel's [`Tile`], and that the CPU has
/// the kernel's instructions.
#[cfg(target_arch = "x86_64")]
type TileFn = unsafe fn(&TileArgs);

/// What a tile reads and writes (pointers into the packed operands and the output).
#[cfg(target_arch = "x86_64")]
struct TileArgs {
    /// The block's first row: `rows` rows of `k4` groups of 4 bytes, `lda` bytes apart.
    a: *const u8,
    lda: usize,
    k4: usize,
    /// The block's rows' scales and lowest values (`rows` values each).
    row_scale: *const f32,
    row_low: *const f32,
    /// The panel: `k4` groups of `panel` × 4 bytes.
    panel: *const i8,
    /// The panel's columns' scales, sums and biases (`panel` values each).
    scale: *const f32,
    column_sum: *const f32,
    bias: *const f32,
    c: *mut f32,
    ldc: usize,
    rows: usize,
    cols: usize,
}

/// An int8 kernel: its tile and its function.
#[derive(Clone, Copy)]
pub struct Kernel {
    tile: Tile,
    #[cfg(target_arch = "x86_64")]
    run: TileFn,
    name: &'static str,
}

impl Kernel {
    /// The best kernel this process may use: AVX-512 VNNI, else AVX-VNNI, else none (the f32
    /// path runs). `TOPICMAP_DEBUG_SIMD` lowers it as it lowers every kernel: `avx2` leaves
    /// AVX-VNNI, `avx` or `base` none.
    pub fn best() -> Option<Kernel> {
        Kernel::at(simd::level())
    }

    /// The kernel for a level, when the CPU has its VNNI instructions.
    pub fn at(level: Level) -> Option<Kernel> {
        match simd::vnni_at(level)? {
            #[cfg(target_arch = "x86_64")]
            simd::Vnni::Avx512 => Some(Kernel {
                tile: VNNI512_TILE,
                run: tile512,
                name: "avx512-vnni",
            }),
            #[cfg(target_arch = "x86_64")]
            simd::Vnni::Avx => Some(Kernel {
                tile: VNNI256_TILE,
                run: tile256,
                name: "avx-vnni",
            }),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }

    /// The instructions it runs, for the stage line.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// A dense layer's weight `(k, m)` in int8, in panels of the kernel's width: panel `j` holds,
/// for each group of 4 rows of `k`, its columns' 4 bytes one column after the other.
pub struct Quantized {
    kernel: Kernel,
    k: usize,
    m: usize,
    panels: Vec<i8>,
    /// Per column, zero-padded to whole panels: the weight's scale `s`, the sum of its
    /// weights as quantized (`s Σ q`), the bias.
    scale: Vec<f32>,
    column_sum: Vec<f32>,
    bias: Vec<f32>,
}

impl Quantized {
    /// `w` is `(k, m)`, row after row; `bias` has `m` values.
    pub fn new(kernel: Kernel, w: &[f32], bias: &[f32], k: usize, m: usize) -> Quantized {
        let width = kernel.tile.panel;
        let (count, k4) = (m.div_ceil(width), k.div_ceil(4));
        let mut scale = vec![0.0f32; count * width];
        for (c, s) in scale.iter_mut().enumerate().take(m) {
            let top = (0..k).map(|p| w[p * m + c].abs()).fold(0.0f32, f32::max);
            *s = top / 127.0;
        }
        let mut panels = vec![0i8; count * k4 * width * 4];
        let mut column_sum = vec![0.0f32; count * width];
        for c in 0..m {
            let inv = if scale[c] > 0.0 { 1.0 / scale[c] } else { 0.0 };
            let (j, col) = (c / width, c % width);
            let mut sum = 0i32;
            for p in 0..k {
                let q = (w[p * m + c] * inv).round_ties_even().clamp(-127.0, 127.0) as i8;
                panels[((j * k4 + p / 4) * width + col) * 4 + p % 4] = q;
                sum += q as i32;
            }
            column_sum[c] = scale[c] * sum as f32;
        }
        let mut padded = vec![0.0; count * width];
        padded[..m].copy_from_slice(bias);
        Quantized {
            kernel,
            k,
            m,
            panels,
            scale,
            column_sum,
            bias: padded,
        }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    pub fn m(&self) -> usize {
        self.m
    }

    /// `x W + bias` for `x`, `n` rows of `k` values one after the other.
    pub fn product(&self, x: &[f32], n: usize) -> Vec<f32> {
        let rows = self.quantize_rows(x, n);
        self.tiles(&rows, n)
    }

    /// The rows of `x` quantized ([`quantize_row`]), one after the other, each `k` padded to
    /// whole groups of 4 (the padding meets zero weights).
    fn quantize_rows(&self, x: &[f32], n: usize) -> Rows {
        let k = self.k;
        assert_eq!(x.len(), n * k);
        let lda = k.div_ceil(4) * 4;
        let mut rows = Rows {
            bytes: Vec::with_capacity(n * lda),
            scale: Vec::with_capacity(n),
            low: Vec::with_capacity(n),
        };
        let mut q = vec![0u8; lda];
        for row in x.chunks_exact(k) {
            let (scale, low) = quantize_row(row, &mut q[..k]);
            rows.scale.push(scale);
            rows.low.push(low);
            rows.bytes.extend_from_slice(&q);
        }
        rows
    }

    /// The product from the quantized rows.
    fn tiles(&self, rows_in: &Rows, n: usize) -> Vec<f32> {
        let k4 = self.k.div_ceil(4);
        let lda = k4 * 4;
        let blocks = n.div_ceil(self.kernel.tile.rows);
        let mut out = Vec::<f32>::with_capacity(n * self.m);
        #[cfg(target_arch = "x86_64")]
        {
            let Kernel {
                tile: Tile { rows, panel },
                run,
                ..
            } = self.kernel;
            let panels = self.m.div_ceil(panel);
            let group = (GROUP_BYTES / (k4 * panel * 4)).max(1);
            for first in (0..panels).step_by(group) {
                for b in 0..blocks {
                    let live = (n - b * rows).min(rows);
                    for j in first..(first + group).min(panels) {
                        let args = TileArgs {
                            a: rows_in.bytes[b * rows * lda..].as_ptr(),
                            lda,
                            k4,
                            row_scale: rows_in.scale[b * rows..].as_ptr(),
                            row_low: rows_in.low[b * rows..].as_ptr(),
                            panel: self.panels[j * k4 * panel * 4..].as_ptr(),
                            scale: self.scale[j * panel..].as_ptr(),
                            column_sum: self.column_sum[j * panel..].as_ptr(),
                            bias: self.bias[j * panel..].as_ptr(),
                            // SAFETY: within the `n * m` values `out` has room for.
                            c: unsafe { out.as_mut_ptr().add(b * rows * self.m + j * panel) },
                            ldc: self.m,
                            rows: live,
                            cols: (self.m - j * panel).min(panel),
                        };
                        // SAFETY: block `b` of `a` is `live` rows of `lda` bytes and their
                        // scales; panel `j` holds `k4 * panel * 4` weights and its
                        // `panel` scales, sums and biases (all padded to whole
                        // panels); the tile writes `live` rows of `cols` columns, all within
                        // `out`'s `n * m` values (`live` stops at row `n`, `cols` at `m`);
                        // the kernel came from `Kernel::at`, which checked the CPU.
                        unsafe { run(&args) };
                    }
                }
            }
            // SAFETY: the tiles above wrote every one of the `n * m` values: each block's
            // live rows, each panel's columns.
            unsafe { out.set_len(n * self.m) };
        }
        out
    }
}

/// A row's values as bytes: `a = round((v - low) / s)`, ties to even, in 0..255, with `low`
/// the row's lowest value and `s = (high - low) / 255` (0 for a row of one value, whose bytes
/// are all 0), so that `v ≈ s a + low`. The whole 0..255 of `vpdpbusd`'s unsigned bytes
/// spans the row's own range: twice the steps of a scale around zero for the rows after a
/// GELU, which are nearly all above zero. Gives `(s, low)`. The same operations at every
/// level, so the same bytes; built for the wider instructions where the CPU has them.
fn quantize_row(row: &[f32], out: &mut [u8]) -> (f32, f32) {
    #[cfg(target_arch = "x86_64")]
    if simd::has(Level::Avx512) {
        // SAFETY: the CPU has AVX-512F (the level says so).
        return unsafe { quantize_row_avx512(row, out) };
    } else if simd::has(Level::Avx2) {
        // SAFETY: the CPU has AVX2 and FMA (the level says so).
        return unsafe { quantize_row_avx2(row, out) };
    }
    quantize_row_plain(row, out)
}

/// The scale and inverse for a row's range (see [`quantize_row`]).
#[inline(always)]
fn step(low: f32, high: f32) -> (f32, f32) {
    let s = (high - low) / 255.0;
    (s, if s > 0.0 { 1.0 / s } else { 0.0 })
}

/// [`quantize_row_plain`] in AVX-512: the same operations (the lowest and highest values,
/// one division, `(v - low) · (1/s)` rounded to nearest even by the CPU's default mode,
/// clamped), 16 values at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn quantize_row_avx512(row: &[f32], out: &mut [u8]) -> (f32, f32) {
    use std::arch::x86_64::*;
    assert!(out.len() >= row.len() && !row.is_empty());
    let whole = row.len() / 16 * 16;
    // Four of each side by side (one would wait on each `vminps` before the next): the
    // lowest and highest values are the same in any order.
    let first = _mm512_set1_ps(row[0]);
    let (mut low, mut high) = ([first; 4], [first; 4]);
    for (i, c) in row[..whole].chunks_exact(16).enumerate() {
        // SAFETY: `c` holds 16 values.
        let v = unsafe { _mm512_loadu_ps(c.as_ptr()) };
        low[i % 4] = _mm512_min_ps(low[i % 4], v);
        high[i % 4] = _mm512_max_ps(high[i % 4], v);
    }
    let low = _mm512_min_ps(_mm512_min_ps(low[0], low[1]), _mm512_min_ps(low[2], low[3]));
    let high = _mm512_max_ps(
        _mm512_max_ps(high[0], high[1]),
        _mm512_max_ps(high[2], high[3]),
    );
    let (low, high) = row[whole..].iter().fold(
        (_mm512_reduce_min_ps(low), _mm512_reduce_max_ps(high)),
        |(l, h), &v| (l.min(v), h.max(v)),
    );
    let (s, inv) = step(low, high);
    let (inv16, low16, top) = (
        _mm512_set1_ps(inv),
        _mm512_set1_ps(low),
        _mm512_set1_epi32(255),
    );
    for (c, o) in row[..whole].chunks_exact(16).zip(out.chunks_exact_mut(16)) {
        // SAFETY: `c` holds 16 values and `o` 16 bytes.
        unsafe {
            let v = _mm512_sub_ps(_mm512_loadu_ps(c.as_ptr()), low16);
            let q = _mm512_cvtps_epi32(_mm512_mul_ps(v, inv16));
            let q = _mm512_min_epi32(_mm512_max_epi32(q, _mm512_setzero_si512()), top);
            _mm_storeu_si128(o.as_mut_ptr().cast(), _mm512_cvtepi32_epi8(q));
        }
    }
    for (o, v) in out[whole..].iter_mut().zip(&row[whole..]) {
        *o = quantize_value(*v, low, inv);
    }
    (s, low)
}

/// One value as a byte (see [`quantize_row`]).
#[inline(always)]
fn quantize_value(v: f32, low: f32, inv: f32) -> u8 {
    ((v - low) * inv).round_ties_even().clamp(0.0, 255.0) as u8
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn quantize_row_avx2(row: &[f32], out: &mut [u8]) -> (f32, f32) {
    quantize_row_plain(row, out)
}

#[inline(always)]
fn quantize_row_plain(row: &[f32], out: &mut [u8]) -> (f32, f32) {
    const L: usize = 16;
    assert!(!row.is_empty());
    let (mut low, mut high) = ([row[0]; L], [row[0]; L]);
    let chunks = row.chunks_exact(L);
    let rest = chunks
        .remainder()
        .iter()
        .fold((row[0], row[0]), |(l, h), &v| (l.min(v), h.max(v)));
    for c in chunks {
        for ((l, h), &v) in low.iter_mut().zip(high.iter_mut()).zip(c) {
            *l = l.min(v);
            *h = h.max(v);
        }
    }
    let low = low.iter().fold(rest.0, |t, &v| t.min(v));
    let high = high.iter().fold(rest.1, |t, &v| t.max(v));
    let (s, inv) = step(low, high);
    for (o, v) in out.iter_mut().zip(row) {
        *o = quantize_value(*v, low, inv);
    }
    (s, low)
}

/// The quantized rows of a product's input (see [`quantize_row`]): the bytes, row after row,
/// and each row's scale and lowest value.
struct Rows {
    bytes: Vec<u8>,
    scale: Vec<f32>,
    low: Vec<f32>,
}

/// One AVX-512 VNNI tile: 12 rows by 32 columns (two registers), 24 i32 accumulators.
///
/// # Safety
/// - The CPU has AVX-512F, AVX-512BW and AVX-512 VNNI.
/// - `t.a` is readable for `t.k4 * 4` bytes at each of `t.rows` rows `t.lda` apart,
///   `t.row_scale` and `t.row_low` for `t.rows` values, `t.panel` for `t.k4 * 32 * 4` bytes,
///   `t.scale`, `t.column_sum` and `t.bias` for 32 values each.
/// - `t.rows <= 12`, `t.cols <= 32`, and `t.c` is writable for `t.cols` values at each of
///   `t.rows` rows `t.ldc` apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
unsafe fn tile512(t: &TileArgs) {
    use std::arch::x86_64::*;
    const R: usize = VNNI512_TILE.rows;
    const W: usize = VNNI512_TILE.panel;
    // SAFETY: every read is within the lengths the caller guarantees (group p < k4 of the
    // panel's 32 × 4 bytes and of each live row's `k4` × 4), and the masked stores write the first
    // `cols` columns of the first `rows` rows only.
    unsafe {
        let mut acc = [[_mm512_setzero_si512(); 2]; R];
        let rows: [*const u8; R] = rows_at(t.a, t.lda, t.rows);
        for p in 0..t.k4 {
            let w0 = _mm512_loadu_si512(t.panel.add(p * W * 4).cast());
            let w1 = _mm512_loadu_si512(t.panel.add(p * W * 4 + 64).cast());
            for (r, acc) in acc.iter_mut().enumerate() {
                let v =
                    _mm512_set1_epi32(std::ptr::read_unaligned(rows[r].add(p * 4).cast::<i32>()));
                acc[0] = _mm512_dpbusd_epi32(acc[0], v, w0);
                acc[1] = _mm512_dpbusd_epi32(acc[1], v, w1);
            }
        }
        let scale = [_mm512_loadu_ps(t.scale), _mm512_loadu_ps(t.scale.add(16))];
        let column_sum = [
            _mm512_loadu_ps(t.column_sum),
            _mm512_loadu_ps(t.column_sum.add(16)),
        ];
        let bias = [_mm512_loadu_ps(t.bias), _mm512_loadu_ps(t.bias.add(16))];
        let (low, high) = super::math::tail_masks(t.cols);
        for (r, acc) in acc.iter().enumerate().take(t.rows) {
            let s = _mm512_set1_ps(*t.row_scale.add(r));
            let least = _mm512_set1_ps(*t.row_low.add(r));
            let row = t.c.add(r * t.ldc);
            for (h, mask) in [low, high].into_iter().enumerate() {
                // s_row s_col Σ a q + low_row s_col Σ q + bias.
                let shift = _mm512_fmadd_ps(least, column_sum[h], bias[h]);
                let sum = _mm512_cvtepi32_ps(acc[h]);
                let v = _mm512_fmadd_ps(sum, _mm512_mul_ps(s, scale[h]), shift);
                _mm512_mask_storeu_ps(row.add(h * 16), mask, v);
            }
        }
    }
}

/// One AVX-VNNI tile: as [`tile512`], 6 rows by 16 columns in 256-bit registers.
///
/// # Safety
/// - The CPU has AVX2, FMA and AVX-VNNI.
/// - As [`tile512`], with 6 rows and 16 columns.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avxvnni")]
unsafe fn tile256(t: &TileArgs) {
    use std::arch::x86_64::*;
    const R: usize = VNNI256_TILE.rows;
    const W: usize = VNNI256_TILE.panel;
    // SAFETY: every read is within the lengths the caller guarantees (group p < k4 of the
    // panel's 16 × 4 bytes and of each live row's `k4` × 4); a partial row goes through a local
    // buffer, so only the first `cols` columns of the first `rows` rows are written.
    unsafe {
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        let rows: [*const u8; R] = rows_at(t.a, t.lda, t.rows);
        for p in 0..t.k4 {
            let w0 = _mm256_loadu_si256(t.panel.add(p * W * 4).cast());
            let w1 = _mm256_loadu_si256(t.panel.add(p * W * 4 + 32).cast());
            for (r, acc) in acc.iter_mut().enumerate() {
                let v =
                    _mm256_set1_epi32(std::ptr::read_unaligned(rows[r].add(p * 4).cast::<i32>()));
                acc[0] = _mm256_dpbusd_avx_epi32(acc[0], v, w0);
                acc[1] = _mm256_dpbusd_avx_epi32(acc[1], v, w1);
            }
        }
        let scale = [_mm256_loadu_ps(t.scale), _mm256_loadu_ps(t.scale.add(8))];
        let column_sum = [
            _mm256_loadu_ps(t.column_sum),
            _mm256_loadu_ps(t.column_sum.add(8)),
        ];
        let bias = [_mm256_loadu_ps(t.bias), _mm256_loadu_ps(t.bias.add(8))];
        for (r, acc) in acc.iter().enumerate().take(t.rows) {
            let s = _mm256_set1_ps(*t.row_scale.add(r));
            let least = _mm256_set1_ps(*t.row_low.add(r));
            let mut part = [0.0f32; W];
            for h in 0..2 {
                let shift = _mm256_fmadd_ps(least, column_sum[h], bias[h]);
                let sum = _mm256_cvtepi32_ps(acc[h]);
                let v = _mm256_fmadd_ps(sum, _mm256_mul_ps(s, scale[h]), shift);
                _mm256_storeu_ps(part.as_mut_ptr().add(h * 8), v);
            }
            std::ptr::copy_nonoverlapping(part.as_ptr(), t.c.add(r * t.ldc), t.cols);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The int8 kernels this CPU has.
    fn kernels() -> Vec<Kernel> {
        let mut v: Vec<Kernel> = Vec::new();
        for level in [Level::Avx2, Level::Avx512] {
            match Kernel::at(level) {
                Some(k) if v.iter().all(|have| have.name != k.name) => v.push(k),
                Some(_) => {}
                None => eprintln!("no int8 kernel at {level:?} on this CPU"),
            }
        }
        v
    }

    fn data(len: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Every output within the quantization's error of a plain f64 product, whatever the
    /// remainders of rows, columns and `k`; both kernels give the same bits.
    #[test]
    fn int8_products_match_a_plain_product() {
        let kernels = kernels();
        for (n, k, m) in [
            (1, 4, 1),
            (5, 7, 3),
            (13, 33, 37),
            (30, 384, 100),
            (7, 1536, 64),
        ] {
            let (x, w, b) = (data(n * k, 1), data(k * m, 2), data(m, 3));
            let mut first: Option<Vec<f32>> = None;
            for kernel in &kernels {
                let got = Quantized::new(*kernel, &w, &b, k, m).product(&x, n);
                for i in 0..n {
                    for c in 0..m {
                        let exact: f64 = (0..k)
                            .map(|p| x[i * k + p] as f64 * w[p * m + c] as f64)
                            .sum::<f64>()
                            + b[c] as f64;
                        // Each factor is off by at most half a step (1/254 of its row's or
                        // column's largest value, at most 1 here).
                        let bound = k as f64 * (2.0 / 254.0 + 1.0 / 254.0_f64.powi(2)) + 1e-5;
                        let e = (got[i * m + c] as f64 - exact).abs();
                        assert!(
                            e <= bound,
                            "{}: ({n},{k},{m}) [{i},{c}] off by {e}",
                            kernel.name
                        );
                    }
                }
                match &first {
                    None => first = Some(got),
                    Some(f) => assert!(
                        f.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{} differs from the other kernel",
                        kernel.name
                    ),
                }
            }
        }
    }

    /// The wide quantization gives the plain one's bytes, scale and lowest value; the lowest
    /// value lands on 0 and the highest on 255, and every value is back within half a step.
    #[test]
    fn rows_quantize_alike_at_every_level() {
        for len in [1, 15, 16, 17, 384, 1537] {
            let row = data(len, len as u64);
            let mut plain = vec![0u8; len];
            let (s, low) = quantize_row_plain(&row, &mut plain);
            let least = row.iter().cloned().fold(f32::MAX, f32::min);
            let most = row.iter().cloned().fold(f32::MIN, f32::max);
            assert_eq!((s, low), ((most - least) / 255.0, least), "{len}");
            for (v, q) in row.iter().zip(&plain) {
                assert!(
                    (s * *q as f32 + low - v).abs() <= s * 0.5001 + 1e-7,
                    "{len}: {v}, {q}"
                );
            }
            if len > 1 {
                let at = |x: f32| row.iter().position(|&v| v == x).unwrap();
                assert_eq!((plain[at(least)], plain[at(most)]), (0, 255), "{len}");
            } else {
                assert_eq!((s, plain[0]), (0.0, 0), "one value: no step, byte 0");
            }
            #[cfg(target_arch = "x86_64")]
            if simd::cpu() >= Level::Avx512 {
                let mut wide = vec![0u8; len];
                // SAFETY: the CPU has AVX-512F (the AVX-512 level says so).
                let (t, l) = unsafe { quantize_row_avx512(&row, &mut wide) };
                assert_eq!(
                    (s.to_bits(), low.to_bits(), &plain),
                    (t.to_bits(), l.to_bits(), &wide),
                    "{len}"
                );
            } else {
                eprintln!("no AVX-512 here: the plain quantization only");
            }
        }
    }

    /// A row's outputs do not depend on the rows beside it.
    #[test]
    fn an_int8_row_gives_the_same_bits_alone_and_in_a_batch() {
        let (n, k, m) = (17, 384, 48);
        let (x, w, b) = (data(n * k, 4), data(k * m, 5), data(m, 6));
        for kernel in kernels() {
            let q = Quantized::new(kernel, &w, &b, k, m);
            let all = q.product(&x, n);
            for i in [0, 11, 12, 16] {
                let alone = q.product(&x[i * k..][..k], 1);
                assert_eq!(
                    alone.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    all[i * m..][..m]
                        .iter()
                        .map(|v| v.to_bits())
                        .collect::<Vec<_>>(),
                    "{} row {i}",
                    kernel.name
                );
            }
        }
    }
}
