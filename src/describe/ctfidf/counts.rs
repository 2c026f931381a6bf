//! Counting: each vocabulary term per topic, the numbers c-TF-IDF is computed from.
//!
//! Per topic and term: its occurrences (phrases, whose counts are raw, are weighed against
//! these), its weight units (each document adds [`weight_units`] of its count there, so a few
//! documents repeating a token hundreds of times cannot outweigh the many that use a word once
//! or twice), and the documents it occurs in (for the spread rule). Every sum is an integer, so
//! it is the same whatever the thread count. Only the vocabulary's terms are counted, numbered
//! densely into "slots", so each partial sum is small.

use super::weights::ClassTable;
use super::TermRules;
use crate::tokenize::{TokenizedCorpus, WordKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// The slot of a term outside the vocabulary.
const OUT: u32 = u32::MAX;

/// The vocabulary's terms counted per topic (see the module docs). Tables are indexed
/// `[topic][slot]`; the methods read them by term id.
#[derive(Debug, Clone)]
pub(super) struct TopicCounts {
    /// Term id of each slot (the vocabulary's terms, in id order).
    pub terms: Vec<u32>,
    /// Slot of each term id ([`OUT`] outside the vocabulary).
    slot: Vec<u32>,
    /// `raw[topic][slot]`: occurrences.
    pub raw: Vec<Vec<u32>>,
    /// `units[topic][slot]`: weight units.
    pub units: Vec<Vec<u64>>,
    /// `docs[topic][slot]`: documents of the topic the term occurs in.
    pub docs: Vec<Vec<u32>>,
    /// Documents of each topic.
    pub sizes: Vec<usize>,
    /// Share of all documents each slot occurs in.
    pub share: Vec<f64>,
    /// The term each term id is one with for the rule that no two listed terms share a stem:
    /// itself, or the same stem without an "s" when that is in the vocabulary (the plural the
    /// stemmer leaves alone: "llm" and "llms", "gan" and "gans").
    pub canon: Vec<u32>,
}

impl TopicCounts {
    /// Counts the `vocabulary`'s terms (a flag per term id) in each of the `k` topics.
    pub fn count(
        tc: &TokenizedCorpus,
        vocabulary: &[bool],
        assignments: &[usize],
        k: usize,
    ) -> TopicCounts {
        let (slot, terms) = number_slots(vocabulary);
        let tallies = tally(tc, &slot, terms.len(), assignments, k);
        let mut sizes = vec![0usize; k];
        assignments.iter().for_each(|&c| sizes[c] += 1);
        let n_docs = assignments.len().max(1) as f64;
        let share = (0..terms.len())
            .map(|s| tallies.docs.iter().map(|r| r[s] as f64).sum::<f64>() / n_docs)
            .collect();
        let canon = canon_terms(tc, &terms);
        TopicCounts {
            terms,
            slot,
            raw: tallies.raw,
            units: tallies.units,
            docs: tallies.docs,
            sizes,
            share,
            canon,
        }
    }

    /// The slot of term `t`, if it is in the vocabulary.
    pub fn slot_of(&self, t: u32) -> Option<usize> {
        match self.slot[t as usize] {
            OUT => None,
            s => Some(s as usize),
        }
    }

    /// Occurrences of term `t` in topic `c`.
    pub fn raw(&self, c: usize, t: u32) -> u32 {
        self.slot_of(t).map_or(0, |s| self.raw[c][s])
    }

    /// Documents of topic `c` term `t` occurs in.
    pub fn docs_with(&self, c: usize, t: u32) -> u32 {
        self.slot_of(t).map_or(0, |s| self.docs[c][s])
    }

    /// Share of all documents term `t` occurs in.
    pub fn share_of(&self, t: u32) -> f64 {
        self.slot_of(t).map_or(0.0, |s| self.share[s])
    }

    /// Whether term `t` is well spread in topic `c`: found in at least
    /// [`TermRules::min_docs`] of its documents.
    pub fn spread(&self, c: usize, t: u32, rules: &TermRules) -> bool {
        self.docs_with(c, t) >= rules.min_docs(self.sizes[c])
    }

    /// The share of all documents the least frequent of these terms occurs in.
    pub fn corpus_share(&self, stems: &[u32]) -> f64 {
        stems
            .iter()
            .map(|&t| self.share_of(t))
            .fold(1.0f64, f64::min)
    }

    /// How many times more common (by documents) the most concentrated of these terms is in
    /// topic `c` than in the whole corpus.
    pub fn lift(&self, c: usize, stems: &[u32]) -> f64 {
        stems
            .iter()
            .map(|&t| {
                let in_topic = self.docs_with(c, t) as f64 / self.sizes[c].max(1) as f64;
                in_topic / self.share_of(t).max(1e-12)
            })
            .fold(0.0f64, f64::max)
    }

    /// The c-TF-IDF tables of these counts, by slot (weighed by weight units).
    pub fn class_table(&self, tc: &TokenizedCorpus, damping: bool) -> ClassTable {
        ClassTable::new(
            self.terms.clone(),
            self.terms
                .iter()
                .map(|&t| tc.terms[t as usize].surface.clone())
                .collect(),
            self.share.clone(),
            self.terms
                .iter()
                .map(|&t| self.slot[self.canon[t as usize] as usize])
                .collect(),
            self.units.clone(),
            damping,
        )
    }
}

/// Numbers the vocabulary's terms densely: each term id's slot ([`OUT`] outside it), and each
/// slot's term id.
fn number_slots(vocabulary: &[bool]) -> (Vec<u32>, Vec<u32>) {
    let mut slot = vec![OUT; vocabulary.len()];
    let mut terms: Vec<u32> = Vec::new();
    for (t, _) in vocabulary.iter().enumerate().filter(|(_, &v)| v) {
        slot[t] = terms.len() as u32;
        terms.push(t as u32);
    }
    (slot, terms)
}

/// The per-topic sums being counted, `[topic][slot]`.
struct Tallies {
    raw: Vec<Vec<u32>>,
    units: Vec<Vec<u64>>,
    docs: Vec<Vec<u32>>,
}

impl Tallies {
    fn new(k: usize, nv: usize) -> Tallies {
        Tallies {
            raw: vec![vec![0u32; nv]; k],
            units: vec![vec![0u64; nv]; k],
            docs: vec![vec![0u32; nv]; k],
        }
    }

    /// Adds `other`'s sums to these.
    fn add(mut self, other: Tallies) -> Tallies {
        for (x, y) in self.raw.iter_mut().zip(other.raw) {
            x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
        }
        for (x, y) in self.units.iter_mut().zip(other.units) {
            x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
        }
        for (x, y) in self.docs.iter_mut().zip(other.docs) {
            x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
        }
        self
    }
}

/// Counts every document's vocabulary terms into its topic's sums, in parallel over few, large
/// ranges of documents (each partial sum is k x vocabulary x 16 bytes).
fn tally(
    tc: &TokenizedCorpus,
    slot: &[u32],
    nv: usize,
    assignments: &[usize],
    k: usize,
) -> Tallies {
    // Each word's slot, looked up in one small array (the words themselves are large records).
    let word_slot: Vec<u32> = tc
        .words
        .iter()
        .map(|w| match w.kind {
            WordKind::Term(t) => slot[t as usize],
            _ => OUT,
        })
        .collect();
    let docs: Vec<usize> = (0..tc.n_docs()).collect();
    let range = docs
        .len()
        .div_ceil(2 * rayon::current_num_threads())
        .max(crate::tokenize::CHUNK);
    docs.par_chunks(range)
        .fold(
            || {
                (
                    Tallies::new(k, nv),
                    vec![u32::MAX; nv],
                    Vec::<(u32, u32)>::new(),
                )
            },
            |(mut acc, mut at, mut doc), ds| {
                for &d in ds {
                    let c = assignments[d];
                    // The document's terms and counts; `at` maps a slot to its place in `doc`.
                    doc.clear();
                    for &w in tc.doc_words(d) {
                        let s = word_slot[w as usize];
                        if s == OUT {
                            continue;
                        }
                        match at[s as usize] {
                            u32::MAX => {
                                at[s as usize] = doc.len() as u32;
                                doc.push((s, 1));
                            }
                            i => doc[i as usize].1 += 1,
                        }
                    }
                    for &(s, n) in &doc {
                        at[s as usize] = u32::MAX;
                        acc.raw[c][s as usize] += n;
                        acc.units[c][s as usize] += weight_units(n);
                        acc.docs[c][s as usize] += 1;
                    }
                }
                (acc, at, doc)
            },
        )
        .map(|(acc, _, _)| acc)
        .reduce(|| Tallies::new(k, nv), Tallies::add)
}

/// The term each term id is one with (see [`TopicCounts::canon`]).
fn canon_terms(tc: &TokenizedCorpus, vocabulary: &[u32]) -> Vec<u32> {
    let by_stem: FxHashMap<&str, u32> = vocabulary
        .iter()
        .map(|&t| (tc.terms[t as usize].stem.as_str(), t))
        .collect();
    (0..tc.terms.len() as u32)
        .map(|t| {
            singular(&tc.terms[t as usize].stem)
                .and_then(|s| by_stem.get(s).copied())
                .unwrap_or(t)
        })
        .collect()
}

/// The stem without a final "s", when at least two letters are left: the singular a plural
/// stem may be one term with.
pub(in crate::describe) fn singular(stem: &str) -> Option<&str> {
    stem.strip_suffix('s').filter(|s| s.len() >= 2)
}

/// `1000 (1 + ln count)`, rounded (0 for 0): the weight units a document adds to a term it holds
/// `count` times, from a table for the small counts nearly every entry has. Sums of these are
/// what c-TF-IDF ranks by, here and in summed reports ([`crate::describe::aggregate`]).
pub fn weight_units(count: u32) -> u64 {
    const SMALL: usize = 65;
    fn exact(c: u32) -> u64 {
        if c == 0 {
            0
        } else {
            (1000.0 * (1.0 + (c as f64).ln())).round() as u64
        }
    }
    static TABLE: std::sync::LazyLock<[u64; SMALL]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|c| exact(c as u32)));
    TABLE
        .get(count as usize)
        .copied()
        .unwrap_or_else(|| exact(count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_units_are_a_thousand_times_one_plus_ln_count() {
        assert_eq!(weight_units(0), 0);
        assert_eq!(weight_units(1), 1000);
        for c in 2..200u32 {
            let want = (1000.0 * (1.0 + f64::from(c).ln())).round() as u64;
            assert_eq!(weight_units(c), want, "count {c}");
        }
    }
}
