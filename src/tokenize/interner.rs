//! Word interning for [`super::TokenizedCorpus::build_texts`]: word -> dense id, for every token.
//!
//! This lookup runs once per token (hundreds of millions on a large corpus), so it is tuned:
//! a word of at most 15 bytes (nearly all words) is packed with its length into a `u128`, so
//! hashing is two multiplications and equality one integer comparison, and no byte of an earlier
//! document's text is read again. Longer words go to an ordinary string map.

use rustc_hash::FxHashMap;

/// Longest word, in bytes, kept in the packed map.
const SHORT: usize = 15;

/// The key of every word longer than [`SHORT`] bytes (a packed word's length byte is at most 15).
const LONG: u128 = 0xFF << 120;

/// Maps words to ids `0, 1, 2, …` in order of first sight.
#[derive(Default)]
pub struct Interner<'a> {
    short: FxHashMap<u128, u32>,
    long: FxHashMap<&'a str, u32>,
    words: Vec<&'a str>,
    /// Each word's packed key, so that merging interners never reads the words' bytes again
    /// (they lie scattered through the corpus text, one cache miss each).
    keys: Vec<u128>,
}

impl<'a> Interner<'a> {
    /// The id of `w`, new if `w` was not seen before.
    #[inline]
    pub fn intern(&mut self, w: &'a str) -> u32 {
        self.intern_packed(pack(w), w)
    }

    /// As [`Self::intern`], for a word `w` that is a slice of `text`. Where 16 bytes of the
    /// text follow the word's start, its key is one load from the text, masked: packing it
    /// through a buffer makes the next read of the key wait for the buffer's bytes to be stored
    /// (a store-forwarding stall, on every word).
    #[inline]
    pub fn intern_in(&mut self, text: &'a str, w: &'a str) -> u32 {
        let range = text.as_bytes().as_ptr_range();
        debug_assert!(range.start <= w.as_ptr() && w.as_bytes().as_ptr_range().end <= range.end);
        let start = w.as_ptr() as usize - text.as_ptr() as usize;
        self.intern_packed(pack_in(text.as_bytes(), start, w.len()), w)
    }

    /// As [`Self::intern`], for a word whose key another interner has packed already
    /// ([`Self::into_parts`]).
    #[inline]
    pub fn intern_packed(&mut self, key: u128, w: &'a str) -> u32 {
        let next = self.words.len() as u32;
        let id = if key != LONG {
            *self.short.entry(key).or_insert(next)
        } else {
            *self.long.entry(w).or_insert(next)
        };
        if id == next {
            self.words.push(w);
            self.keys.push(key);
        }
        id
    }

    /// The distinct words, by id.
    pub fn into_words(self) -> Vec<&'a str> {
        self.words
    }

    /// The distinct words and their packed keys, by id.
    pub fn into_parts(self) -> (Vec<&'a str>, Vec<u128>) {
        (self.words, self.keys)
    }
}

/// `w`'s bytes and length in one integer if it is short enough, else [`LONG`].
#[inline]
fn pack(w: impl AsRef<[u8]>) -> u128 {
    let b = w.as_ref();
    if b.len() > SHORT {
        return LONG;
    }
    let mut buf = [0u8; 16];
    buf[..b.len()].copy_from_slice(b);
    buf[SHORT] = b.len() as u8;
    u128::from_le_bytes(buf)
}

/// [`pack`] of the word `text[start..start + len]`, read from the text in one load where 16
/// bytes follow its start.
#[inline]
fn pack_in(text: &[u8], start: usize, len: usize) -> u128 {
    match text.get(start..start + 16) {
        Some(b) if len <= SHORT => {
            let bytes = u128::from_le_bytes(b.try_into().expect("a slice of 16 bytes"));
            bytes & ((1u128 << (8 * len)) - 1) | (len as u128) << 120
        }
        _ => pack(&text[start..start + len]),
    }
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
    fn keys_read_from_the_text_are_the_packed_keys() {
        let text = "a bb exactly15bytes! sixteen-bytes-xx électro ends";
        for start in 0..text.len() {
            for end in start..=text.len() {
                if let Some(w) = text.get(start..end) {
                    assert_eq!(pack_in(text.as_bytes(), start, w.len()), pack(w), "{w:?}");
                }
            }
        }
    }

    #[test]
    fn packing_keeps_words_apart() {
        // Same bytes up to padding, different lengths; 15 and 16 bytes either side of the limit.
        assert_ne!(pack("ab"), pack("ab\0"));
        assert_ne!(pack("exactly15bytes!"), LONG);
        assert_eq!(pack("sixteen-bytes-xx"), LONG);
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

    #[test]
    fn merging_by_packed_keys_gives_the_same_ids() {
        let long = "electroencephalography";
        let text = [
            "b",
            long,
            "a",
            "",
            "b",
            "électroencéphalographie",
            long,
            "a\0",
        ];
        let mut one = Interner::default();
        let direct: Vec<u32> = text.iter().map(|w| one.intern(w)).collect();
        // Two halves interned apart, then merged in order through their keys.
        let mut global = Interner::default();
        let mut merged = Vec::new();
        for half in text.chunks(4) {
            let mut local = Interner::default();
            let ids: Vec<u32> = half.iter().map(|w| local.intern(w)).collect();
            let (words, keys) = local.into_parts();
            let map: Vec<u32> = words
                .iter()
                .zip(keys)
                .map(|(w, k)| global.intern_packed(k, w))
                .collect();
            merged.extend(ids.iter().map(|&i| map[i as usize]));
        }
        assert_eq!(merged, direct);
        assert_eq!(global.into_words(), one.into_words());
    }
}
