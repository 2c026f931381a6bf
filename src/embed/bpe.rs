//! A BPE model's merges applied to one word, giving the ids the `tokenizers` crate gives.
//!
//! Why: a static model spells each distinct word once ([`super::table`]'s cache of words), but
//! on a first run every word is new, and the crate's `tokenize` builds a heap of merges, a
//! `String` for every token and an entry of its own cache for each one: on the arXiv 75k run
//! it took 1,397 of a profile's samples, against 2,329 for the row sums (docs/benchmarks.md).
//! Here a word's symbols sit in one small array and each merge looks up only the two pairs it
//! changes.
//!
//! The rule is the crate's (`Word::merge_all`): among the adjacent pairs that have a merge,
//! the one of lowest rank is merged, the leftmost of equal ranks, until no pair has one. The
//! crate's heap pops the same pair at every step: it holds every adjacent pair that has a
//! merge (the first ones, and the two each merge makes), ordered by rank and then by position,
//! and skips the entries a merge left stale. A word holding a character that has no token of
//! its own (the crate then spells its bytes, `byte_fallback`, or an unknown token), or longer
//! than [`Merges::MAX_CHARS`], is left to the crate: [`Merges::spell`] says so.

use rustc_hash::FxHashMap;

/// A BPE model's single characters and merges, read from its tokenizers JSON file.
pub(super) struct Merges {
    /// The id of each character that is a token by itself.
    chars: FxHashMap<char, u32>,
    /// A pair of ids that merges: its rank (the merge's place in the file) and the merged id.
    pairs: FxHashMap<(u32, u32), (u32, u32)>,
}

/// A word's symbols while it is spelled: each id, and the rank and merged id of the pair it
/// makes with the next symbol (`NONE`: no merge).
#[derive(Default)]
pub(super) struct Scratch {
    ids: Vec<u32>,
    next: Vec<(u32, u32)>,
}

const NONE: (u32, u32) = (u32::MAX, u32::MAX);

impl Merges {
    /// Words longer than this go to the crate: the merges here cost the square of a word's
    /// length (the crate's heap costs n log n), and a word of more characters is rare.
    pub const MAX_CHARS: usize = 64;

    /// The merges of the `model` object of a tokenizers JSON file, when it is a plain BPE (no
    /// prefix on a word's later pieces, no suffix on its last, no dropout), as the crate reads
    /// them: each merge `"a b"` (or `["a", "b"]`) joins the ids of `a` and `b` into the id of
    /// `ab`, its rank its index, a later duplicate replacing an earlier one.
    pub fn of(model: &serde_json::Value) -> Option<Merges> {
        let none = |k: &str| model.get(k).is_none_or(|v| v.is_null());
        if !(none("continuing_subword_prefix") && none("end_of_word_suffix") && none("dropout")) {
            return None;
        }
        let vocab = model.get("vocab")?.as_object()?;
        let id = |t: &str| -> Option<u32> { u32::try_from(vocab.get(t)?.as_u64()?).ok() };
        let mut chars = FxHashMap::default();
        for (token, v) in vocab {
            let mut cs = token.chars();
            if let (Some(c), None) = (cs.next(), cs.next()) {
                chars.insert(c, u32::try_from(v.as_u64()?).ok()?);
            }
        }
        let merges = model.get("merges")?.as_array()?;
        let mut pairs = FxHashMap::default();
        pairs.reserve(merges.len());
        for (rank, m) in merges.iter().enumerate() {
            let (a, b) = match m {
                serde_json::Value::String(s) => s.split_once(' ')?,
                serde_json::Value::Array(p) => match &p[..] {
                    [a, b] => (a.as_str()?, b.as_str()?),
                    _ => return None,
                },
                _ => return None,
            };
            let joined = id(&format!("{a}{b}"))?;
            pairs.insert((id(a)?, id(b)?), (rank as u32, joined));
        }
        Some(Merges { chars, pairs })
    }

    /// Appends the ids of the word spelled by `chars` to `out`, and says whether it did: false
    /// (nothing appended) when a character has no token of its own or the word is longer than
    /// [`Self::MAX_CHARS`].
    pub fn spell(
        &self,
        chars: impl Iterator<Item = char>,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> bool {
        let Scratch { ids, next } = scratch;
        ids.clear();
        for c in chars {
            match self.chars.get(&c) {
                Some(&id) if ids.len() < Self::MAX_CHARS => ids.push(id),
                _ => return false,
            }
        }
        let pair = |a: u32, b: u32| self.pairs.get(&(a, b)).copied().unwrap_or(NONE);
        next.clear();
        next.extend(ids.windows(2).map(|w| pair(w[0], w[1])));
        loop {
            // The lowest rank, the leftmost of equal ones.
            let mut at = None;
            let mut best = u32::MAX;
            for (i, &(rank, _)) in next.iter().enumerate() {
                if rank < best {
                    best = rank;
                    at = Some(i);
                }
            }
            let Some(at) = at else { break };
            ids[at] = next[at].1;
            ids.remove(at + 1);
            next.remove(at);
            if at > 0 {
                next[at - 1] = pair(ids[at - 1], ids[at]);
            }
            if at + 1 < ids.len() {
                next[at] = pair(ids[at], ids[at + 1]);
            }
        }
        out.extend_from_slice(ids);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small BPE whose merges disagree with a greedy longest match, with ties between equal
    /// ranks, a merge whose result merges again and a character without a token.
    fn model() -> serde_json::Value {
        serde_json::json!({
            "type": "BPE",
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "aa": 6, "aaaa": 7},
            "merges": ["b c", "a b", "a bc", "a a", "aa aa"],
        })
    }

    fn spell(m: &Merges, word: &str) -> Option<Vec<u32>> {
        let mut out = vec![99];
        let ok = m.spell(word.chars(), &mut Scratch::default(), &mut out);
        ok.then(|| out[1..].to_vec())
    }

    #[test]
    fn merges_go_by_rank_then_leftmost() {
        let m = Merges::of(&model()).expect("a plain BPE");
        // "b c" (rank 0) before "a b" (rank 1), then "a bc" makes "abc".
        assert_eq!(spell(&m, "abc"), Some(vec![5]));
        // Equal ranks: the leftmost "a a" first, then "aa aa".
        assert_eq!(spell(&m, "aaaaa"), Some(vec![7, 0]));
        assert_eq!(spell(&m, "aaa"), Some(vec![6, 0]));
        assert_eq!(spell(&m, "abab"), Some(vec![3, 3]));
        assert_eq!(spell(&m, "cab"), Some(vec![2, 3]));
        assert_eq!(spell(&m, ""), Some(vec![]));
        // No token for "d": the crate spells it.
        assert_eq!(spell(&m, "abd"), None);
        assert_eq!(spell(&m, &"a".repeat(Merges::MAX_CHARS + 1)), None);
    }

    #[test]
    fn the_same_ids_as_the_crate() {
        let mut json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
        });
        json["model"] = model();
        let tokenizer: tokenizers::Tokenizer = json.to_string().parse().expect("a tokenizer");
        let m = Merges::of(&json["model"]).expect("a plain BPE");
        use tokenizers::Model;
        for word in [
            "abc", "aaaaa", "aaa", "abab", "cab", "bcabcaab", "aaaaaaab", "cbacba",
        ] {
            let crate_ids: Vec<u32> = tokenizer
                .get_model()
                .tokenize(word)
                .expect("spelled")
                .iter()
                .map(|t| t.id)
                .collect();
            assert_eq!(spell(&m, word), Some(crate_ids), "{word}");
        }
    }

    #[test]
    fn a_prefix_or_suffix_is_left_to_the_crate() {
        let mut with = model();
        with["continuing_subword_prefix"] = "##".into();
        assert!(Merges::of(&with).is_none());
        let mut with = model();
        with["end_of_word_suffix"] = "</w>".into();
        assert!(Merges::of(&with).is_none());
        let mut with = model();
        with["merges"] = serde_json::json!(["a x"]);
        assert!(Merges::of(&with).is_none(), "a merge of unknown tokens");
    }
}
