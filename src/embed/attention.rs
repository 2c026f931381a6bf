//! A BERT layer's self-attention, text by text and head by head, on the f32 kernels of
//! [`super::dense`]: the scores `Q Kᵀ`, their softmax ([`super::math::softmax`]), and the
//! context `softmax · V`, a block of the kernel's tile rows of queries at a time.
//!
//! Why not candle's batched matmul, or the packed products of the dense layers: with the dense
//! products in int8, the attention became a third of an abstract's time, and most of that was
//! copying. Here the queries are read where they lie in the fused query, key and value product,
//! and the scores where the block's softmax left them. Only each head's keys are copied,
//! transposed (16 × 16 at a time in AVX-512 registers), so that the kernel reads a panel of
//! keys at a time, and its values, into one block: read in place, 128 rows a whole layer's
//! width apart fell into a few of the cache's sets and pushed each other out.
//!
//! Each output is one chain of fused multiply-adds in order, so a text's vector does not depend
//! on its batch. The batches hold texts of one length, so there is no mask.

use super::dense::InRows;
use super::math::softmax;

/// The context vectors, `(rows · length, heads · head)`, of `rows` texts of `length` tokens,
/// from the fused query, key and value product `qkv` (each token's row: the queries, already
/// scaled, then the keys, then the values, head after head); `None` where no kernel of ours
/// runs, or where a head is not a whole number of the kernel's panels (candle's matmul then).
pub(super) fn attention(
    qkv: &[f32],
    rows: usize,
    length: usize,
    heads: usize,
    head: usize,
) -> Option<Vec<f32>> {
    let kernel = InRows::new()?;
    if !head.is_multiple_of(kernel.width()) {
        return None;
    }
    let h = heads * head;
    let width = 3 * h;
    assert_eq!(qkv.len(), rows * length * width);
    // A head's keys transposed: `head` rows of `keys` values (whole panels, zeros past
    // `length`, so that the kernel's last panel reads within them).
    let keys = length.div_ceil(kernel.width()) * kernel.width();
    let mut kt = vec![0.0f32; head * keys];
    let mut values = vec![0.0f32; length * head];
    let block = kernel.block();
    let mut scores = vec![0.0f32; block * length];
    let mut out = vec![0.0f32; rows * length * h];
    for t in 0..rows {
        let text = &qkv[t * length * width..][..length * width];
        let context = &mut out[t * length * h..][..length * h];
        for a in 0..heads {
            transpose(text, width, h + a * head, head, &mut kt, keys);
            for (token, v) in text.chunks_exact(width).zip(values.chunks_exact_mut(head)) {
                v.copy_from_slice(&token[2 * h + a * head..][..head]);
            }
            let queries = &text[a * head..];
            for first in (0..length).step_by(block) {
                let n = (length - first).min(block);
                let s = &mut scores[..n * length];
                let q = &queries[first * width..];
                kernel.product((q, width), (&kt, keys), (s, length), n, head, length);
                softmax(s, length);
                let c = &mut context[first * h + a * head..];
                kernel.product((s, length), (&values, head), (c, h), n, length, head);
            }
        }
    }
    Some(out)
}

/// The `head` values at `offset` of each token row of `text` (`width` apart) into `kt`,
/// transposed: `kt[d * keys + i]` is token `i`'s value `d`.
fn transpose(text: &[f32], width: usize, offset: usize, head: usize, kt: &mut [f32], keys: usize) {
    let length = text.len() / width;
    assert!(offset + head <= width && kt.len() >= head * keys && keys >= length);
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if head.is_multiple_of(16) && crate::simd::level() == crate::simd::Level::Avx512 {
        done = length / 16 * 16;
        // SAFETY: the CPU has AVX-512F (`simd::level` never exceeds the CPU's).
        unsafe { transpose_avx512(text, width, offset, head, kt, keys, done) };
    }
    for (i, token) in text.chunks_exact(width).enumerate().skip(done) {
        for (d, v) in token[offset..][..head].iter().enumerate() {
            kt[d * keys + i] = *v;
        }
    }
}

/// [`transpose`] of the first `done` tokens (a multiple of 16; `head` too), 16 tokens by 16
/// values at a time through AVX-512 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn transpose_avx512(
    text: &[f32],
    width: usize,
    offset: usize,
    head: usize,
    kt: &mut [f32],
    keys: usize,
    done: usize,
) {
    use std::arch::x86_64::*;
    for first in (0..done).step_by(16) {
        for d in (0..head).step_by(16) {
            // SAFETY: each load reads 16 values of a token row within `text` (`offset + d +
            // 16 <= offset + head <= width`), each store 16 values of a row of `kt` (`first +
            // 16 <= done <= length <= keys`): the slices' bounds are checked here.
            let mut r: [__m512; 16] = std::array::from_fn(|i| unsafe {
                _mm512_loadu_ps(text[(first + i) * width + offset + d..][..16].as_ptr())
            });
            transpose16(&mut r);
            for (j, row) in r.iter().enumerate() {
                // SAFETY: as above.
                unsafe { _mm512_storeu_ps(kt[(d + j) * keys + first..][..16].as_mut_ptr(), *row) };
            }
        }
    }
}

/// Transposes the 16 × 16 values of `r` (row `i` in register `i`) in place: pairs of rows
/// interleaved, then pairs of pairs, then 128-bit lanes twice.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn transpose16(r: &mut [std::arch::x86_64::__m512; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_ps(); 16];
    for p in 0..8 {
        t[2 * p] = _mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]);
    }
    for g in (0..16).step_by(4) {
        r[g] = _mm512_shuffle_ps::<0x44>(t[g], t[g + 2]);
        r[g + 1] = _mm512_shuffle_ps::<0xee>(t[g], t[g + 2]);
        r[g + 2] = _mm512_shuffle_ps::<0x44>(t[g + 1], t[g + 3]);
        r[g + 3] = _mm512_shuffle_ps::<0xee>(t[g + 1], t[g + 3]);
    }
    for half in [0, 8] {
        for i in 0..4 {
            t[half + i] = _mm512_shuffle_f32x4::<0x88>(r[half + i], r[half + 4 + i]);
            t[half + 4 + i] = _mm512_shuffle_f32x4::<0xdd>(r[half + i], r[half + 4 + i]);
        }
    }
    for i in 0..8 {
        r[i] = _mm512_shuffle_f32x4::<0x88>(t[i], t[8 + i]);
        r[8 + i] = _mm512_shuffle_f32x4::<0xdd>(t[i], t[8 + i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of a head transposed, for lengths with and without a part of 16 tokens, heads
    /// of 16 and 32 values, against the plain loop's positions.
    #[test]
    fn keys_transpose_at_every_length() {
        for (length, head) in [(1usize, 16usize), (16, 16), (37, 32), (128, 32), (20, 8)] {
            let width = 5 * head;
            let offset = 2 * head + 3;
            let text: Vec<f32> = (0..length * width).map(|i| i as f32).collect();
            let keys = length.div_ceil(16) * 16;
            let mut kt = vec![-1.0; head * keys];
            transpose(&text, width, offset, head, &mut kt, keys);
            for d in 0..head {
                for i in 0..keys {
                    let want = if i < length {
                        text[i * width + offset + d]
                    } else {
                        -1.0
                    };
                    assert_eq!(kt[d * keys + i], want, "{length} x {head}: [{d}, {i}]");
                }
            }
        }
    }

    /// The attention against a plain f64 one: texts whose lengths leave a part of a tile of
    /// queries and of a panel of keys, heads of one and of two panels.
    #[test]
    fn attention_matches_a_plain_one() {
        let Some(kernel) = InRows::new() else {
            eprintln!("no f32 kernel at this level: candle's matmul runs the attention");
            assert!(attention(&[0.0; 18], 1, 1, 2, 3).is_none());
            return;
        };
        let w = kernel.width();
        assert!(attention(&vec![0.0; 3 * 2 * (w + 1)], 1, 1, 2, w + 1).is_none());
        for (rows, length, heads, head) in [(2, 5, 2, w), (3, 29, 3, 2 * w), (1, 1, 1, w)] {
            let h = heads * head;
            let qkv: Vec<f32> = (0..rows * length * 3 * h)
                .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * 0.4)
                .collect();
            let got = attention(&qkv, rows, length, heads, head).unwrap();
            for t in 0..rows {
                for a in 0..heads {
                    let at = |i: usize, part: usize, d: usize| {
                        qkv[(t * length + i) * 3 * h + part * h + a * head + d] as f64
                    };
                    for i in 0..length {
                        let scores: Vec<f64> = (0..length)
                            .map(|j| (0..head).map(|d| at(i, 0, d) * at(j, 1, d)).sum())
                            .collect();
                        let top = scores.iter().cloned().fold(f64::MIN, f64::max);
                        let e: Vec<f64> = scores.iter().map(|s| (s - top).exp()).collect();
                        let sum: f64 = e.iter().sum();
                        for d in 0..head {
                            let want: f64 = (0..length).map(|j| e[j] / sum * at(j, 2, d)).sum();
                            let g = got[(t * length + i) * h + a * head + d] as f64;
                            assert!(
                                (g - want).abs() < 2e-5,
                                "{length} tokens, text {t} head {a} [{i},{d}]: {g} against {want}"
                            );
                        }
                    }
                }
            }
        }
    }
}
