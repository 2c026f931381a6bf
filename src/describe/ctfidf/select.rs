//! Term selection: from a topic's weighted candidates to its listed terms.
//!
//! Candidates are ranked well-spread first (see [`TermRules::min_spread`]), then by weight; a
//! pool of three times the terms wanted is taken from the top, one stem once (a plural the
//! stemmer keeps is one term with its singular); and the terms are picked from the pool by
//! maximal marginal relevance against near-duplicates ([`pick_diverse`]). A fitted topic's
//! candidates are its phrases and the unigrams they have not absorbed ([`pick_terms`]); a topic
//! of summed counts has unigrams only ([`terms_from_table`]).

use super::counts::TopicCounts;
use super::phrases::{Phrase, PHRASE_SEEDS};
use super::weights::ClassTable;
use super::{TermRules, TermVectors, WeightedTerm};
use crate::tokenize::TokenizedCorpus;
use rustc_hash::FxHashSet;

/// Each topic's unigram candidates (term id, weight): the well-spread terms first, by weight
/// (ties by term id), at most [`PHRASE_SEEDS`] or three times the terms wanted.
pub(super) fn rank_unigrams(
    counts: &TopicCounts,
    table: &ClassTable,
    rules: &TermRules,
) -> Vec<Vec<(u32, f64)>> {
    (0..counts.raw.len())
        .map(|c| {
            let w = table.weights(&table.units[c]);
            let mut v: Vec<(u32, f64)> = (0..counts.terms.len())
                .filter(|&s| counts.raw[c][s] > 0)
                .map(|s| (counts.terms[s], w[s]))
                .collect();
            let spread = |t: u32| counts.spread(c, t, rules);
            v.sort_by(|a, b| {
                spread(b.0)
                    .cmp(&spread(a.0))
                    .then(b.1.total_cmp(&a.1))
                    .then(a.0.cmp(&b.0))
            });
            v.truncate(PHRASE_SEEDS.max(rules.top * 3));
            v
        })
        .collect()
}

/// The listed terms of topic `c`, from its `phrases` and its ranked `unigrams`.
pub(super) fn pick_terms(
    c: usize,
    phrases: &[Phrase],
    unigrams: &[(u32, f64)],
    tc: &TokenizedCorpus,
    counts: &TopicCounts,
    rules: &TermRules,
    vectors: Option<TermVectors<'_>>,
) -> Vec<WeightedTerm> {
    let mut cands = candidates(c, phrases, unigrams, tc, counts);
    // Well-spread candidates first (a phrase counts as spread when its words are), then by
    // weight.
    let is_spread = |w: &WeightedTerm| w.stems.iter().all(|&t| counts.spread(c, t, rules));
    cands.sort_by(|a, b| {
        is_spread(b)
            .cmp(&is_spread(a))
            .then(b.weight.total_cmp(&a.weight))
            .then_with(|| a.text.cmp(&b.text))
    });
    let pool = one_stem_once(cands, &counts.canon, rules.top * 3);
    let spread_count = pool.iter().filter(|w| is_spread(w)).count();
    pick_diverse(pool, spread_count, rules.top, rules.diversity, vectors)
}

/// Topic `c`'s candidates: its phrases, then its unigrams that no phrase absorbed (a phrase
/// carries an absorbed word's weight when that is higher).
fn candidates(
    c: usize,
    phrases: &[Phrase],
    unigrams: &[(u32, f64)],
    tc: &TokenizedCorpus,
    counts: &TopicCounts,
) -> Vec<WeightedTerm> {
    let mut cands: Vec<WeightedTerm> = Vec::new();
    let mut absorbed: FxHashSet<u32> = FxHashSet::default();
    for p in phrases {
        cands.push(WeightedTerm {
            text: p.text.clone(),
            weight: p.weight,
            stems: p.stems.clone(),
            words: p.words,
            corpus_share: counts.corpus_share(&p.stems),
            lift: counts.lift(c, &p.stems),
        });
        absorbed.extend(p.absorbs.iter().copied());
    }
    for &(t, w) in unigrams {
        if absorbed.contains(&t) {
            if let Some(p) = cands.iter_mut().find(|p| p.stems.contains(&t)) {
                p.weight = p.weight.max(w);
            }
            continue;
        }
        cands.push(WeightedTerm {
            text: tc.terms[t as usize].surface.clone(),
            weight: w,
            stems: vec![t],
            words: 1,
            corpus_share: counts.share_of(t),
            lift: counts.lift(c, &[t]),
        });
    }
    cands
}

/// The first `limit` of the ranked candidates that share no stem (as `canon`, by term id,
/// makes them one) with a better one.
fn one_stem_once(cands: Vec<WeightedTerm>, canon: &[u32], limit: usize) -> Vec<WeightedTerm> {
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
        if pool.len() == limit {
            break;
        }
    }
    pool
}

/// Top terms of each topic from a [`ClassTable`] and its document counts alone (no tokens): what
/// a report built from summed counts lists (see [`crate::describe::aggregate`]). The same rules
/// as [`super::topic_terms`] with `phrases = false`: spread first, then weight, one stem once,
/// then the diversity pick. `docs[topic][slot]` are the documents of the topic the slot's term
/// occurs in; `sizes` the topics' documents; `vectors` index rows by `table.terms`.
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
                    words: 1,
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
    let unit = unit_vectors(&pool, vectors);
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

/// Each candidate's unit vector: the sum of its words' vectors, normalised (`None` when none of
/// its words has one, or they sum to zero).
fn unit_vectors(pool: &[WeightedTerm], vectors: TermVectors<'_>) -> Vec<Option<Vec<f32>>> {
    let dims = vectors.vectors.ncols();
    pool.iter()
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_duplicates_give_way_to_the_next_term() {
        let term = |text: &str, weight: f64, stem: u32| WeightedTerm {
            text: text.into(),
            weight,
            stems: vec![stem],
            words: 1,
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
