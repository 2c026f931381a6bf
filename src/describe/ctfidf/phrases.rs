//! Phrase finding: the two- and three-word phrases of each topic, weighted as words are.
//!
//! In each topic, windows of two or three words whose first and last words are among the
//! topic's best unigrams (its "seeds") are counted (a stop word may sit inside a trigram:
//! "chain of thought", a dropped word may not). Surface variants that share their content
//! words' terms count as one phrase ("language models" and "language model"), spelled as its
//! most frequent variant. A phrase counted at least [`PHRASE_MIN_COUNT`] times in a topic is
//! weighted by the c-TF-IDF formula with its own corpus frequency, and absorbs each of its
//! words it accounts for at least [`ABSORB`] of the uses of. Corpora above [`PHRASE_SAMPLE`]
//! documents are counted on an even sample and the counts scaled back up.
//!
//! This is the slow part of describing a large corpus, so it is written for speed: each word's
//! role is looked up in small arrays, windows are kept as word ids (no allocation per window)
//! and only the few phrases that survive are spelled out. Two passes, both parallel with
//! integer counts (the same in any order): pass 1 counts each topic's phrases and keeps every
//! window that could be a phrase somewhere; pass 2 counts, over those windows, the corpus
//! frequency of the phrases pass 1 retained.

use super::counts::TopicCounts;
use super::weights::{damped_tf, idf};
use crate::tokenize::{TokenizedCorpus, WordKind};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Unigram candidates per topic from which phrases are built.
pub(super) const PHRASE_SEEDS: usize = 30;
/// Phrases are counted on at most about this many documents (an even sample of larger corpora).
const PHRASE_SAMPLE: usize = 200_000;
/// A phrase must occur at least this often in a topic (in the sample).
const PHRASE_MIN_COUNT: u32 = 3;
/// A phrase absorbs a word when it accounts for this share of the word's uses in the topic.
const ABSORB: f64 = 0.4;

/// The role of a word that is not a seed (it cannot end a phrase).
const NO_SEED: u32 = u32::MAX - 1;
/// The role of a dropped word (it cannot sit inside a phrase).
const DROPPED: u32 = u32::MAX;
/// A window's word ids, padded with `u32::MAX` (a bigram has two).
type Window = [u32; 3];
/// A phrase key: the word ids of its positions, with content words replaced by their term id
/// (tagged) so that "language models" and "language model" count together.
type Key = [u64; 3];
/// A topic's phrases by key: its count and the counts of its surface variants.
type PhraseCounts = FxHashMap<Key, (u32, Vec<(Window, u32)>)>;

/// A phrase of a topic, ranked.
#[derive(Debug, Clone)]
pub(super) struct Phrase {
    pub text: String,
    pub weight: f64,
    /// Term ids of its content words.
    pub stems: Vec<u32>,
    /// Words it shows, stop words included.
    pub words: usize,
    /// The words it absorbs (term ids).
    pub absorbs: Vec<u32>,
}

/// Each topic's phrases, best first, no two sharing a stem. `unigrams` are each topic's
/// ranked unigram candidates (term id, weight); their first [`PHRASE_SEEDS`] seed the phrases.
pub(super) fn find_phrases(
    tc: &TokenizedCorpus,
    assignments: &[usize],
    counts: &TopicCounts,
    unigrams: &[Vec<(u32, f64)>],
    damping: bool,
) -> Vec<Vec<Phrase>> {
    let seeds = Seeds::of(unigrams, tc.terms.len());
    let words = Words::of(tc, &seeds);
    // Large corpora: count phrases on every `step`-th document and scale the counts back up.
    let step = tc.n_docs().div_ceil(PHRASE_SAMPLE).max(1);
    let (variants, windows) = count_windows(tc, assignments, unigrams.len(), step, &seeds, &words);
    let topic_phrases = group_variants(variants, &words);
    let corpus = corpus_counts(windows, &topic_phrases, &seeds, &words);
    rank_phrases(tc, counts, topic_phrases, &corpus, step, damping)
}

/// The terms that seed a phrase in some topic, numbered densely: windows whose ends are not
/// both among them are never counted.
struct Seeds {
    /// The seed number of each term id ([`NO_SEED`] for a term that seeds none).
    index: Vec<u32>,
    /// How many seeds there are.
    n: usize,
    /// `topic[c * n + i]`: whether seed `i` seeds topic `c`.
    topic: Vec<bool>,
    /// A bit per (first seed, last seed) pair ([`Seeds::pair`]): whether both seed one topic.
    /// Only a window whose ends are such a pair can be a phrase of any topic.
    together: Vec<u64>,
}

impl Seeds {
    /// The first [`PHRASE_SEEDS`] unigrams of each topic, over `n_terms` term ids.
    fn of(unigrams: &[Vec<(u32, f64)>], n_terms: usize) -> Seeds {
        let mut index = vec![NO_SEED; n_terms];
        let mut n = 0;
        for u in unigrams {
            for &(t, _) in u.iter().take(PHRASE_SEEDS) {
                if index[t as usize] == NO_SEED {
                    index[t as usize] = n as u32;
                    n += 1;
                }
            }
        }
        let mut topic = vec![false; unigrams.len() * n];
        for (c, u) in unigrams.iter().enumerate() {
            for &(t, _) in u.iter().take(PHRASE_SEEDS) {
                topic[c * n + index[t as usize] as usize] = true;
            }
        }
        let mut together = vec![0u64; (n * n).div_ceil(64)];
        for c in 0..unigrams.len() {
            let own: Vec<usize> = (0..n).filter(|&i| topic[c * n + i]).collect();
            for &a in &own {
                for &b in &own {
                    let bit = a * n + b;
                    together[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        Seeds {
            index,
            n,
            topic,
            together,
        }
    }

    /// Whether seeds `a` and `b` both seed one topic.
    fn together(&self, a: u32, b: u32) -> bool {
        let bit = self.pair(a, b);
        self.together[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Whether each seed seeds topic `c`.
    fn of_topic(&self, c: usize) -> &[bool] {
        &self.topic[c * self.n..(c + 1) * self.n]
    }

    /// The bit of a (first seed, last seed) pair.
    fn pair(&self, a: u32, b: u32) -> usize {
        a as usize * self.n + b as usize
    }
}

/// Each word's part in phrases, looked up in small arrays (they stay in cache; the words
/// themselves are large records).
struct Words {
    /// The seed a word stands for, or [`NO_SEED`], or [`DROPPED`].
    role: Vec<u32>,
    /// Its part of a phrase [`Key`].
    part: Vec<u64>,
}

impl Words {
    fn of(tc: &TokenizedCorpus, seeds: &Seeds) -> Words {
        let role = tc
            .words
            .iter()
            .map(|w| match w.kind {
                WordKind::Term(t) => seeds.index[t as usize],
                WordKind::Dropped => DROPPED,
                _ => NO_SEED,
            })
            .collect();
        let part = (0..tc.words.len() as u32)
            .map(|w| key_part(tc, w))
            .collect();
        Words { role, part }
    }

    /// Calls `f(first seed, last seed, words)` for each window of `doc` that could be a phrase:
    /// two or three words, two different seeds at its ends, no dropped word inside.
    fn windows(&self, doc: &[u32], f: &mut impl FnMut(u32, u32, &[u32])) {
        for n in [2usize, 3] {
            for w in doc.windows(n) {
                let (a, b) = (self.role[w[0] as usize], self.role[w[n - 1] as usize]);
                if a >= NO_SEED || b >= NO_SEED || a == b {
                    continue;
                }
                if n == 3 && self.role[w[1] as usize] == DROPPED {
                    continue;
                }
                f(a, b, w);
            }
        }
    }

    /// The key of a window's words (`u32::MAX` ends them).
    fn key(&self, w: &[u32]) -> Key {
        let mut key = [u64::MAX; 3];
        for (i, &x) in w.iter().take_while(|&&x| x != u32::MAX).enumerate() {
            key[i] = self.part[x as usize];
        }
        key
    }
}

/// A word's part of a phrase key: a content word's term id, tagged, else the word's own id.
fn key_part(tc: &TokenizedCorpus, w: u32) -> u64 {
    match tc.words[w as usize].kind {
        WordKind::Term(t) => (1u64 << 40) | t as u64,
        _ => w as u64,
    }
}

/// The term id in a tagged key part.
fn part_term(p: u64) -> u32 {
    (p & 0xFF_FFFF_FFFF) as u32
}

/// Pass 1, parallel over fixed chunks of every `step`-th document: per topic, the counts of the
/// surface variants (windows) made of its seed words; and every window that could be a phrase
/// in some topic, so that pass 2 reads those few million instead of scanning every word again.
fn count_windows(
    tc: &TokenizedCorpus,
    assignments: &[usize],
    k: usize,
    step: usize,
    seeds: &Seeds,
    words: &Words,
) -> (Vec<FxHashMap<Window, u32>>, Vec<Vec<Window>>) {
    type Variants = FxHashMap<Window, u32>;
    let docs: Vec<usize> = (0..tc.n_docs()).step_by(step).collect();
    docs.par_chunks(crate::tokenize::CHUNK)
        .fold(
            || (vec![Variants::default(); k], Vec::<Vec<Window>>::new()),
            |(mut tables, mut seen), ds| {
                for &d in ds {
                    let c = assignments[d];
                    let topic_seeds = seeds.of_topic(c);
                    let table = &mut tables[c];
                    words.windows(tc.doc_words(d), &mut |first, last, w| {
                        let mut variant = [u32::MAX; 3];
                        variant[..w.len()].copy_from_slice(w);
                        if seeds.together(first, last) {
                            keep(&mut seen, variant);
                        }
                        if topic_seeds[first as usize] && topic_seeds[last as usize] {
                            *table.entry(variant).or_default() += 1;
                        }
                    });
                }
                (tables, seen)
            },
        )
        .reduce(
            || (vec![Variants::default(); k], Vec::new()),
            |(mut a, mut seen_a), (b, seen_b)| {
                for (ta, tb) in a.iter_mut().zip(b) {
                    for (v, c) in tb {
                        *ta.entry(v).or_default() += c;
                    }
                }
                seen_a.extend(seen_b);
                (a, seen_a)
            },
        )
}

/// Windows kept for pass 2 per page: a page is filled to this length and never grows, so the
/// millions of windows of a large corpus take their own size (a growing array would hold up
/// to twice that, and three times while it is copied).
const WINDOWS_PER_PAGE: usize = 1 << 16;

/// Appends `w` to the last page of `seen`, starting a new page when it is full.
fn keep(seen: &mut Vec<Vec<Window>>, w: Window) {
    match seen.last_mut() {
        Some(page) if page.len() < WINDOWS_PER_PAGE => page.push(w),
        _ => {
            let mut page = Vec::with_capacity(WINDOWS_PER_PAGE);
            page.push(w);
            seen.push(page);
        }
    }
}

/// Each topic's surface variants grouped by phrase key; phrases counted fewer than
/// [`PHRASE_MIN_COUNT`] times are left out.
fn group_variants(topic_variants: Vec<FxHashMap<Window, u32>>, words: &Words) -> Vec<PhraseCounts> {
    topic_variants
        .into_iter()
        .map(|variants| {
            let mut table = PhraseCounts::default();
            for (v, c) in variants {
                let e = table.entry(words.key(&v)).or_default();
                e.0 += c;
                e.1.push((v, c));
            }
            table.retain(|_, e| e.0 >= PHRASE_MIN_COUNT);
            table
        })
        .collect()
}

/// Pass 2, parallel: the corpus frequency of every retained phrase, over the `windows` pass 1
/// kept (in pages). Most windows cannot be one: a bit per (first seed, last seed) pair rules them out
/// before their key is hashed.
fn corpus_counts(
    windows: Vec<Vec<Window>>,
    topic_phrases: &[PhraseCounts],
    seeds: &Seeds,
    words: &Words,
) -> FxHashMap<Key, u32> {
    let wanted: FxHashSet<Key> = topic_phrases
        .iter()
        .flat_map(|t| t.keys().copied())
        .collect();
    let mut ends_wanted = vec![0u64; (seeds.n * seeds.n).div_ceil(64)];
    for key in &wanted {
        let parts = key.iter().filter(|&&p| p != u64::MAX);
        let seed = |p: &u64| seeds.index[part_term(*p) as usize];
        let (Some(first), Some(last)) = (parts.clone().next(), parts.clone().next_back()) else {
            continue;
        };
        let bit = seeds.pair(seed(first), seed(last));
        ends_wanted[bit / 64] |= 1 << (bit % 64);
    }
    windows
        .par_iter()
        .fold(
            FxHashMap::default,
            |mut local: FxHashMap<Key, u32>, list| {
                for w in list {
                    let n = if w[2] == u32::MAX { 2 } else { 3 };
                    let bit = seeds.pair(words.role[w[0] as usize], words.role[w[n - 1] as usize]);
                    if ends_wanted[bit / 64] & (1 << (bit % 64)) == 0 {
                        continue;
                    }
                    let key = words.key(w);
                    if wanted.contains(&key) {
                        *local.entry(key).or_default() += 1;
                    }
                }
                local
            },
        )
        .reduce(FxHashMap::default, |mut a, b| {
            for (key, c) in b {
                *a.entry(key).or_default() += c;
            }
            a
        })
}

/// A counted phrase being ranked.
struct Counted {
    weight: f64,
    /// Its most frequent surface variant.
    surface: Window,
    stems: Vec<u32>,
    absorbs: Vec<u32>,
}

/// Each topic's phrases weighted and ranked, no two sharing a stem. Counts are scaled back up
/// by the sampling `step`; a phrase's text is spelled out only for the few that survive (and
/// for ties, which the text breaks), not for every counted window.
fn rank_phrases(
    tc: &TokenizedCorpus,
    counts: &TopicCounts,
    topic_phrases: Vec<PhraseCounts>,
    corpus: &FxHashMap<Key, u32>,
    step: usize,
    damping: bool,
) -> Vec<Vec<Phrase>> {
    // Phrases are counted raw, so they are weighed against the topics' raw totals.
    let totals: Vec<f64> = counts
        .raw
        .iter()
        .map(|r| r.iter().map(|&c| c as f64).sum())
        .collect();
    let mean_total = totals.iter().sum::<f64>() / counts.raw.len().max(1) as f64;
    let spell = |surface: &Window| -> String {
        // Chinese words join without spaces ("卷积神经网络"), others with them.
        crate::tokenize::join_words(
            surface
                .iter()
                .filter(|&&w| w != u32::MAX)
                .map(|&w| tc.words[w as usize].surface.as_str()),
        )
    };
    topic_phrases
        .into_par_iter()
        .enumerate()
        .map(|(c, table)| {
            let weigh = |count: f64, f: f64| {
                if count <= 0.0 || totals[c] <= 0.0 {
                    0.0
                } else {
                    damped_tf(count, totals[c], damping) * idf(mean_total, f)
                }
            };
            let mut ranked: Vec<Counted> = table
                .into_iter()
                .map(|(key, (count, variants))| {
                    let f = (corpus.get(&key).copied().unwrap_or(count) as usize * step) as f64;
                    let count = count as usize * step;
                    let weight = weigh(count as f64, f);
                    counted(key, variants, count, weight, |t| counts.raw(c, t))
                })
                .collect();
            // By weight, and ties (many: equal counts give equal weights) by text, spelled once
            // per tied phrase.
            ranked.sort_by(|a, b| b.weight.total_cmp(&a.weight));
            for run in ranked.chunk_by_mut(|a, b| a.weight.total_cmp(&b.weight).is_eq()) {
                if run.len() > 1 {
                    run.sort_by_cached_key(|p| spell(&p.surface));
                }
            }
            distinct(ranked)
                .map(|p| Phrase {
                    text: spell(&p.surface),
                    weight: p.weight,
                    words: p.surface.iter().filter(|&&w| w != u32::MAX).count(),
                    stems: p.stems,
                    absorbs: p.absorbs,
                })
                .collect()
        })
        .collect()
}

/// A phrase of a topic counted `count` times (scaled) and weighing `weight`: its most frequent
/// surface variant (ties to the lowest word ids), its content words' terms, and those of them it
/// absorbs (`uses` counts a term's occurrences in the topic).
fn counted(
    key: Key,
    variants: Vec<(Window, u32)>,
    count: usize,
    weight: f64,
    uses: impl Fn(u32) -> u32,
) -> Counted {
    let surface = variants
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .map(|(ws, _)| ws)
        .unwrap_or([u32::MAX; 3]);
    let stems: Vec<u32> = key
        .iter()
        .filter(|&&p| p != u64::MAX && p >> 40 == 1)
        .map(|&p| part_term(p))
        .collect();
    let absorbs = stems
        .iter()
        .copied()
        .filter(|&t| count as f64 >= ABSORB * uses(t) as f64)
        .collect();
    Counted {
        weight,
        surface,
        stems,
        absorbs,
    }
}

/// The ranked phrases that share no stem with a better one.
fn distinct(ranked: Vec<Counted>) -> impl Iterator<Item = Counted> {
    let mut used: FxHashSet<u32> = FxHashSet::default();
    ranked.into_iter().filter(move |p| {
        if p.stems.iter().any(|s| used.contains(s)) {
            return false;
        }
        used.extend(p.stems.iter().copied());
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_seeds_of_one_topic_end_a_kept_window() {
        // Topic 0 is seeded by terms 5 and 7, topic 1 by 7 and 9.
        let unigrams = vec![vec![(5, 1.0), (7, 0.5)], vec![(7, 1.0), (9, 0.5)]];
        let seeds = Seeds::of(&unigrams, 12);
        let s = |t: usize| seeds.index[t];
        assert_eq!(seeds.n, 3);
        assert!(seeds.together(s(5), s(7)) && seeds.together(s(7), s(5)));
        assert!(seeds.together(s(7), s(9)) && seeds.together(s(9), s(7)));
        // 5 and 9 seed different topics: no phrase of any topic ends with both.
        assert!(!seeds.together(s(5), s(9)) && !seeds.together(s(9), s(5)));
    }

    #[test]
    fn kept_windows_fill_pages_of_a_fixed_length() {
        let mut seen = Vec::new();
        for i in 0..WINDOWS_PER_PAGE + 3 {
            keep(&mut seen, [i as u32, 0, u32::MAX]);
        }
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].len(), WINDOWS_PER_PAGE);
        assert_eq!(seen[0].capacity(), WINDOWS_PER_PAGE);
        assert_eq!(
            seen[1],
            (WINDOWS_PER_PAGE..WINDOWS_PER_PAGE + 3)
                .map(|i| [i as u32, 0, u32::MAX])
                .collect::<Vec<_>>()
        );
    }
}
