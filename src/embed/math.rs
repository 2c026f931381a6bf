//! The encoder's elementwise arithmetic in `f32`: `exp`, `erf`, the row softmax of the
//! attention and the lane-wise reductions of the layer norms (`bert.rs`).
//!
//! Why our own: `f32::exp` and the `erf` of libm are called value by value, and the exact GELU's
//! `f64` erf was 14 % of the time on short texts. These are branch-free polynomials, so loops
//! over them vectorise; the softmax, which the attention runs on every head's scores (a
//! third of the attention's time with the compiler's vectors), has an AVX-512 kernel of its own,
//! chosen at run time. Every level keeps each row's sums and maxima in a fixed order, so a
//! text's vector does not depend on its batch.

/// Each row of `width` values of `values` turned into its softmax, in place: in AVX-512 where
/// the CPU has it ([`softmax_row_avx512`]), else as wide as the CPU allows.
pub fn softmax(values: &mut [f32], width: usize) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::level() == crate::simd::Level::Avx512 {
        for row in values.chunks_exact_mut(width) {
            // SAFETY: the CPU has AVX-512F (`simd::level` never exceeds the CPU's).
            unsafe { softmax_row_avx512(row) };
        }
        return;
    }
    softmax_wide(values, width)
}

crate::wide! {
    /// [`softmax_rows`], as wide as the CPU allows (below AVX-512: see [`softmax`]).
    fn softmax_wide(values: &mut [f32], width: usize) {
        softmax_rows(values, width)
    }
}

#[inline(always)]
fn softmax_rows(values: &mut [f32], width: usize) {
    for row in values.chunks_exact_mut(width) {
        let max = lanes(
            row,
            f32::NEG_INFINITY,
            |v| v,
            |m, v| if v > m { v } else { m },
        );
        row.iter_mut().for_each(|v| *v = exp(*v - max));
        let inv = lanes(row, 0.0, |v| v, |s, v| s + v).recip();
        row.iter_mut().for_each(|v| *v *= inv);
    }
}

/// One row's softmax in AVX-512, 16 values at a time (a masked load and store for the rest):
/// the largest value, then `e^(v - max)` by [`exp`]'s polynomial (in fused multiply-adds) with
/// their sum, then each scaled by the sum's inverse.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn softmax_row_avx512(row: &mut [f32]) {
    use std::arch::x86_64::*;
    let n = row.len();
    let p = row.as_mut_ptr();
    let tail = n % 16;
    let whole = n - tail;
    let rest: __mmask16 = ((1u32 << tail) - 1) as __mmask16;
    // SAFETY: the loads and stores cover `p[..whole]` 16 values at a time and the `tail`
    // values after them through the mask, all within `row`.
    unsafe {
        let low = _mm512_set1_ps(f32::NEG_INFINITY);
        let mut top = [low; 2];
        for (i, at) in (0..whole).step_by(16).enumerate() {
            top[i % 2] = _mm512_max_ps(top[i % 2], _mm512_loadu_ps(p.add(at)));
        }
        if tail > 0 {
            top[0] = _mm512_max_ps(top[0], _mm512_mask_loadu_ps(low, rest, p.add(whole)));
        }
        let max = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_max_ps(top[0], top[1])));
        let mut sum = [_mm512_setzero_ps(); 2];
        for (i, at) in (0..whole).step_by(16).enumerate() {
            let e = exp16(_mm512_sub_ps(_mm512_loadu_ps(p.add(at)), max));
            _mm512_storeu_ps(p.add(at), e);
            sum[i % 2] = _mm512_add_ps(sum[i % 2], e);
        }
        if tail > 0 {
            let v = _mm512_mask_loadu_ps(max, rest, p.add(whole));
            let e = exp16(_mm512_sub_ps(v, max));
            _mm512_mask_storeu_ps(p.add(whole), rest, e);
            sum[0] = _mm512_mask_add_ps(sum[0], rest, sum[0], e);
        }
        let inv = _mm512_set1_ps(_mm512_reduce_add_ps(_mm512_add_ps(sum[0], sum[1])).recip());
        for at in (0..whole).step_by(16) {
            _mm512_storeu_ps(p.add(at), _mm512_mul_ps(_mm512_loadu_ps(p.add(at)), inv));
        }
        if tail > 0 {
            let v = _mm512_mask_loadu_ps(_mm512_setzero_ps(), rest, p.add(whole));
            _mm512_mask_storeu_ps(p.add(whole), rest, _mm512_mul_ps(v, inv));
        }
    }
}

/// e^x of 16 values, for x <= 0 (the softmax's `v - max`): as [`exp`], x = n ln 2 + r with
/// Cephes' polynomial for e^r (one chain of fused multiply-adds), times 2^n by `vscalefps`;
/// x is clamped below at -87.3, so that no result is subnormal.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn exp16(x: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    let x = _mm512_max_ps(x, _mm512_set1_ps(EXP_LOW));
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
        _mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::LOG2_E)),
    );
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HIGH), x);
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LOW), r);
    let mut q = _mm512_set1_ps(EXP_POLY[0]);
    for c in &EXP_POLY[1..] {
        q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(*c));
    }
    let one = _mm512_set1_ps(1.0);
    let e = _mm512_fmadd_ps(_mm512_fmadd_ps(q, r, one), r, one);
    _mm512_scalef_ps(e, n)
}

/// The AVX-512 masks of a 32-column tile's two 16-lane halves holding `cols` columns (a
/// tile's last columns may be fewer): bit `j` is set for each column held.
pub(super) fn tail_masks(cols: usize) -> (u16, u16) {
    let held = |n: usize| if n >= 16 { 0xffff } else { (1u16 << n) - 1 };
    (held(cols), held(cols.saturating_sub(16)))
}

/// `map` of each value of `row` folded by `fold` in 8 lanes side by side, then the lanes folded
/// in order: a reduction the compiler can vectorise, with a fixed order of operations. `fold`
/// must combine two partial results as it combines a result and a value (a sum, a maximum).
#[inline(always)]
pub(super) fn lanes(
    row: &[f32],
    init: f32,
    map: impl Fn(f32) -> f32,
    fold: impl Fn(f32, f32) -> f32,
) -> f32 {
    let mut acc = [init; 8];
    let chunks = row.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = fold(*a, map(v));
        }
    }
    let lanes = acc.into_iter().fold(init, &fold);
    rest.iter().fold(lanes, |a, &v| fold(a, map(v)))
}

/// Adding it rounds an `f32` of magnitude below 2^22 to an integer (1.5 · 2^23).
const ROUND: f32 = 12_582_912.0;
/// [`exp`]'s clamp: e^-87.3 is `f32`'s smallest normal, e^88.4 near its largest.
const EXP_LOW: f32 = -87.336_55;
const EXP_HIGH: f32 = 88.376_26;
/// ln 2 in two parts: 0.6933594 is 355/512 exactly, so n times it is exact.
const LN2_HIGH: f32 = 0.693_359_4;
const LN2_LOW: f32 = -2.121_944_4e-4;
/// Cephes' polynomial for e^r on |r| <= ln 2 / 2, highest power first.
const EXP_POLY: [f32; 6] = [
    1.987_569_1e-4,
    1.398_2e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    0.166_666_65,
    0.5,
];

/// e^x for `f32` (Cephes' `expf`: e^x = 2^n e^r with |r| <= ln 2 / 2 and a degree-6
/// polynomial for e^r), within 2.5e-7 relative; x is clamped to [-87.3, 88.4]. Branch-free, so
/// a loop over it vectorises, where `f32::exp` calls libm value by value.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(EXP_LOW, EXP_HIGH);
    // t holds n = round(x log2 e) in its low mantissa bits; reading them from there (not with
    // `as i32`, which saturates value by value) keeps the loop vectorised.
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let two_n = (t.to_bits().wrapping_sub(ROUND.to_bits()) as i32 + 127) << 23;
    let r = x - n * LN2_HIGH - n * LN2_LOW;
    let mut p = EXP_POLY[0];
    for c in &EXP_POLY[1..] {
        p = p * r + c;
    }
    let e = p * r * r + r + 1.0;
    e * f32::from_bits(two_n as u32)
}

/// erf's rational approximation: numerator and denominator in x², highest power first.
const ERF_P: [f32; 7] = [
    -2.726_142_3e-10,
    2.770_681_4e-8,
    -2.101_024e-6,
    -5.692_506_4e-5,
    -7.349_906e-4,
    -2.954_6e-3,
    -1.609_603_3e-2,
];
const ERF_Q: [f32; 5] = [
    -1.456_607_2e-5,
    -2.133_740_6e-4,
    -1.682_827e-3,
    -7.373_329e-3,
    -1.426_474e-2,
];

/// erf for `f32`: a rational approximation on [-4, 4] (erf is 1 to `f32` precision beyond),
/// the one XLA and Eigen use; within 5e-7 of the true value. Branch-free, so a loop over it
/// vectorises.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = ERF_P[0];
    for c in &ERF_P[1..] {
        p = p * x2 + c;
    }
    let mut q = ERF_Q[0];
    for c in &ERF_Q[1..] {
        q = q * x2 + c;
    }
    x * p / q
}

/// The exact GELU, `x/2 (1 + erf(x/√2))`, of each value plus its column's bias (`values` is
/// rows of `bias.len()` values), in place: in AVX-512 where the CPU has it
/// ([`bias_gelu_avx512`]), else as wide as the CPU allows.
pub fn bias_gelu(values: &mut [f32], bias: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::level() == crate::simd::Level::Avx512 {
        // SAFETY: the CPU has AVX-512F (`simd::level` never exceeds the CPU's).
        unsafe { bias_gelu_avx512(values, bias) };
        return;
    }
    bias_gelu_wide(values, bias)
}

#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

crate::wide! {
    /// [`bias_gelu`] as wide as the CPU allows (below AVX-512).
    fn bias_gelu_wide(values: &mut [f32], bias: &[f32]) {
        for row in values.chunks_exact_mut(bias.len()) {
            for (v, b) in row.iter_mut().zip(bias) {
                *v = gelu(*v + b);
            }
        }
    }
}

/// [`bias_gelu`] in AVX-512, 16 values at a time (a masked load and store for a row's rest).
/// [`erf`]'s division is a reciprocal estimate and one Newton step (`vdivps` on 16 values
/// takes about as long as all the rest), within 1e-7 of the quotient.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn bias_gelu_avx512(values: &mut [f32], bias: &[f32]) {
    use std::arch::x86_64::*;
    let width = bias.len();
    let tail = width % 16;
    let rest: __mmask16 = ((1u32 << tail) - 1) as __mmask16;
    let gelu16 = |x: __m512| {
        let y = _mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::FRAC_1_SQRT_2));
        let y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(-4.0)), _mm512_set1_ps(4.0));
        let y2 = _mm512_mul_ps(y, y);
        let mut p = _mm512_set1_ps(ERF_P[0]);
        for c in &ERF_P[1..] {
            p = _mm512_fmadd_ps(p, y2, _mm512_set1_ps(*c));
        }
        let mut q = _mm512_set1_ps(ERF_Q[0]);
        for c in &ERF_Q[1..] {
            q = _mm512_fmadd_ps(q, y2, _mm512_set1_ps(*c));
        }
        let r = _mm512_rcp14_ps(q);
        let r = _mm512_mul_ps(r, _mm512_fnmadd_ps(q, r, _mm512_set1_ps(2.0)));
        let erf = _mm512_mul_ps(_mm512_mul_ps(y, p), r);
        let half = _mm512_mul_ps(x, _mm512_set1_ps(0.5));
        _mm512_fmadd_ps(half, erf, half)
    };
    for row in values.chunks_exact_mut(width) {
        let (p, b) = (row.as_mut_ptr(), bias.as_ptr());
        // SAFETY: the loads and stores cover the row's and the bias's `width` values, 16 at a
        // time and the rest through the mask.
        unsafe {
            for at in (0..width - tail).step_by(16) {
                let x = _mm512_add_ps(_mm512_loadu_ps(p.add(at)), _mm512_loadu_ps(b.add(at)));
                _mm512_storeu_ps(p.add(at), gelu16(x));
            }
            if tail > 0 {
                let at = width - tail;
                let zero = _mm512_setzero_ps();
                let x = _mm512_add_ps(
                    _mm512_mask_loadu_ps(zero, rest, p.add(at)),
                    _mm512_mask_loadu_ps(zero, rest, b.add(at)),
                );
                _mm512_mask_storeu_ps(p.add(at), rest, gelu16(x));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_masks_hold_each_column_of_the_tile() {
        for cols in 0..=40 {
            let (low, high) = tail_masks(cols);
            let held = (u32::from(high) << 16) | u32::from(low);
            assert_eq!(held.count_ones() as usize, cols.min(32), "{cols}");
            assert_eq!(held.trailing_ones() as usize, cols.min(32), "{cols}");
        }
    }

    #[test]
    fn erf_is_within_5e7_of_the_true_erf() {
        let mut worst = 0f64;
        for i in -600_000..=600_000 {
            let x = i as f32 * 1e-5;
            let exact = candle_core::cpu::erf::erf_f64(x as f64);
            worst = worst.max((erf(x) as f64 - exact).abs());
        }
        assert!(worst < 5e-7, "worst error {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(-2.0), -erf(2.0));
    }

    #[test]
    fn exp_is_within_2_ulp_of_the_true_exp() {
        let mut worst = 0f64;
        for i in -873_000..=880_000 {
            let x = i as f32 * 1e-4;
            let exact = (x as f64).exp();
            worst = worst.max(((exp(x) as f64 - exact) / exact).abs());
        }
        assert!(worst < 2.5e-7, "worst relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-200.0) < 1.2e-38 && exp(-200.0) >= 0.0);
    }

    /// The GELU with its bias, at this CPU's level and the compiler's, against the exact one
    /// (`f64` erf), on rows with a rest of 16 and without.
    #[test]
    fn bias_gelu_matches_the_exact_gelu() {
        for width in [3, 16, 37, 384] {
            let bias: Vec<f32> = (0..width).map(|j| (j % 7) as f32 * 0.3 - 0.9).collect();
            let values: Vec<f32> = (0..5 * width)
                .map(|i| (i * 53 % 211) as f32 / 20.0 - 5.3)
                .collect();
            let mut got = values.clone();
            bias_gelu(&mut got, &bias);
            let mut wide = values.clone();
            bias_gelu_wide(&mut wide, &bias);
            for (i, v) in values.iter().enumerate() {
                let x = (*v + bias[i % width]) as f64;
                let want = 0.5 * x * (1.0 + candle_core::cpu::erf::erf_f64(x / 2f64.sqrt()));
                for (level, g) in [("this CPU's", got[i]), ("the compiler's", wide[i])] {
                    assert!(
                        (g as f64 - want).abs() <= 1e-6 * (1.0 + want.abs()),
                        "width {width} [{i}], {level} GELU of {x}: {g} against {want}"
                    );
                }
            }
        }
    }

    /// The softmax of every level against a plain `f64` one, for rows whose lengths leave
    /// every remainder of 16, with large and small scores.
    #[test]
    fn softmax_matches_a_plain_one() {
        for width in [1, 5, 16, 17, 31, 128, 130] {
            let values: Vec<f32> = (0..3 * width)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) * if i % 7 == 0 { 1.9 } else { 0.13 })
                .collect();
            let mut got = values.clone();
            softmax(&mut got, width);
            let mut wide = values.clone();
            softmax_wide(&mut wide, width);
            for ((row, got), wide) in values
                .chunks(width)
                .zip(got.chunks(width))
                .zip(wide.chunks(width))
            {
                let top = row.iter().fold(f64::MIN, |m, &v| m.max(v as f64));
                let sum: f64 = row.iter().map(|&v| (v as f64 - top).exp()).sum();
                for j in 0..width {
                    let want = (row[j] as f64 - top).exp() / sum;
                    for (level, v) in [("this CPU's", got[j]), ("the compiler's", wide[j])] {
                        assert!(
                            (v as f64 - want).abs() <= 2e-6 * want + 1e-12,
                            "width {width} [{j}], {level} softmax: {v} against {want}"
                        );
                    }
                }
            }
        }
    }
}
