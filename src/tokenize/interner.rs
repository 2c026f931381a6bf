//! Word interning for [`super::TokenizedCorpus::build`]: word -> dense id, for every token.
//!
//! This lookup runs once per token (hundreds of millions on a large corpus), so it is tuned:
//! a word of at most 15 bytes (nearly all words) is packed with its length into a `u128`, so
//! hashing is two multiplications and equality one integer comparison, and no byte of an earlier
//! document's text is read again. Longer words go to an ordinary string map.

use rustc_hash::FxHashMap;

/// Longest word, in bytes, kept in the packed map.
const SHORT: usize = 15;

/// Maps words to ids `0, 1, 2, …` in order of first sight.
#[derive(Default)]
pub struct Interner<'a> {
    short: FxHashMap<u128, u32>,
    long: FxHashMap<&'a str, u32>,
    words: Vec<&'a str>,
}

impl<'a> Interner<'a> {
    /// The id of `w`, new if `w` was not seen before.
    #[inline]
    pub fn intern(&mut self, w: &'a str) -> u32 {
        let next = self.words.len() as u32;
        let id = match pack(w) {
            Some(key) => *self.short.entry(key).or_insert(next),
            None => *self.long.entry(w).or_insert(next),
        };
        if id == next {
            self.words.push(w);
        }
        id
    }

    /// The distinct words, by id.
    pub fn into_words(self) -> Vec<&'a str> {
        self.words
    }
}

/// `w`'s bytes and length in one integer, if it is short enough.
#[inline]
fn pack(w: &str) -> Option<u128> {
    let b = w.as_bytes();
    if b.len() > SHORT {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..b.len()].copy_from_slice(b);
    buf[SHORT] = b.len() as u8;
    Some(u128::from_le_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_first_sight_across_short_and_long_words() {
        let long = "electroencephalography";
        let mut i = Interner::default();
        let ids: Vec<u32> = ["a", long, "a", "b", long, "", "a\0", "b"]
            .iter()
            .map(|w| i.intern(w))
            .collect();
        assert_eq!(ids, vec![0, 1, 0, 2, 1, 3, 4, 2]);
        assert_eq!(i.into_words(), vec!["a", long, "b", "", "a\0"]);
    }

    #[test]
    fn packing_keeps_words_apart() {
        // Same bytes up to padding, different lengths; 15 and 16 bytes either side of the limit.
        assert_ne!(pack("ab"), pack("ab\0"));
        assert!(pack("exactly15bytes!").is_some());
        assert!(pack("sixteen-bytes-xx").is_none());
        let mut i = Interner::default();
        let words = [
            "exactly15bytes!",
            "exactly15bytes?",
            "sixteen-bytes-xx",
            "sixteen-bytes-xy",
        ];
        let ids: Vec<u32> = words.iter().map(|w| i.intern(w)).collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
    }
}
