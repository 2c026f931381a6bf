//! Class-based TF-IDF (BERTopic's c-TF-IDF) over unigrams and phrases, and label selection.
//!
//! For topic `c` and term `t`: `W(t, c) = tf(t, c) / |c| * ln(1 + A / f(t))`, where `tf(t, c)` is
//! how often `t` occurs in the topic's documents, `|c|` the topic's total term count, `A` the mean
//! of `|c|` over topics and `f(t)` the frequency of `t` over all topics. Unlike raw centroid
//! weights, this rewards words that are frequent in one topic *and* rare elsewhere.
//!
//! Phrases: in each topic, two- and three-word sequences whose first and last words are among the
//! topic's best unigrams are counted (a stop word may sit inside a trigram: "chain of thought"),
//! then weighted by the same formula with their own corpus frequency. A phrase that accounts for
//! at least 40% of the topic's uses of one of its words absorbs that word: "language model"
//! replaces "language". Terms or phrases that share a stem are never listed together. On corpora
//! above 200,000 documents phrases are counted on an even sample and the counts scaled back up.

use crate::tokenize::{TokenizedCorpus, WordKind};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Unigram candidates per topic from which phrases are built.
const PHRASE_SEEDS: usize = 30;
/// Phrases are counted on at most about this many documents (an even sample of larger corpora).
const PHRASE_SAMPLE: usize = 200_000;
/// A phrase must occur at least this often in a topic (in the sample).
const PHRASE_MIN_COUNT: u32 = 3;
/// A phrase absorbs a word when it accounts for this share of the word's uses in the topic.
const ABSORB: f64 = 0.4;

/// A weighted term or phrase of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedTerm {
    /// Surface form, e.g. "clustering" or "chain of thought".
    pub text: String,
    /// c-TF-IDF weight.
    pub weight: f64,
    /// Stems of its content words (used to keep listed terms from sharing a stem).
    pub stems: Vec<u32>,
}

/// Top terms of each topic, best first, no two sharing a stem.
pub fn topic_terms(
    tc: &TokenizedCorpus,
    vocabulary: &[bool],
    assignments: &[usize],
    k: usize,
    top: usize,
    phrases: bool,
) -> Vec<Vec<WeightedTerm>> {
    let n_terms = tc.terms.len();
    let docs: Vec<usize> = (0..tc.n_docs()).collect();
    // Term counts per topic (integer sums: the same whatever the thread count), accumulated over
    // the vocabulary's terms only, numbered densely, so each partial sum is small.
    const OUT: u32 = u32::MAX;
    let mut slot = vec![OUT; n_terms];
    let mut in_vocabulary: Vec<u32> = Vec::new();
    for (t, _) in vocabulary.iter().enumerate().filter(|(_, &v)| v) {
        slot[t] = in_vocabulary.len() as u32;
        in_vocabulary.push(t as u32);
    }
    let nv = in_vocabulary.len();
    // Each word's slot, looked up in one small array (the words themselves are large records).
    let word_slot: Vec<u32> = tc
        .words
        .iter()
        .map(|w| match w.kind {
            WordKind::Term(t) => slot[t as usize],
            _ => OUT,
        })
        .collect();
    let dense: Vec<Vec<u32>> = docs
        .par_chunks(crate::tokenize::CHUNK)
        .fold(
            || vec![vec![0u32; nv]; k],
            |mut acc, ds| {
                for &d in ds {
                    let row = &mut acc[assignments[d]];
                    for &w in tc.doc_words(d) {
                        let s = word_slot[w as usize];
                        if s != OUT {
                            row[s as usize] += 1;
                        }
                    }
                }
                acc
            },
        )
        .reduce(
            || vec![vec![0u32; nv]; k],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
                }
                a
            },
        );
    let counts: Vec<Vec<u32>> = dense
        .iter()
        .map(|row| {
            let mut full = vec![0u32; n_terms];
            for (&t, &c) in in_vocabulary.iter().zip(row) {
                full[t as usize] = c;
            }
            full
        })
        .collect();
    let totals: Vec<f64> = counts
        .iter()
        .map(|r| r.iter().map(|&c| c as f64).sum())
        .collect();
    let mean_total = totals.iter().sum::<f64>() / k.max(1) as f64;
    let freq: Vec<f64> = (0..n_terms)
        .map(|t| counts.iter().map(|r| r[t] as f64).sum())
        .collect();
    let weight = |count: f64, class_total: f64, f: f64| {
        if count <= 0.0 || class_total <= 0.0 || f <= 0.0 {
            0.0
        } else {
            count / class_total * (1.0 + mean_total / f).ln()
        }
    };

    // Unigram candidates per topic.
    let unigrams: Vec<Vec<(u32, f64)>> = (0..k)
        .map(|c| {
            let mut v: Vec<(u32, f64)> = (0..n_terms as u32)
                .filter(|&t| counts[c][t as usize] > 0)
                .map(|t| {
                    (
                        t,
                        weight(counts[c][t as usize] as f64, totals[c], freq[t as usize]),
                    )
                })
                .collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            v.truncate(PHRASE_SEEDS.max(top * 3));
            v
        })
        .collect();

    let phrase_lists = if phrases {
        find_phrases(tc, assignments, k, &unigrams, &counts, &totals, &weight)
    } else {
        (0..k).map(|_| Vec::new()).collect()
    };

    (0..k)
        .map(|c| {
            let mut cands: Vec<WeightedTerm> = Vec::new();
            let mut absorbed: FxHashSet<u32> = FxHashSet::default();
            for p in &phrase_lists[c] {
                cands.push(WeightedTerm {
                    text: p.text.clone(),
                    weight: p.weight,
                    stems: p.stems.clone(),
                });
                absorbed.extend(p.absorbs.iter().copied());
            }
            for &(t, w) in &unigrams[c] {
                let text = tc.terms[t as usize].surface.clone();
                if absorbed.contains(&t) {
                    // The phrase carries the word's weight when that is higher.
                    if let Some(p) = cands.iter_mut().find(|p| p.stems.contains(&t)) {
                        p.weight = p.weight.max(w);
                    }
                    continue;
                }
                cands.push(WeightedTerm {
                    text,
                    weight: w,
                    stems: vec![t],
                });
            }
            cands.sort_by(|a, b| {
                b.weight
                    .total_cmp(&a.weight)
                    .then_with(|| a.text.cmp(&b.text))
            });
            let mut used: FxHashSet<u32> = FxHashSet::default();
            let mut out = Vec::new();
            for cand in cands {
                if cand.stems.iter().any(|s| used.contains(s)) {
                    continue;
                }
                used.extend(cand.stems.iter().copied());
                out.push(cand);
                if out.len() == top {
                    break;
                }
            }
            out
        })
        .collect()
}

/// A counted phrase being ranked: weight, surface word ids, stems, absorbed stems.
type Ranked = (f64, [u32; 3], Vec<u32>, Vec<u32>);

struct Phrase {
    text: String,
    weight: f64,
    stems: Vec<u32>,
    absorbs: Vec<u32>,
}

/// A phrase key: the word ids of its positions, with content words replaced by their term id
/// (tagged) so that "language models" and "language model" count together.
type Key = [u64; 3];

fn key_part(tc: &TokenizedCorpus, w: u32) -> u64 {
    match tc.words[w as usize].kind {
        WordKind::Term(t) => (1u64 << 40) | t as u64,
        _ => w as u64,
    }
}

#[allow(clippy::too_many_arguments)]
fn find_phrases(
    tc: &TokenizedCorpus,
    assignments: &[usize],
    k: usize,
    unigrams: &[Vec<(u32, f64)>],
    counts: &[Vec<u32>],
    totals: &[f64],
    weight: &(dyn Fn(f64, f64, f64) -> f64 + Sync),
) -> Vec<Vec<Phrase>> {
    // Terms that seed a phrase in some topic, numbered densely (`seed_terms[i]` is seed `i`):
    // windows whose ends are not both among them are never counted. Each word's role is looked
    // up in one small array (it stays in cache): the seed it stands for, or that it cannot end a
    // phrase, or that it was dropped.
    const NO_SEED: u32 = u32::MAX - 1;
    const DROPPED: u32 = u32::MAX;
    let mut seed_index = vec![NO_SEED; tc.terms.len()];
    let mut seed_terms: Vec<u32> = Vec::new();
    for u in unigrams {
        for &(t, _) in u.iter().take(PHRASE_SEEDS) {
            if seed_index[t as usize] == NO_SEED {
                seed_index[t as usize] = seed_terms.len() as u32;
                seed_terms.push(t);
            }
        }
    }
    let n_seeds = seed_terms.len();
    // Which seeds seed which topic: one flag per (topic, seed).
    let mut seeds_topic = vec![false; k * n_seeds];
    for (c, u) in unigrams.iter().enumerate() {
        for &(t, _) in u.iter().take(PHRASE_SEEDS) {
            seeds_topic[c * n_seeds + seed_index[t as usize] as usize] = true;
        }
    }
    let role: Vec<u32> = tc
        .words
        .iter()
        .map(|w| match w.kind {
            WordKind::Term(t) => seed_index[t as usize],
            WordKind::Dropped => DROPPED,
            _ => NO_SEED,
        })
        .collect();
    let part: Vec<u64> = (0..tc.words.len() as u32)
        .map(|w| key_part(tc, w))
        .collect();
    // Each window that could be a phrase: the seeds at its ends, and its word ids.
    let windows = |doc: &[u32], f: &mut dyn FnMut(u32, u32, &[u32])| {
        for n in [2usize, 3] {
            for w in doc.windows(n) {
                let (a, b) = (role[w[0] as usize], role[w[n - 1] as usize]);
                if a >= NO_SEED || b >= NO_SEED || a == b {
                    continue;
                }
                if n == 3 && role[w[1] as usize] == DROPPED {
                    continue;
                }
                f(a, b, w);
            }
        }
    };
    let key_of = |w: &[u32]| {
        let mut key = [u64::MAX; 3];
        for (i, &x) in w.iter().take_while(|&&x| x != u32::MAX).enumerate() {
            key[i] = part[x as usize];
        }
        key
    };
    // Pass 1, parallel over fixed chunks of documents: per topic, counts of the surface variants
    // (a window's word ids, padded with u32::MAX: no allocation per window) of windows made of
    // its seed words; then grouped by phrase key. Integer counts merge the same in any order.
    type Variants = FxHashMap<[u32; 3], u32>;
    // Large corpora: count phrases on every `step`-th document and scale the counts back up.
    let step = tc.n_docs().div_ceil(PHRASE_SAMPLE).max(1);
    let docs: Vec<usize> = (0..tc.n_docs()).step_by(step).collect();
    // Every window that could be a phrase in some topic is also kept (as its word ids), so
    // that pass 2 reads those few million instead of scanning every word again.
    type Windows = Vec<[u32; 3]>;
    let (topic_variants, seen): (Vec<Variants>, Vec<Windows>) = docs
        .par_chunks(crate::tokenize::CHUNK)
        .fold(
            || (vec![Variants::default(); k], Windows::new()),
            |(mut tables, mut seen), ds| {
                for &d in ds {
                    let c = assignments[d];
                    let seeds = &seeds_topic[c * n_seeds..(c + 1) * n_seeds];
                    let table = &mut tables[c];
                    windows(tc.doc_words(d), &mut |first, last, w| {
                        let mut variant = [u32::MAX; 3];
                        variant[..w.len()].copy_from_slice(w);
                        seen.push(variant);
                        if seeds[first as usize] && seeds[last as usize] {
                            *table.entry(variant).or_default() += 1;
                        }
                    });
                }
                (tables, seen)
            },
        )
        .map(|(tables, seen)| (tables, vec![seen]))
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
        );
    type Table = FxHashMap<Key, (u32, Vec<([u32; 3], u32)>)>;
    let topic_counts: Vec<Table> = topic_variants
        .into_iter()
        .map(|variants| {
            let mut table = Table::default();
            for (v, c) in variants {
                let e = table.entry(key_of(&v)).or_default();
                e.0 += c;
                e.1.push((v, c));
            }
            table.retain(|_, e| e.0 >= PHRASE_MIN_COUNT);
            table
        })
        .collect();
    // Pass 2, parallel: corpus frequency of every retained phrase. Most windows cannot be one:
    // a bit per (first seed, last seed) pair rules them out before their key is hashed.
    let wanted: FxHashSet<Key> = topic_counts
        .iter()
        .flat_map(|t| t.keys().copied())
        .collect();
    let mut ends_wanted = vec![0u64; (n_seeds * n_seeds).div_ceil(64)];
    let pair = |a: u32, b: u32| a as usize * n_seeds + b as usize;
    for key in &wanted {
        let parts = key.iter().filter(|&&p| p != u64::MAX);
        let seed = |p: &u64| seed_index[(p & 0xFF_FFFF_FFFF) as usize];
        let (Some(first), Some(last)) = (parts.clone().next(), parts.clone().next_back()) else {
            continue;
        };
        let bit = pair(seed(first), seed(last));
        ends_wanted[bit / 64] |= 1 << (bit % 64);
    }
    let corpus: FxHashMap<Key, u32> = seen
        .par_iter()
        .flat_map_iter(|list| list.chunks(1 << 16))
        .fold(
            FxHashMap::default,
            |mut local: FxHashMap<Key, u32>, list| {
                for w in list {
                    let n = if w[2] == u32::MAX { 2 } else { 3 };
                    let bit = pair(role[w[0] as usize], role[w[n - 1] as usize]);
                    if ends_wanted[bit / 64] & (1 << (bit % 64)) == 0 {
                        continue;
                    }
                    let key = key_of(w);
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
        });
    drop(seen);
    // Each topic's phrases, weighted and ranked; a phrase's text is spelled out only for the few
    // that survive (and for ties, which the text breaks), not for every counted window.
    let spell = |surface: &[u32; 3]| -> String {
        surface
            .iter()
            .filter(|&&w| w != u32::MAX)
            .map(|&w| tc.words[w as usize].surface.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    topic_counts
        .into_par_iter()
        .enumerate()
        .map(|(c, table)| {
            // (weight, surface, stems, absorbs)
            let mut ranked: Vec<Ranked> = table
                .into_iter()
                .map(|(key, (count, variants))| {
                    let surface = variants
                        .into_iter()
                        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
                        .map(|(ws, _)| ws)
                        .unwrap_or([u32::MAX; 3]);
                    let stems: Vec<u32> = key
                        .iter()
                        .filter(|&&p| p != u64::MAX && p >> 40 == 1)
                        .map(|&p| (p & 0xFF_FFFF_FFFF) as u32)
                        .collect();
                    let f = (corpus.get(&key).copied().unwrap_or(count) as usize * step) as f64;
                    let count = count as usize * step;
                    let absorbs = stems
                        .iter()
                        .copied()
                        .filter(|&t| count as f64 >= ABSORB * counts[c][t as usize] as f64)
                        .collect();
                    (weight(count as f64, totals[c], f), surface, stems, absorbs)
                })
                .collect();
            // By weight, and ties (many: equal counts give equal weights) by text, spelled once
            // per tied phrase.
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
            for run in ranked.chunk_by_mut(|a, b| a.0.total_cmp(&b.0).is_eq()) {
                if run.len() > 1 {
                    run.sort_by_cached_key(|p| spell(&p.1));
                }
            }
            // Keep phrases that do not share stems with a better phrase.
            let mut used: FxHashSet<u32> = FxHashSet::default();
            ranked
                .into_iter()
                .filter(|p| {
                    if p.2.iter().any(|s| used.contains(s)) {
                        return false;
                    }
                    used.extend(p.2.iter().copied());
                    true
                })
                .map(|(weight, surface, stems, absorbs)| Phrase {
                    text: spell(&surface),
                    weight,
                    stems,
                    absorbs,
                })
                .collect()
        })
        .collect()
}
