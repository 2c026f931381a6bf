//! Class-based TF-IDF (BERTopic's c-TF-IDF) over unigrams and phrases, and label selection.
//!
//! For topic `c` and term `t`: `W(t, c) = sqrt(tf(t, c) / |c|) * ln(1 + A / f(t))`, where
//! `tf(t, c)` is how often `t` occurs in the topic's documents, `|c|` the topic's total term
//! count, `A` the mean of `|c|` over topics and `f(t)` the frequency of `t` over all topics.
//! Unlike raw centroid weights, this rewards words that are frequent in one topic *and* rare
//! elsewhere. The square root is BERTopic's `reduce_frequent_words`: it flattens the term
//! frequency, so a word that is everywhere in a topic because it is everywhere in the corpus
//! ("model", "learning") no longer outweighs the rarer words that set the topic apart
//! (`damping = false` gives the plain formula).
//!
//! Three more rules keep the terms distinctive:
//! - **Spread.** A term must occur in at least [`TermRules::min_spread`] of the topic's
//!   documents (at least 2 documents in a topic of 10 or more): a few documents that repeat a
//!   token hundreds of times (uuencoded attachments, tables) cannot lead a topic. Terms that
//!   fail the rule are only used when too few others are left.
//! - **Diversity.** The list is picked by maximal marginal relevance over the terms' LSA
//!   vectors (their rows of `V Σ`, so terms that occur together point the same way): each next
//!   term maximises `(1 - d) * relevance - d * (how near it is to duplicating a term already
//!   picked)`, with `d` = [`TermRules::diversity`], so the top terms are not near-duplicates
//!   ("rl" beside "reinforcement learning").
//! - **One stem once.** Terms or phrases that share a stem are never listed together.
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

/// How terms are ranked and picked (see the module docs). Defaults: damping on, spread 2% of a
/// topic's documents, diversity 0.3.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TermRules {
    /// Terms listed per topic.
    pub top: usize,
    /// Count two- and three-word phrases.
    pub phrases: bool,
    /// `sqrt` of the term frequency (BERTopic's reduce_frequent_words).
    pub damping: bool,
    /// Least share of a topic's documents a term must occur in.
    pub min_spread: f64,
    /// Weight of novelty against relevance when picking terms (0 = by weight alone).
    pub diversity: f64,
}

impl Default for TermRules {
    fn default() -> Self {
        TermRules {
            top: 10,
            phrases: true,
            damping: true,
            min_spread: 0.02,
            diversity: 0.3,
        }
    }
}

impl TermRules {
    /// The documents a term must occur in, for a topic of `size` documents.
    pub fn min_docs(&self, size: usize) -> u32 {
        let share = (self.min_spread * size as f64).ceil() as u32;
        share.max(if size >= 10 { 2 } else { 1 })
    }
}

/// Each vocabulary term's vector for the diversity rule (`vectors[row[t]]`), from the
/// reduction: terms without a row are never penalised as similar.
#[derive(Debug, Clone, Copy)]
pub struct TermVectors<'a> {
    /// Row of each term of the tokenized corpus, or `u32::MAX`.
    pub row: &'a [u32],
    pub vectors: ndarray::ArrayView2<'a, f32>,
}

/// The c-TF-IDF tables behind the topics' terms, kept for what is built from topics later (the
/// topic hierarchy, merged topics): per vocabulary term (a "slot"), its surface, how generic it
/// is, its inverse class frequency, and each topic's weight units.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassTable {
    /// Term id of each slot.
    pub terms: Vec<u32>,
    /// Surface form of each slot.
    pub surfaces: Vec<String>,
    /// Share of all documents each slot occurs in.
    pub share: Vec<f64>,
    /// `ln(1 + A / f(t))` of each slot.
    pub idf: Vec<f64>,
    /// Slot of the term each slot is one with (a plural the stemmer keeps, see the module).
    pub canon: Vec<u32>,
    /// `units[topic][slot]`: each document of the topic adds `1000 (1 + ln count)`.
    pub units: Vec<Vec<u64>>,
    /// Whether the term frequency is damped (`sqrt`).
    pub damping: bool,
}

impl ClassTable {
    /// The c-TF-IDF weights of a class with these units (a topic's, or several summed).
    pub fn weights(&self, units: &[u64]) -> Vec<f64> {
        let total: f64 = units.iter().map(|&u| u as f64).sum();
        units
            .iter()
            .zip(&self.idf)
            .map(|(&u, &idf)| {
                if u == 0 || total <= 0.0 {
                    return 0.0;
                }
                let tf = u as f64 / total;
                (if self.damping { tf.sqrt() } else { tf }) * idf
            })
            .collect()
    }

    /// The best `n` words of a class by weight, no two one term, those found in at most
    /// `max_share` of all documents first.
    pub fn best_words(&self, units: &[u64], n: usize, max_share: f64) -> Vec<(String, f64)> {
        let w = self.weights(units);
        let mut order: Vec<usize> = (0..w.len()).filter(|&s| w[s] > 0.0).collect();
        order.sort_by(|&a, &b| {
            (self.share[b] <= max_share)
                .cmp(&(self.share[a] <= max_share))
                .then(w[b].total_cmp(&w[a]))
                .then(a.cmp(&b))
        });
        let mut used = FxHashSet::default();
        order
            .into_iter()
            .filter(|&s| used.insert(self.canon[s]))
            .take(n)
            .map(|s| (self.surfaces[s].clone(), w[s]))
            .collect()
    }
}

/// A weighted term or phrase of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedTerm {
    /// Surface form, e.g. "clustering" or "chain of thought".
    pub text: String,
    /// c-TF-IDF weight.
    pub weight: f64,
    /// Stems of its content words (used to keep listed terms from sharing a stem).
    pub stems: Vec<u32>,
    /// The share of all documents its least frequent word occurs in: how generic the term is
    /// (a phrase is as distinctive as its rarest word).
    pub corpus_share: f64,
    /// How many times more common (by documents) its most concentrated word is in the topic than
    /// in the whole corpus.
    pub lift: f64,
}

/// Top terms of each topic, best first, no two sharing a stem.
pub fn topic_terms(
    tc: &TokenizedCorpus,
    vocabulary: &[bool],
    assignments: &[usize],
    k: usize,
    rules: &TermRules,
    vectors: Option<TermVectors<'_>>,
) -> (Vec<Vec<WeightedTerm>>, ClassTable) {
    let top = rules.top;
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
    // Per topic and term: its occurrences (for phrases, whose counts are raw), its weight units
    // (each document adds `1 + ln(count in the document)`, in thousandths so that the sums are
    // integers, the same whatever the thread count: a few documents repeating a token hundreds
    // of times cannot outweigh the many that use a word once or twice), and the documents it
    // occurs in (for the spread rule).
    let unit = weight_units;
    struct Acc {
        raw: Vec<Vec<u32>>,
        sub: Vec<Vec<u64>>,
        df: Vec<Vec<u32>>,
    }
    let new_acc = || Acc {
        raw: vec![vec![0u32; nv]; k],
        sub: vec![vec![0u64; nv]; k],
        df: vec![vec![0u32; nv]; k],
    };
    // Few, large ranges of documents: each accumulator is k x vocabulary x 16 bytes.
    let range = docs
        .len()
        .div_ceil(2 * rayon::current_num_threads())
        .max(crate::tokenize::CHUNK);
    let acc = docs
        .par_chunks(range)
        .fold(
            || (new_acc(), vec![u32::MAX; nv], Vec::<(u32, u32)>::new()),
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
                        acc.sub[c][s as usize] += unit(n);
                        acc.df[c][s as usize] += 1;
                    }
                }
                (acc, at, doc)
            },
        )
        .map(|(acc, _, _)| acc)
        .reduce(new_acc, |mut a, b| {
            for (x, y) in a.raw.iter_mut().zip(b.raw) {
                x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
            }
            for (x, y) in a.sub.iter_mut().zip(b.sub) {
                x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
            }
            for (x, y) in a.df.iter_mut().zip(b.df) {
                x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
            }
            a
        });
    // The tables stay indexed by vocabulary slot; these read them by term id.
    let slot_of = |t: u32| match slot[t as usize] {
        OUT => None,
        s => Some(s as usize),
    };
    let raw = |c: usize, t: u32| slot_of(t).map_or(0, |s| acc.raw[c][s]);
    let units_of = |c: usize, t: u32| slot_of(t).map_or(0, |s| acc.sub[c][s]);
    let docs_with = |c: usize, t: u32| slot_of(t).map_or(0, |s| acc.df[c][s]);
    // Topic sizes in documents, for the spread rule.
    let mut sizes = vec![0usize; k];
    assignments.iter().for_each(|&c| sizes[c] += 1);
    // Raw totals weigh phrases (counted raw); unit totals and frequencies weigh words.
    let totals: Vec<f64> = acc
        .raw
        .iter()
        .map(|r| r.iter().map(|&c| c as f64).sum())
        .collect();
    let sub_totals: Vec<f64> = acc
        .sub
        .iter()
        .map(|r| r.iter().map(|&c| c as f64).sum())
        .collect();
    let mean_total = totals.iter().sum::<f64>() / k.max(1) as f64;
    let mean_sub_total = sub_totals.iter().sum::<f64>() / k.max(1) as f64;
    // Each term's share of all documents.
    let n_docs = assignments.len().max(1) as f64;
    let share_by_slot: Vec<f64> = (0..nv)
        .map(|s| acc.df.iter().map(|r| r[s] as f64).sum::<f64>() / n_docs)
        .collect();
    let share = |t: u32| slot_of(t).map_or(0.0, |s| share_by_slot[s]);
    let corpus_share = |stems: &[u32]| stems.iter().map(|&t| share(t)).fold(1.0f64, f64::min);
    let lift = |c: usize, stems: &[u32]| {
        stems
            .iter()
            .map(|&t| {
                let in_topic = docs_with(c, t) as f64 / sizes[c].max(1) as f64;
                in_topic / share(t).max(1e-12)
            })
            .fold(0.0f64, f64::max)
    };
    // A stem and the same stem with an "s" (the plural the stemmer leaves alone: "llm" and
    // "llms", "gan" and "gans") are one term for the rule that no two listed terms share a stem.
    let canon: Vec<u32> = {
        let by_stem: FxHashMap<&str, u32> = in_vocabulary
            .iter()
            .map(|&t| (tc.terms[t as usize].stem.as_str(), t))
            .collect();
        (0..n_terms as u32)
            .map(|t| {
                let stem = tc.terms[t as usize].stem.as_str();
                stem.strip_suffix('s')
                    .filter(|s| s.len() >= 2)
                    .and_then(|s| by_stem.get(s).copied())
                    .unwrap_or(t)
            })
            .collect()
    };
    let sub_freq: Vec<f64> = (0..nv)
        .map(|s| acc.sub.iter().map(|r| r[s] as f64).sum())
        .collect();
    let damping = rules.damping;
    let weigh = |count: f64, class_total: f64, f: f64, mean: f64| {
        if count <= 0.0 || class_total <= 0.0 || f <= 0.0 {
            0.0
        } else {
            let tf = count / class_total;
            let tf = if damping { tf.sqrt() } else { tf };
            tf * (1.0 + mean / f).ln()
        }
    };
    let weight = |count: f64, class_total: f64, f: f64| weigh(count, class_total, f, mean_total);

    // Unigram candidates per topic: the well-spread terms first, by weight.
    let spread = |c: usize, t: u32| docs_with(c, t) >= rules.min_docs(sizes[c]);
    let unigrams: Vec<Vec<(u32, f64)>> = (0..k)
        .map(|c| {
            let mut v: Vec<(u32, f64)> = in_vocabulary
                .iter()
                .enumerate()
                .filter(|&(s, _)| acc.raw[c][s] > 0)
                .map(|(s, &t)| {
                    let w = weigh(
                        units_of(c, t) as f64,
                        sub_totals[c],
                        sub_freq[s],
                        mean_sub_total,
                    );
                    (t, w)
                })
                .collect();
            v.sort_by(|a, b| {
                spread(c, b.0)
                    .cmp(&spread(c, a.0))
                    .then(b.1.total_cmp(&a.1))
                    .then(a.0.cmp(&b.0))
            });
            v.truncate(PHRASE_SEEDS.max(top * 3));
            v
        })
        .collect();

    let phrase_lists = if rules.phrases {
        find_phrases(tc, assignments, k, &unigrams, &raw, &totals, &weight)
    } else {
        (0..k).map(|_| Vec::new()).collect()
    };

    let lists = (0..k)
        .map(|c| {
            let mut cands: Vec<WeightedTerm> = Vec::new();
            let mut absorbed: FxHashSet<u32> = FxHashSet::default();
            for p in &phrase_lists[c] {
                cands.push(WeightedTerm {
                    text: p.text.clone(),
                    weight: p.weight,
                    stems: p.stems.clone(),
                    corpus_share: corpus_share(&p.stems),
                    lift: lift(c, &p.stems),
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
                    corpus_share: share(t),
                    lift: lift(c, &[t]),
                });
            }
            // Well-spread candidates first (a phrase counts as spread when its words are),
            // then by weight.
            let is_spread = |w: &WeightedTerm| w.stems.iter().all(|&t| spread(c, t));
            cands.sort_by(|a, b| {
                is_spread(b)
                    .cmp(&is_spread(a))
                    .then(b.weight.total_cmp(&a.weight))
                    .then_with(|| a.text.cmp(&b.text))
            });
            let mut used: FxHashSet<u32> = FxHashSet::default();
            let mut pool = Vec::new();
            for cand in cands {
                if cand
                    .stems
                    .iter()
                    .any(|&s| used.contains(&canon[s as usize]))
                {
                    continue;
                }
                used.extend(cand.stems.iter().map(|&s| canon[s as usize]));
                pool.push(cand);
                if pool.len() == top * 3 {
                    break;
                }
            }
            let spread_count = pool.iter().filter(|w| is_spread(w)).count();
            pick_diverse(pool, spread_count, top, rules.diversity, vectors)
        })
        .collect();
    let slot_canon: Vec<u32> = in_vocabulary
        .iter()
        .map(|&t| slot[canon[t as usize] as usize])
        .collect();
    let table = ClassTable {
        surfaces: in_vocabulary
            .iter()
            .map(|&t| tc.terms[t as usize].surface.clone())
            .collect(),
        terms: in_vocabulary.clone(),
        share: share_by_slot.clone(),
        idf: sub_freq
            .iter()
            .map(|&f| {
                if f > 0.0 {
                    (1.0 + mean_sub_total / f).ln()
                } else {
                    0.0
                }
            })
            .collect(),
        canon: slot_canon,
        units: acc.sub.clone(),
        damping,
    };
    (lists, table)
}

/// Top terms of each topic from a [`ClassTable`] and its document counts alone (no tokens): what
/// a report built from summed counts lists (see [`super::aggregate`]). The same rules as
/// [`topic_terms`] with `phrases = false`: spread first, then weight, one stem once, then the
/// diversity pick. `docs[topic][slot]` are the documents of the topic the slot's term occurs
/// in; `sizes` the topics' documents; `vectors` index rows by `table.terms`.
pub fn terms_from_table(
    table: &ClassTable,
    docs: &[Vec<u64>],
    sizes: &[usize],
    rules: &TermRules,
    vectors: Option<TermVectors<'_>>,
) -> Vec<Vec<WeightedTerm>> {
    let top = rules.top;
    (0..table.units.len())
        .map(|c| {
            let w = table.weights(&table.units[c]);
            let min_docs = u64::from(rules.min_docs(sizes[c]));
            let spread = |s: usize| docs[c][s] >= min_docs;
            let mut order: Vec<usize> = (0..w.len()).filter(|&s| w[s] > 0.0).collect();
            order.sort_by(|&a, &b| {
                spread(b)
                    .cmp(&spread(a))
                    .then(w[b].total_cmp(&w[a]))
                    .then_with(|| table.surfaces[a].cmp(&table.surfaces[b]))
            });
            let mut used: FxHashSet<u32> = FxHashSet::default();
            let mut pool = Vec::new();
            let mut preferred = 0;
            for s in order {
                if !used.insert(table.canon[s]) {
                    continue;
                }
                preferred += usize::from(spread(s));
                let in_topic = docs[c][s] as f64 / sizes[c].max(1) as f64;
                pool.push(WeightedTerm {
                    text: table.surfaces[s].clone(),
                    weight: w[s],
                    stems: vec![table.terms[s]],
                    corpus_share: table.share[s],
                    lift: in_topic / table.share[s].max(1e-12),
                });
                if pool.len() == top * 3 {
                    break;
                }
            }
            pick_diverse(pool, preferred, top, rules.diversity, vectors)
        })
        .collect()
}

/// Cosine similarity from which two terms count as near-duplicates for the diversity rule.
/// Only near-duplicates are held back: penalising every similarity (plain MMR) pushed out the
/// words that belong together and let in generic ones, which lowered both coherence (NPMI) and
/// the diversity across topics (measured with `scripts/label_quality.py`, see the README).
pub const NEAR_DUPLICATE: f64 = 0.85;

/// Picks `top` terms from `pool` (ranked; its first `preferred` are the well-spread ones) by
/// maximal marginal relevance against near-duplicates: each next term maximises
/// `(1 - d) * w / w_max - d * dup`, where `dup` rises from 0 at a cosine similarity of
/// [`NEAR_DUPLICATE`] to a term already picked, to 1 for the same direction. The preferred terms
/// are picked before any other. Without vectors (or with `d = 0`) this keeps the ranking.
fn pick_diverse(
    pool: Vec<WeightedTerm>,
    preferred: usize,
    top: usize,
    d: f64,
    vectors: Option<TermVectors<'_>>,
) -> Vec<WeightedTerm> {
    let vectors = match vectors {
        Some(v) if d > 0.0 && pool.len() > 1 => v,
        _ => return pool.into_iter().take(top).collect(),
    };
    // Each candidate's unit vector: the sum of its words' vectors.
    let dims = vectors.vectors.ncols();
    let unit: Vec<Option<Vec<f32>>> = pool
        .iter()
        .map(|w| {
            let mut v = vec![0f32; dims];
            let mut any = false;
            for &t in &w.stems {
                let row = vectors.row.get(t as usize).copied().unwrap_or(u32::MAX);
                if row != u32::MAX {
                    any = true;
                    v.iter_mut()
                        .zip(vectors.vectors.row(row as usize))
                        .for_each(|(a, b)| *a += b);
                }
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            (any && norm > 0.0).then(|| v.iter().map(|x| x / norm).collect())
        })
        .collect();
    let cos = |a: usize, b: usize| -> f64 {
        match (&unit[a], &unit[b]) {
            (Some(x), Some(y)) => x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>() as f64,
            _ => 0.0,
        }
    };
    let w_max = pool
        .iter()
        .map(|w| w.weight)
        .fold(0.0f64, f64::max)
        .max(1e-12);
    let mut picked: Vec<usize> = Vec::new();
    let mut left: Vec<usize> = (0..pool.len()).collect();
    while picked.len() < top && !left.is_empty() {
        // Preferred (well-spread) candidates go first while any are left.
        let tier_open = left.iter().any(|&i| i < preferred);
        let best = left
            .iter()
            .copied()
            .filter(|&i| !tier_open || i < preferred)
            .map(|i| {
                let closest = picked.iter().map(|&j| cos(i, j)).fold(0.0f64, f64::max);
                let duplicate = ((closest - NEAR_DUPLICATE) / (1.0 - NEAR_DUPLICATE)).max(0.0);
                let score = (1.0 - d) * pool[i].weight / w_max - d * duplicate;
                (i, score)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(i, _)| i)
            .expect("left is not empty");
        picked.push(best);
        left.retain(|&i| i != best);
    }
    // Listed by weight (well-spread terms first), so the list reads from the strongest down.
    picked.sort_by(|&a, &b| {
        (a >= preferred)
            .cmp(&(b >= preferred))
            .then(pool[b].weight.total_cmp(&pool[a].weight))
            .then(a.cmp(&b))
    });
    let mut pool: Vec<Option<WeightedTerm>> = pool.into_iter().map(Some).collect();
    picked.into_iter().filter_map(|i| pool[i].take()).collect()
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
    counts: &(dyn Fn(usize, u32) -> u32 + Sync),
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
                        .filter(|&t| count as f64 >= ABSORB * counts(c, t) as f64)
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

/// `1000 (1 + ln count)`, rounded (0 for 0): the weight units a document adds to a term it holds
/// `count` times, from a table for the small counts nearly every entry has. Sums of these are
/// what c-TF-IDF ranks by, here and in summed reports ([`super::aggregate`]).
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
    use crate::tokenize::{Analyzer, StopWordList, TokenizerParams};

    fn corpus(texts: &[String]) -> TokenizedCorpus {
        let p = TokenizerParams::new()
            .stem(false)
            .stop_words(StopWordList::None);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        TokenizedCorpus::build_texts(&refs, &Analyzer::new(&p))
    }

    fn terms(texts: &[String], assignments: &[usize], rules: &TermRules) -> Vec<Vec<String>> {
        let tc = corpus(texts);
        let vocabulary = vec![true; tc.terms.len()];
        let k = assignments.iter().max().unwrap() + 1;
        topic_terms(&tc, &vocabulary, assignments, k, rules, None)
            .0
            .into_iter()
            .map(|ts| ts.into_iter().map(|t| t.text).collect())
            .collect()
    }

    fn rules() -> TermRules {
        TermRules {
            top: 3,
            phrases: false,
            ..TermRules::default()
        }
    }

    #[test]
    fn weight_units_are_a_thousand_times_one_plus_ln_count() {
        assert_eq!(weight_units(0), 0);
        assert_eq!(weight_units(1), 1000);
        for c in 2..200u32 {
            let want = (1000.0 * (1.0 + f64::from(c).ln())).round() as u64;
            assert_eq!(weight_units(c), want, "count {c}");
        }
    }

    #[test]
    fn a_few_documents_repeating_a_token_cannot_lead_a_topic() {
        // 40 documents about graphs, and two uuencoded attachments full of "zq".
        let mut texts: Vec<String> = (0..40)
            .map(|i| format!("graph nodes edges message passing item{i}"))
            .collect();
        texts.extend((0..2).map(|_| "zq ".repeat(300)));
        texts.extend((0..40).map(|i| format!("protein folding structure sequence item{i}")));
        let assignments: Vec<usize> = (0..82).map(|i| usize::from(i >= 42)).collect();
        let got = terms(&texts, &assignments, &rules());
        assert!(!got[0].contains(&"zq".to_string()), "{:?}", got[0]);
        // With the spread rule and damping off, counting each document as 1 + ln(its count)
        // still holds "zq" back (raw counts gave it 600 occurrences against 40).
        let plain = TermRules {
            min_spread: 0.0,
            damping: false,
            ..rules()
        };
        let tc = corpus(&texts);
        let vocabulary = vec![true; tc.terms.len()];
        let (got, _) = topic_terms(&tc, &vocabulary, &assignments, 2, &plain, None);
        assert_ne!(got[0][0].text, "zq", "{:?}", got[0]);
    }

    #[test]
    fn damping_lets_the_distinctive_word_beat_the_frequent_one() {
        // "model" is four times in every document of topic 0 and in every one of topic 1.
        let mut texts: Vec<String> = (0..10)
            .map(|_| "model model model model kernel".to_string())
            .collect();
        texts.extend((0..10).map(|_| "model tree".to_string()));
        let assignments: Vec<usize> = (0..20).map(|i| usize::from(i >= 10)).collect();
        let damped = terms(&texts, &assignments, &rules());
        assert_eq!(damped[0][0], "kernel", "{damped:?}");
        let plain = terms(
            &texts,
            &assignments,
            &TermRules {
                damping: false,
                ..rules()
            },
        );
        assert_eq!(plain[0][0], "model", "{plain:?}");
    }

    #[test]
    fn a_plural_the_stemmer_keeps_is_not_listed_beside_its_singular() {
        let mut texts: Vec<String> = (0..20)
            .map(|i| format!("llm llms prompt item{i}"))
            .collect();
        texts.extend((0..20).map(|i| format!("protein folding item{i}")));
        let assignments: Vec<usize> = (0..40).map(|i| usize::from(i >= 20)).collect();
        let got = terms(&texts, &assignments, &rules());
        let both = got[0].contains(&"llm".to_string()) && got[0].contains(&"llms".to_string());
        assert!(!both, "{:?}", got[0]);
        assert!(got[0].contains(&"prompt".to_string()), "{:?}", got[0]);
    }

    #[test]
    fn near_duplicates_give_way_to_the_next_term() {
        let term = |text: &str, weight: f64, stem: u32| WeightedTerm {
            text: text.into(),
            weight,
            stems: vec![stem],
            corpus_share: 0.01,
            lift: 10.0,
        };
        let pool = vec![
            term("cnn", 1.0, 0),
            term("convolutional", 0.9, 1),
            term("pooling", 0.5, 2),
        ];
        // "convolutional" points where "cnn" does; "pooling" elsewhere.
        let v = ndarray::array![[1.0f32, 0.0], [0.99, 0.05], [0.0, 1.0]];
        let row = [0u32, 1, 2];
        let vectors = TermVectors {
            row: &row,
            vectors: v.view(),
        };
        let texts = |p: Vec<WeightedTerm>| p.into_iter().map(|t| t.text).collect::<Vec<_>>();
        let diverse = pick_diverse(pool.clone(), 3, 2, 0.3, Some(vectors));
        assert_eq!(texts(diverse), ["cnn", "pooling"]);
        let by_weight = pick_diverse(pool, 3, 2, 0.0, Some(vectors));
        assert_eq!(texts(by_weight), ["cnn", "convolutional"]);
    }
}
