//! A static table's rows as the model stores them (f16 kept as f16, anything else in f32),
//! and the sum of a text's rows: the static model's whole arithmetic.
//!
//! Why its own kernels: a text's vector is the sum of a few hundred rows of a table of 32,000,
//! which is larger than the core's cache, so the sum waits on memory, not on arithmetic.
//! Keeping an f16 table in f16 halves what is read (and the table's memory), and the sums stay
//! in registers over all of a text's rows instead of going through memory after each. The
//! conversion is exact (every f16 is an f32) and every level adds the same values in the same
//! order (the text's rows, one after the other, into zero), so each level gives the same bits
//! as the portable loop; `TOPICMAP_DEBUG_SIMD` picks the level as for every kernel
//! ([`crate::simd`]).

/// The table's rows, each `dims` values.
pub struct Rows {
    values: Values,
    dims: usize,
    /// The f16 rows' first values alone, for sums narrower than a row (placement sums only the
    /// values its features keep): made by the first such sum, for its width (7.8 MiB more for
    /// WordLlama's 32,000 rows at 128 of their 256 values; see [`Rows::add`]).
    narrow: std::sync::OnceLock<(usize, Vec<u16>)>,
}

/// The rows' values, one row after the other.
enum Values {
    /// IEEE half floats, as WordLlama ships them.
    F16(Vec<u16>),
    /// Single floats (f32 tables, and bf16 ones widened once).
    F32(Vec<f32>),
}

impl Rows {
    /// The rows of an f16 table of `dims` values a row: kept in f16 where the CPU converts
    /// halves in its vectors (at the level in use), widened to f32 once otherwise (the same
    /// values either way).
    pub fn of_f16(halves: Vec<u16>, dims: usize) -> Rows {
        let values = match f16_kernel() {
            true => Values::F16(halves),
            false => Values::F32(halves.into_iter().map(f16_to_f32).collect()),
        };
        Rows {
            values,
            dims,
            narrow: std::sync::OnceLock::new(),
        }
    }

    /// The rows of an f32 table of `dims` values a row.
    pub fn of_f32(values: Vec<f32>, dims: usize) -> Rows {
        Rows {
            values: Values::F32(values),
            dims,
            narrow: std::sync::OnceLock::new(),
        }
    }

    /// A row's length.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Adds the first `sum.len()` values (at most a row's) of the rows `ids` (each below the
    /// row count) to `sum`, in order, each value added to `sum`'s as an f32. Each value's sum
    /// is the same whatever the width: a value of `sum` sees the same rows in the same order,
    /// so the first values of a wider sum are those of a narrower one, to the bit. A narrower
    /// sum of f16 rows reads a copy of the rows' first values, side by side (made once, for
    /// the first such width): the rows' other values then take no room in the cache
    /// (docs/benchmarks.md has the figures).
    pub fn add(&self, ids: &[u32], sum: &mut [f32]) {
        assert!(
            sum.len() <= self.dims,
            "a sum no wider than the table's rows"
        );
        match &self.values {
            Values::F32(t) => add_f32(t, ids, self.dims, sum),
            Values::F16(t) => match self.narrowed(t, sum.len()) {
                Some(narrow) => add_f16(narrow, ids, sum.len(), sum),
                None => add_f16(t, ids, self.dims, sum),
            },
        }
    }

    /// The f16 rows `t` cut to their first `width` values, side by side, when `width` is
    /// narrower than a row and is the width the copy was made for (by the first such call).
    fn narrowed<'a>(&'a self, t: &[u16], width: usize) -> Option<&'a [u16]> {
        if width >= self.dims {
            return None;
        }
        let (w, narrow) = self.narrow.get_or_init(|| {
            let narrow = t.chunks_exact(self.dims).flat_map(|r| &r[..width]);
            (width, narrow.copied().collect())
        });
        (*w == width).then_some(narrow.as_slice())
    }
}

crate::wide! {
    /// The f32 rows' sum, the compiler's vectors at each level.
    fn add_f32(table: &[f32], ids: &[u32], dims: usize, sum: &mut [f32]) {
        let width = sum.len();
        for &id in ids {
            let v = &table[id as usize * dims..id as usize * dims + width];
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x;
            }
        }
    }
}

/// IEEE half to single precision (exact: every f16 is an f32).
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: frac x 2^-24.
            let v = frac as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// Whether the level in use has a kernel for f16 rows.
fn f16_kernel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::simd::{level, Level};
        if level() >= Level::Avx512
            || (level() >= Level::Avx2 && std::arch::is_x86_feature_detected!("f16c"))
        {
            return true;
        }
    }
    false
}

/// The f16 rows' sum: AVX-512 or AVX2 with F16C where the level allows, else portable (slow:
/// [`Rows::of_f16`] keeps f16 only where a kernel runs).
fn add_f16(table: &[u16], ids: &[u32], dims: usize, sum: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::simd::{level, Level};
        if level() >= Level::Avx512 {
            // SAFETY: the CPU has AVX-512F (the level never exceeds the CPU's).
            unsafe { add_f16_avx512(table, ids, dims, sum) };
            return;
        }
        if level() >= Level::Avx2 && std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX and F16C.
            unsafe { add_f16_avx2(table, ids, dims, sum) };
            return;
        }
    }
    add_f16_portable(table, ids, dims, sum, 0);
}

/// The portable sum of the values from `from` up to `sum.len()` of each row (of `dims`).
fn add_f16_portable(table: &[u16], ids: &[u32], dims: usize, sum: &mut [f32], from: usize) {
    let width = sum.len();
    for &id in ids {
        let v = &table[id as usize * dims..id as usize * dims + width];
        for (s, &h) in sum[from..].iter_mut().zip(&v[from..]) {
            *s += f16_to_f32(h);
        }
    }
}

/// How many ids ahead the kernels ask for a row: the rows are read at random from a table
/// larger than the core's cache, so each waits on memory unless it was asked for earlier.
#[cfg(target_arch = "x86_64")]
const AHEAD: usize = 8;

/// One f16 kernel: `$lanes` floats a register, the columns summed in blocks of up to `$regs`
/// registers kept in registers over all the rows (then stored, and the next columns summed),
/// its halves loaded by `$half` and widened by `$cvt`; the columns past the last whole register
/// go to the portable loop. The rows `AHEAD` ids on are prefetched, a cache line at a time.
/// A block's width is a constant of its own function (`R` registers: `$regs`, then halves of
/// it), so the compiler keeps the sums in registers: with the width known only at run time
/// they lived on the stack, each row's add a load and a store (the profile's hottest lines).
#[cfg(target_arch = "x86_64")]
macro_rules! f16_kernel {
    ($(#[$doc:meta])* $name:ident, $block:ident, $feature:literal, $lanes:literal, $regs:literal,
     $zero:ident, $load:ident, $half:ident, $cvt:ident, $add:ident, $store:ident) => {
        /// The sums of `R` registers' columns from column `b` on, over all of `ids`' rows.
        ///
        /// # Safety
        /// As the kernel's; `b + R * LANES` is at most `sum.len()`.
        #[target_feature(enable = $feature)]
        unsafe fn $block<const R: usize>(
            table: &[u16],
            ids: &[u32],
            dims: usize,
            sum: &mut [f32],
            b: usize,
        ) {
            use std::arch::x86_64::*;
            const LANES: usize = $lanes;
            /// Halves in a cache line.
            const LINE: usize = 32;
            let width = R * LANES;
            let mut acc = [$zero(); R];
            for (a, s) in acc.iter_mut().zip(sum[b..b + width].chunks_exact(LANES)) {
                // SAFETY: `s` holds LANES floats.
                *a = unsafe { $load(s.as_ptr()) };
            }
            for (j, &id) in ids.iter().enumerate() {
                if let Some(&next) = ids.get(j + AHEAD) {
                    let at = next as usize * dims + b;
                    for line in (0..width).step_by(LINE) {
                        // A hint only: it reads nothing, and an address past the table
                        // (never, as the ids are below the row count) would not fault.
                        _mm_prefetch::<_MM_HINT_T0>(table.as_ptr().wrapping_add(at + line).cast());
                    }
                }
                let at = id as usize * dims + b;
                let row = &table[at..at + width];
                for (r, a) in acc.iter_mut().enumerate() {
                    // SAFETY: the row holds R * LANES halves; register r's are LANES of them,
                    // the register's width in bytes / 2.
                    let h = unsafe { $half(row.as_ptr().add(r * LANES).cast()) };
                    *a = $add(*a, $cvt(h));
                }
            }
            for (a, s) in acc.iter().zip(sum[b..b + width].chunks_exact_mut(LANES)) {
                // SAFETY: `s` holds LANES floats.
                unsafe { $store(s.as_mut_ptr(), *a) };
            }
        }

        $(#[$doc])*
        #[target_feature(enable = $feature)]
        unsafe fn $name(table: &[u16], ids: &[u32], dims: usize, sum: &mut [f32]) {
            const LANES: usize = $lanes;
            const REGS: usize = $regs;
            let whole = sum.len();
            let mut b = 0;
            loop {
                let regs = (whole - b) / LANES;
                let Some(r) = [REGS, REGS / 2, REGS / 4, 1].into_iter().find(|&r| r <= regs)
                else {
                    break;
                };
                // SAFETY: the CPU has the kernel's features (the caller's promise), and the
                // block's columns end within `sum` (`regs` whole registers remain, `r` of them
                // summed).
                unsafe {
                    if r == REGS {
                        $block::<REGS>(table, ids, dims, sum, b)
                    } else if r == REGS / 2 {
                        $block::<{ REGS / 2 }>(table, ids, dims, sum, b)
                    } else if r == REGS / 4 {
                        $block::<{ REGS / 4 }>(table, ids, dims, sum, b)
                    } else {
                        $block::<1>(table, ids, dims, sum, b)
                    }
                };
                b += r * LANES;
            }
            // The tail, if any: without one, the loop would still walk every id for nothing.
            if b < whole {
                add_f16_portable(table, ids, dims, sum, b);
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
f16_kernel!(
    /// # Safety
    /// The CPU has AVX-512F.
    add_f16_avx512, block_avx512, "avx512f", 16, 16, _mm512_setzero_ps, _mm512_loadu_ps, _mm256_loadu_si256,
    _mm512_cvtph_ps, _mm512_add_ps, _mm512_storeu_ps
);

#[cfg(target_arch = "x86_64")]
f16_kernel!(
    /// # Safety
    /// The CPU has AVX and F16C.
    add_f16_avx2, block_avx2, "avx,f16c", 8, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm_loadu_si128,
    _mm256_cvtph_ps, _mm256_add_ps, _mm256_storeu_ps
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kernel the CPU has gives the portable loop's bits, on widths with a tail; and the
    /// sum of each row's first values is the first values of the whole rows' sum.
    #[test]
    fn every_kernel_sums_as_the_portable_loop() {
        // 469 = 16 x (16 + 8 + 4 + 1) + 5: every block of registers at either level, and a tail.
        let (rows, dims) = (50usize, 469usize);
        let mut x = 0x9e37_79b9u32;
        let f16: Vec<u16> = (0..rows * dims)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                // Finite halves of either sign (exponent below 31).
                ((x >> 16) as u16) & 0xbbff
            })
            .collect();
        let ids: Vec<u32> = (0..300).map(|i| (i * 7 % rows) as u32).collect();
        let mut whole = vec![0f32; dims];
        add_f16_portable(&f16, &ids, dims, &mut whole, 0);
        assert!(whole.iter().any(|&v| v != 0.0));
        let f32s: Vec<f32> = f16.iter().map(|&h| f16_to_f32(h)).collect();
        let shared = Rows::of_f16(f16.clone(), dims);
        for width in [dims, 264, 128, 37, 16, 8, 5] {
            let want = &whole[..width];
            let mut got = vec![0f32; width];
            add_f16(&f16, &ids, dims, &mut got);
            assert_eq!(got, want, "the level in use, {width} values");
            #[cfg(target_arch = "x86_64")]
            {
                if crate::simd::cpu() >= crate::simd::Level::Avx512 {
                    let mut got = vec![0f32; width];
                    // SAFETY: the CPU has AVX-512F.
                    unsafe { add_f16_avx512(&f16, &ids, dims, &mut got) };
                    assert_eq!(got, want, "AVX-512, {width} values");
                }
                if std::arch::is_x86_feature_detected!("avx")
                    && std::arch::is_x86_feature_detected!("f16c")
                {
                    let mut got = vec![0f32; width];
                    // SAFETY: the CPU has AVX and F16C.
                    unsafe { add_f16_avx2(&f16, &ids, dims, &mut got) };
                    assert_eq!(got, want, "AVX2 with F16C, {width} values");
                }
            }
            let mut got = vec![0f32; width];
            Rows::of_f32(f32s.clone(), dims).add(&ids, &mut got);
            assert_eq!(got, want, "an f32 table, {width} values");
            // A table's first narrower sum makes its narrow rows; a sum of another width
            // reads the whole rows.
            let mut got = vec![0f32; width];
            Rows::of_f16(f16.clone(), dims).add(&ids, &mut got);
            assert_eq!(got, want, "f16 rows, {width} values");
            let mut got = vec![0f32; width];
            shared.add(&ids, &mut got);
            assert_eq!(
                got, want,
                "f16 rows narrowed for another width, {width} values"
            );
        }
    }

    #[test]
    fn half_floats_convert_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }
}
