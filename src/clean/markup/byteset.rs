//! Sets of bytes the cleaner stops at, found 32 bytes at a time.
//!
//! The cleaner copies ordinary text in runs and only stops at bytes of a small set (see
//! `SPECIAL` in `scan.rs`). Looking each byte up in a 256-entry table costs a load and a
//! branch per byte, and the branch is mispredicted at the end of nearly every word. With AVX2,
//! [`ByteSet::mask`] classifies 32 bytes at once by the classic split into nibbles: a byte is in
//! the set when `LOW[b & 15] & HIGH[b >> 4]` is not zero, each bit of the two 16-entry tables
//! standing for one high nibble's set of low nibbles. The tables are built from the flags at
//! compile time, and the scalar table serves the tail of a text and CPUs without AVX2, so
//! both paths find exactly the same bytes.

/// A set of bytes: its flags, and the nibble tables of [`ByteSet::mask`].
pub struct ByteSet {
    pub flags: [bool; 256],
    low: [u8; 16],
    high: [u8; 16],
}

impl ByteSet {
    /// The set of the bytes flagged in `flags`. Fails to compile when the high nibbles of the
    /// set need more than eight distinct sets of low nibbles (every set the cleaner uses needs
    /// seven at most).
    pub const fn new(flags: [bool; 256]) -> ByteSet {
        let mut low = [0u8; 16];
        let mut high = [0u8; 16];
        // Each distinct non-empty set of low nibbles (over the high nibbles) gets one bit.
        let mut bit_sets = [0u16; 8];
        let mut bits = 0;
        let mut h = 0;
        while h < 16 {
            let mut lows = 0u16;
            let mut l = 0;
            while l < 16 {
                if flags[h * 16 + l] {
                    lows |= 1 << l;
                }
                l += 1;
            }
            if lows != 0 {
                let mut bit = 0;
                while bit < bits && bit_sets[bit] != lows {
                    bit += 1;
                }
                if bit == bits {
                    assert!(
                        bits < 8,
                        "the byte set needs more than eight nibble classes"
                    );
                    bit_sets[bit] = lows;
                    bits += 1;
                }
                high[h] |= 1 << bit;
                let mut l = 0;
                while l < 16 {
                    if lows & (1 << l) != 0 {
                        low[l] |= 1 << bit;
                    }
                    l += 1;
                }
            }
            h += 1;
        }
        ByteSet { flags, low, high }
    }

    /// Whether `b` is in the set.
    #[inline]
    pub fn contains(&self, b: u8) -> bool {
        self.flags[b as usize]
    }

    /// The first byte of `b` at or after `from` in the set, or `b.len()`.
    #[inline]
    pub fn find(&self, b: &[u8], from: usize) -> usize {
        let mut i = from;
        #[cfg(target_arch = "x86_64")]
        if b.len() >= 32 && crate::simd::has(crate::simd::Level::Avx2) {
            while i + 32 <= b.len() {
                // SAFETY: the CPU has AVX2 (`simd::has` just above), and `i + 32 <= b.len()`.
                let m = unsafe { self.mask(b, i) };
                if m != 0 {
                    return i + m.trailing_zeros() as usize;
                }
                i += 32;
            }
        }
        b.get(i..)
            .and_then(|t| t.iter().position(|&x| self.contains(x)))
            .map_or(b.len(), |p| i + p)
    }

    /// Bit `j` set when `b[at + j]` is in the set, for `j` in `0..32`.
    ///
    /// # Safety
    /// The CPU supports AVX2, and `at + 32 <= b.len()`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn mask(&self, b: &[u8], at: usize) -> u32 {
        use std::arch::x86_64::*;
        debug_assert!(at + 32 <= b.len());
        // SAFETY: the caller guarantees 32 readable bytes at `at`; the tables are 16 bytes.
        unsafe {
            let v = _mm256_loadu_si256(b.as_ptr().add(at).cast());
            let low = _mm256_broadcastsi128_si256(_mm_loadu_si128(self.low.as_ptr().cast()));
            let high = _mm256_broadcastsi128_si256(_mm_loadu_si128(self.high.as_ptr().cast()));
            let nibble = _mm256_set1_epi8(0x0F);
            let lo = _mm256_and_si256(v, nibble);
            let hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
            let hit = _mm256_and_si256(_mm256_shuffle_epi8(low, lo), _mm256_shuffle_epi8(high, hi));
            let none = _mm256_cmpeq_epi8(hit, _mm256_setzero_si256());
            !(_mm256_movemask_epi8(none) as u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn flags_of(bytes: &[u8], below: u8) -> [bool; 256] {
        let mut t = [false; 256];
        let mut i = 0;
        while i < below as usize {
            t[i] = true;
            i += 1;
        }
        let mut k = 0;
        while k < bytes.len() {
            t[bytes[k] as usize] = true;
            k += 1;
        }
        t
    }

    static SET: ByteSet = ByteSet::new(flags_of(b"\\${}~`*_[&(- \x7F\xC2\xE1\xE2\xE3\xEF", 0x20));

    #[test]
    fn the_nibble_tables_hold_exactly_the_flagged_bytes() {
        for b in 0..=255u8 {
            let by_tables = SET.low[(b & 15) as usize] & SET.high[(b >> 4) as usize] != 0;
            assert_eq!(by_tables, SET.contains(b), "byte {b:#04x}");
        }
    }

    #[test]
    fn find_agrees_with_the_flags_at_every_offset() {
        // Every byte value, in a text long enough for several blocks and a tail.
        let text: Vec<u8> = (0..300u32).map(|i| (i * 97 % 256) as u8).collect();
        for from in 0..text.len() {
            let expected = (from..text.len())
                .find(|&i| SET.contains(text[i]))
                .unwrap_or(text.len());
            assert_eq!(SET.find(&text, from), expected, "from {from}");
        }
        let plain = vec![b'a'; 100];
        assert_eq!(SET.find(&plain, 3), 100);
    }
}
