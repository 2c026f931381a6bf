//! The encoder's dense products `x W (+ bias)`: on CPUs with AVX-512, a kernel of our own over
//! weights packed once when the model loads; elsewhere candle's matmul.
//!
//! Why: these products are nearly all of the transformer's time (three quarters of it on short
//! texts). candle's matmul (the gemm crate) uses AVX2 at most on a stable compiler (its AVX-512
//! kernels sit behind its `nightly` feature), packs the weights again for every product and
//! zero-fills every output before writing it. Here the weights are laid out once in panels of
//! 32 columns, each output tile is 12 rows by 32 columns in 24 AVX-512 registers, and the output
//! is written once.
//!
//! Every output value is one chain of fused multiply-adds over `k` in order, started at its
//! column's bias (or 0), whatever its row's place in the batch: so a text's vector does not
//! depend on the batch it ran in (the encoder's test checks the bits).

use candle_core::{Result, Tensor};

/// Columns in a packed panel: two AVX-512 registers.
const PANEL: usize = 32;
/// Rows in an output tile: 12 rows by 2 registers is 24 accumulators of the 32 registers.
const TILE_ROWS: usize = 12;
/// Bytes of packed weights a group of panels holds (see [`Packed::tiles`]).
const GROUP_BYTES: usize = 256 * 1024;

/// A dense layer's weight `(k, m)` and optional bias `(m)`: packed for the AVX-512 kernel, or
/// as candle tensors for its matmul (one or the other, never both).
pub enum Dense {
    Packed(Packed),
    Candle {
        /// `(k, m)`, contiguous: the right-hand side.
        weight: Tensor,
        bias: Option<Tensor>,
    },
}

/// `W` in panels of [`PANEL`] columns (the layer's only copy of it): panel `j` holds rows `0..k` of columns
/// `32 j .. 32 j + 32`, one row after the other, zero beyond `m`.
pub struct Packed {
    k: usize,
    m: usize,
    panels: Vec<f32>,
    /// The bias, zero-padded to whole panels (zeros when the layer adds none here).
    bias: Vec<f32>,
}

impl Dense {
    /// `weight` is `(m, k)`, as checkpoints store a linear layer's; `bias`, when given, is
    /// added here (leave it out when a later fused pass adds it).
    pub fn new(weight: &Tensor, bias: Option<Tensor>) -> Result<Dense> {
        let weight = weight.t()?.contiguous()?;
        if !avx512() {
            return Ok(Dense::Candle { weight, bias });
        }
        let (k, m) = weight.dims2()?;
        let b = match &bias {
            Some(b) => b.to_vec1::<f32>()?,
            None => vec![0.0; m],
        };
        let w = weight.flatten_all()?.to_vec1::<f32>()?;
        Ok(Dense::Packed(Packed::new(&w, &b, k, m)))
    }

    /// `x W + bias` for `x` of shape `(n, k)`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Dense::Packed(p) => {
                let (n, k) = x.dims2()?;
                if k != p.k {
                    candle_core::bail!("dense product: {k} inputs for a {}-row weight", p.k);
                }
                let x = x.contiguous()?;
                let (storage, layout) = x.storage_and_layout();
                let values = match &*storage {
                    candle_core::Storage::Cpu(s) => super::bert::values_of(s, layout)?,
                    _ => candle_core::bail!("dense product: not on the CPU"),
                };
                let out = p.product(values, n);
                Tensor::from_vec(out, (n, p.m), x.device())
            }
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

/// Whether this CPU runs the AVX-512 kernel.
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl Packed {
    fn new(w: &[f32], bias: &[f32], k: usize, m: usize) -> Packed {
        let count = m.div_ceil(PANEL);
        let mut panels = vec![0.0; count * k * PANEL];
        for (j, panel) in panels.chunks_exact_mut(k * PANEL).enumerate() {
            let cols = (m - j * PANEL).min(PANEL);
            for (p, row) in panel.chunks_exact_mut(PANEL).enumerate() {
                row[..cols].copy_from_slice(&w[p * m + j * PANEL..][..cols]);
            }
        }
        let mut padded = vec![0.0; count * PANEL];
        padded[..m].copy_from_slice(bias);
        Packed {
            k,
            m,
            panels,
            bias: padded,
        }
    }

    /// `x W + bias` for `x`, `n` rows of `k` values one after the other.
    fn product(&self, x: &[f32], n: usize) -> Vec<f32> {
        let k = self.k;
        assert_eq!(x.len(), n * k);
        // The rows in blocks of TILE_ROWS, each block column after column (zero rows pad the
        // last), so that a tile reads its left-hand side from one pointer.
        let blocks = n.div_ceil(TILE_ROWS);
        let zeros = vec![0.0; k];
        let mut a = Vec::<f32>::with_capacity(blocks * k * TILE_ROWS);
        let spare = &mut a.spare_capacity_mut()[..blocks * k * TILE_ROWS];
        for (b, block) in spare.chunks_exact_mut(k * TILE_ROWS).enumerate() {
            let rows: [&[f32]; TILE_ROWS] = std::array::from_fn(|r| {
                let i = b * TILE_ROWS + r;
                if i < n {
                    &x[i * k..][..k]
                } else {
                    &zeros[..]
                }
            });
            for (p, column) in block.chunks_exact_mut(TILE_ROWS).enumerate() {
                for (value, row) in column.iter_mut().zip(&rows) {
                    value.write(row[p]);
                }
            }
        }
        // SAFETY: the loop above wrote every value of the first `blocks * k * TILE_ROWS`.
        unsafe { a.set_len(blocks * k * TILE_ROWS) };
        let mut out = Vec::<f32>::with_capacity(n * self.m);
        // SAFETY: `avx512()` held when the weights were packed (`packed` is None otherwise);
        // every tile reads a packed block and a panel within their lengths and writes only its
        // own rows and columns of `out`, and the tiles cover all `n * m` values before the
        // length is set.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            self.tiles(&a, n, out.as_mut_ptr());
            out.set_len(n * self.m);
        }
        out
    }

    /// The tiles, a group of panels at a time (the group's weights stay in the core's cache
    /// while every block of rows passes over them).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn tiles(&self, a: &[f32], n: usize, out: *mut f32) {
        let (k, m) = (self.k, self.m);
        let panels = m.div_ceil(PANEL);
        let group = (GROUP_BYTES / (k * PANEL * 4)).max(1);
        for first in (0..panels).step_by(group) {
            for (b, block) in a.chunks_exact(k * TILE_ROWS).enumerate() {
                let rows = (n - b * TILE_ROWS).min(TILE_ROWS);
                for j in first..(first + group).min(panels) {
                    tile(
                        block.as_ptr(),
                        k,
                        self.panels.as_ptr().add(j * k * PANEL),
                        self.bias.as_ptr().add(j * PANEL),
                        out.add(b * TILE_ROWS * m + j * PANEL),
                        m,
                        rows,
                        (m - j * PANEL).min(PANEL),
                    );
                }
            }
        }
    }
}

/// One output tile: a packed block of [`TILE_ROWS`] rows (`k` columns of them) times one
/// panel, plus the bias, written to the first `rows` rows (`ldc` apart) of `c`, their first
/// `cols` columns.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn tile(
    a: *const f32,
    k: usize,
    panel: *const f32,
    bias: *const f32,
    c: *mut f32,
    ldc: usize,
    rows: usize,
    cols: usize,
) {
    use std::arch::x86_64::*;
    let b0 = _mm512_loadu_ps(bias);
    let b1 = _mm512_loadu_ps(bias.add(16));
    let mut acc = [[b0, b1]; TILE_ROWS];
    for p in 0..k {
        let w0 = _mm512_loadu_ps(panel.add(p * PANEL));
        let w1 = _mm512_loadu_ps(panel.add(p * PANEL + 16));
        let column = a.add(p * TILE_ROWS);
        for (r, acc) in acc.iter_mut().enumerate() {
            let v = _mm512_set1_ps(*column.add(r));
            acc[0] = _mm512_fmadd_ps(v, w0, acc[0]);
            acc[1] = _mm512_fmadd_ps(v, w1, acc[1]);
        }
    }
    let low: __mmask16 = if cols >= 16 { 0xffff } else { (1 << cols) - 1 };
    let high: __mmask16 = if cols >= 32 {
        0xffff
    } else if cols > 16 {
        (1 << (cols - 16)) - 1
    } else {
        0
    };
    for (r, acc) in acc.iter().enumerate().take(rows) {
        let row = c.add(r * ldc);
        _mm512_mask_storeu_ps(row, low, acc[0]);
        _mm512_mask_storeu_ps(row.add(16), high, acc[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every output against a plain `f64` product, whatever the rows' and columns' remainders.
    #[test]
    fn products_match_a_plain_product() -> Result<()> {
        let device = candle_core::Device::Cpu;
        for (n, k, m) in [(1, 3, 5), (13, 7, 32), (25, 16, 70), (12, 384, 96)] {
            let value = |i: usize, s: usize| ((i * s % 97) as f32 - 48.0) / 31.0;
            let x: Vec<f32> = (0..n * k).map(|i| value(i, 7)).collect();
            let w: Vec<f32> = (0..m * k).map(|i| value(i, 11)).collect();
            let b: Vec<f32> = (0..m).map(|i| value(i, 5)).collect();
            let dense = Dense::new(
                &Tensor::from_vec(w.clone(), (m, k), &device)?,
                Some(Tensor::from_vec(b.clone(), m, &device)?),
            )?;
            let y = dense
                .forward(&Tensor::from_vec(x.clone(), (n, k), &device)?)?
                .flatten_all()?
                .to_vec1::<f32>()?;
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
        }
        Ok(())
    }

    /// A row's values do not depend on the other rows in the product: the same bits with the
    /// AVX-512 kernel; with candle's matmul (no AVX-512 here), within rounding.
    #[test]
    fn a_row_gives_the_same_bits_alone_and_in_a_batch() -> Result<()> {
        if !avx512() {
            eprintln!("no AVX-512 on this CPU: candle's matmul is checked within 1e-6 instead");
        }
        let device = candle_core::Device::Cpu;
        let (n, k, m) = (29, 40, 48);
        let x: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let w: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.11).cos()).collect();
        let dense = Dense::new(&Tensor::from_vec(w, (m, k), &device)?, None)?;
        let all = dense
            .forward(&Tensor::from_vec(x.clone(), (n, k), &device)?)?
            .to_vec2::<f32>()?;
        for i in [0, 11, 12, 28] {
            let one = dense
                .forward(&Tensor::from_vec(
                    x[i * k..][..k].to_vec(),
                    (1, k),
                    &device,
                )?)?
                .to_vec2::<f32>()?;
            if avx512() {
                assert_eq!(one[0], all[i], "row {i}");
            } else {
                for (a, b) in one[0].iter().zip(&all[i]) {
                    assert!(
                        (a - b).abs() <= 1e-6 * (1.0 + b.abs()),
                        "row {i}: {a} against {b}"
                    );
                }
            }
        }
        Ok(())
    }
}
