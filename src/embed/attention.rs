//! One layer's self-attention, text by text and head by head, on the f32 kernels of
//! [`super::dense`]: the scores `Q Kᵀ`, their softmax, and the context `softmax · V`.
//!
//! Why: with the dense products in int8 ([`super::int8`]), the attention's two products were
//! half of what was left on abstracts (256 tokens: two 256 × 256 × 32 products per head).
//! candle's batched matmul runs them through the gemm crate with AVX2 at most and repacks
//! both sides each time; here each head's keys and values are packed once into the panels
//! the f32 kernels read (32 × 256 values, a few kilobytes), and each output is one chain of
//! fused multiply-adds in order, so a text's vector still does not depend on its batch.
//! The batches hold texts of one length, so there is no mask.

use super::dense;

/// The context vectors, `(rows · length, heads · head)`, from the fused query, key and value
/// product `qkv` (each token's row: the queries, already scaled, then the keys, then the
/// values, head after head); `None` where no kernel of ours runs (candle's matmul then).
pub(super) fn attention(
    qkv: &[f32],
    rows: usize,
    length: usize,
    heads: usize,
    head: usize,
) -> Option<Vec<f32>> {
    if !dense::has_kernel() {
        return None;
    }
    let h = heads * head;
    let width = 3 * h;
    assert_eq!(qkv.len(), rows * length * width);
    let mut out = vec![0.0f32; rows * length * h];
    let mut q = vec![0.0f32; length * head];
    let mut kt = vec![0.0f32; head * length];
    let mut v = vec![0.0f32; length * head];
    for t in 0..rows {
        let text = &qkv[t * length * width..][..length * width];
        for a in 0..heads {
            for (i, token) in text.chunks_exact(width).enumerate() {
                q[i * head..][..head].copy_from_slice(&token[a * head..][..head]);
                for (d, key) in token[h + a * head..][..head].iter().enumerate() {
                    kt[d * length + i] = *key;
                }
                v[i * head..][..head].copy_from_slice(&token[2 * h + a * head..][..head]);
            }
            let mut scores = dense::product_of(&q, length, &kt, head, length)?;
            super::bert::softmax(&mut scores, length);
            let context = dense::product_of(&scores, length, &v, length, head)?;
            for (i, c) in context.chunks_exact(head).enumerate() {
                out[(t * length + i) * h + a * head..][..head].copy_from_slice(c);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attention against a plain f64 one, on a batch of two texts of 5 tokens, 2 heads
    /// of 3 dimensions.
    #[test]
    fn attention_matches_a_plain_one() {
        if !dense::has_kernel() {
            eprintln!("no f32 kernel at this level: candle's matmul runs the attention");
            assert!(attention(&[0.0; 18], 1, 1, 2, 3).is_none());
            return;
        }
        let (rows, length, heads, head) = (2, 5, 2, 3);
        let h = heads * head;
        let qkv: Vec<f32> = (0..rows * length * 3 * h)
            .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * 0.7)
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
                            (g - want).abs() < 1e-5,
                            "text {t} head {a} [{i},{d}]: {g} against {want}"
                        );
                    }
                }
            }
        }
    }
}
