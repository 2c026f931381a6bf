//! The words of an ASCII text, found 64 bytes at a time.
//!
//! The rules (see [`super::segmenter`]): a word is a run of letters, digits and `_`, in which one
//! `.` or `'` between two letters or two digits, `:` between two letters, or `,` or `;` between
//! two digits does not break the run; a run of underscores alone is no word. Scanning byte by
//! byte costs a branch per byte, mispredicted at the end of nearly every word and every gap.
//! Here each 64-byte block is classified at once into a bit mask of its word bytes (with AVX2,
//! else byte by byte into the same mask), and words are read off the mask with bit counts.
//! A joiner's neighbours across a block edge are looked up in the text, so blocks change
//! nothing: a property test holds the scan to the byte-by-byte rules.

const BLOCK: usize = 64;

/// The classes of a block's bytes, one bit per byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Classes {
    letter: u64,
    digit: u64,
    underscore: u64,
    /// `.` and `'`.
    dot_apostrophe: u64,
    colon: u64,
    /// `,` and `;`.
    comma_semicolon: u64,
}

impl Classes {
    /// The classes of the 64 bytes of `block`, byte by byte.
    fn bytewise(block: &[u8; BLOCK]) -> Classes {
        let mut c = Classes::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'a'..=b'z' | b'A'..=b'Z' => c.letter |= bit,
                b'0'..=b'9' => c.digit |= bit,
                b'_' => c.underscore |= bit,
                b'.' | b'\'' => c.dot_apostrophe |= bit,
                b':' => c.colon |= bit,
                b',' | b';' => c.comma_semicolon |= bit,
                _ => {}
            }
        }
        c
    }

    /// As [`Self::bytewise`], 32 bytes per instruction (a caller without AVX2 enabled must
    /// know that the CPU has it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn avx2(block: &[u8; BLOCK]) -> Classes {
        use std::arch::x86_64::*;
        // SAFETY: both loads read 32 of the block's 64 bytes.
        let halves = unsafe {
            [
                _mm256_loadu_si256(block.as_ptr().cast()),
                _mm256_loadu_si256(block.as_ptr().add(32).cast()),
            ]
        };
        let mut c = Classes::default();
        for (h, v) in halves.into_iter().enumerate() {
            let shift = 32 * h as u32;
            let bits = |m: __m256i| (_mm256_movemask_epi8(m) as u32 as u64) << shift;
            let eq = |b: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8));
            // Signed comparisons: ASCII bytes are all positive.
            let within = |x: __m256i, lo: u8, hi: u8| {
                _mm256_and_si256(
                    _mm256_cmpgt_epi8(x, _mm256_set1_epi8(lo as i8 - 1)),
                    _mm256_cmpgt_epi8(_mm256_set1_epi8(hi as i8 + 1), x),
                )
            };
            let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
            c.letter |= bits(within(folded, b'a', b'z'));
            c.digit |= bits(within(v, b'0', b'9'));
            c.underscore |= bits(eq(b'_'));
            c.dot_apostrophe |= bits(_mm256_or_si256(eq(b'.'), eq(b'\'')));
            c.colon |= bits(eq(b':'));
            c.comma_semicolon |= bits(_mm256_or_si256(eq(b','), eq(b';')));
        }
        c
    }
}

/// The word bytes of the block of `text` at `start` (bit `i`: byte `start + i`), and which of
/// them are letters or digits. Bytes past the end count as spaces.
fn block_words(text: &[u8], start: usize, avx2: bool) -> (u64, u64) {
    let mut buf = [0u8; BLOCK];
    let block: &[u8; BLOCK] = match text.get(start..start + BLOCK) {
        Some(b) => b.try_into().expect("a slice of BLOCK bytes"),
        None => {
            let rest = &text[start..];
            buf[..rest.len()].copy_from_slice(rest);
            &buf
        }
    };
    let c = if avx2 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `avx2` is only true where the CPU has AVX2 (`AsciiWords::new`, and tests that
        // ask `simd::cpu`).
        unsafe {
            Classes::avx2(block)
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("AVX2 is only detected on x86_64")
    } else {
        Classes::bytewise(block)
    };
    // The neighbours of each byte: bit `i` of `before` is byte `i - 1`'s class, of `after`
    // byte `i + 1`'s, across the block's edges.
    let class_at = |i: Option<usize>| {
        let b = i.and_then(|i| text.get(i)).copied().unwrap_or(b' ');
        (b.is_ascii_alphabetic() as u64, b.is_ascii_digit() as u64)
    };
    let (letter_before, digit_before) = class_at(start.checked_sub(1));
    let (letter_after, digit_after) = class_at(Some(start + BLOCK));
    let letters = (c.letter << 1 | letter_before) & (c.letter >> 1 | letter_after << 63);
    let digits = (c.digit << 1 | digit_before) & (c.digit >> 1 | digit_after << 63);
    let core = c.letter | c.digit | c.underscore;
    let joined =
        c.dot_apostrophe & (letters | digits) | c.colon & letters | c.comma_semicolon & digits;
    (core | joined, c.letter | c.digit)
}

/// The words of an ASCII text (see the module docs).
pub struct AsciiWords<'a> {
    text: &'a str,
    pos: usize,
    /// The block last classified: its start and word bytes.
    block: usize,
    words: u64,
    avx2: bool,
}

impl<'a> AsciiWords<'a> {
    /// The words of `text`, which must be ASCII.
    pub fn new(text: &'a str) -> AsciiWords<'a> {
        debug_assert!(text.is_ascii());
        AsciiWords::with(text, crate::simd::has(crate::simd::Level::Avx2))
    }

    fn with(text: &'a str, avx2: bool) -> AsciiWords<'a> {
        AsciiWords {
            text,
            pos: 0,
            block: usize::MAX,
            words: 0,
            avx2,
        }
    }

    /// The word bits of the block holding byte `i`, from `i` on (bit 0: byte `i`), complemented
    /// when `gaps`; and the start of the next block.
    #[inline]
    fn bits_from(&mut self, i: usize, gaps: bool) -> (u64, usize) {
        let start = i & !(BLOCK - 1);
        if start != self.block {
            self.block = start;
            self.words = block_words(self.text.as_bytes(), start, self.avx2).0;
        }
        let bits = if gaps { !self.words } else { self.words };
        (bits >> (i - start), start + BLOCK)
    }

    /// The first byte at or after `i` that is (`gaps`: is not) a word byte, or the text's end.
    #[inline]
    fn first(&mut self, mut i: usize, gaps: bool) -> usize {
        let n = self.text.len();
        while i < n {
            let (bits, next) = self.bits_from(i, gaps);
            if bits != 0 {
                return (i + bits.trailing_zeros() as usize).min(n);
            }
            i = next;
        }
        n
    }
}

impl<'a> Iterator for AsciiWords<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        loop {
            let start = self.first(self.pos, false);
            if start >= b.len() {
                self.pos = b.len();
                return None;
            }
            let end = self.first(start + 1, true);
            self.pos = end;
            // A run of underscores only is a segment without a letter or digit: not a word.
            if b[start] != b'_' || b[start..end].iter().any(u8::is_ascii_alphanumeric) {
                // The run starts and ends on ASCII bytes, so it lies on char boundaries.
                return Some(&self.text[start..end]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules byte by byte, as the scan read them before blocks.
    fn bytewise(text: &str) -> Vec<&str> {
        let core = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let joins = |b: u8, prev: u8, next: u8| {
            let letters = prev.is_ascii_alphabetic() && next.is_ascii_alphabetic();
            let digits = prev.is_ascii_digit() && next.is_ascii_digit();
            match b {
                b'.' | b'\'' => letters || digits,
                b':' => letters,
                b',' | b';' => digits,
                _ => false,
            }
        };
        let (b, n) = (text.as_bytes(), text.len());
        let (mut out, mut i) = (Vec::new(), 0);
        loop {
            while i < n && !core(b[i]) {
                i += 1;
            }
            if i >= n {
                return out;
            }
            let start = i;
            i += 1;
            while i < n && (core(b[i]) || (i + 1 < n && joins(b[i], b[i - 1], b[i + 1]))) {
                i += 1;
            }
            if b[start..i].iter().any(u8::is_ascii_alphanumeric) {
                out.push(&text[start..i]);
            }
        }
    }

    /// The classes the tokenizer's rules give a byte, from std's ASCII predicates.
    fn by_rule(block: &[u8; BLOCK]) -> Classes {
        let mask = |keep: fn(u8) -> bool| {
            (0..BLOCK)
                .filter(|&i| keep(block[i]))
                .fold(0u64, |m, i| m | 1 << i)
        };
        Classes {
            letter: mask(|b| b.is_ascii_alphabetic()),
            digit: mask(|b| b.is_ascii_digit()),
            underscore: mask(|b| b == b'_'),
            dot_apostrophe: mask(|b| b == b'.' || b == b'\''),
            colon: mask(|b| b == b':'),
            comma_semicolon: mask(|b| b == b',' || b == b';'),
        }
    }

    /// Every byte value at several places in a block: the byte-by-byte classifier, and the AVX2
    /// one where this CPU has it, give the classes the rules name.
    #[test]
    fn the_classifiers_give_every_byte_its_class() {
        let all: Vec<u8> = (0..=255u8).chain((0..=255).rev()).collect();
        for block in all.chunks_exact(BLOCK) {
            let block: &[u8; BLOCK] = block.try_into().unwrap();
            let expected = by_rule(block);
            assert_eq!(Classes::bytewise(block), expected);
            #[cfg(target_arch = "x86_64")]
            if crate::simd::cpu() >= crate::simd::Level::Avx2 {
                // SAFETY: the CPU has AVX2.
                assert_eq!(unsafe { Classes::avx2(block) }, expected);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// On ASCII texts long enough for several blocks, with the bytes the rules treat
        /// differently at every position, both classifiers give the byte-by-byte words.
        #[test]
        fn blocks_find_the_bytewise_words(text in "([aZ09_.',:; \\-]|[a-z]{1,12}|[0-9]{1,5}){0,90}") {
            let expected = bytewise(&text);
            proptest::prop_assert_eq!(AsciiWords::with(&text, false).collect::<Vec<_>>(), expected.clone());
            if crate::simd::cpu() >= crate::simd::Level::Avx2 {
                proptest::prop_assert_eq!(AsciiWords::with(&text, true).collect::<Vec<_>>(), expected);
            }
        }
    }
}
