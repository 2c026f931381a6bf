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
//!
//! The parts, in the order [`topic_terms`] uses them: `counts` counts each vocabulary term per
//! topic; `weights` is the formula and the [`ClassTable`] kept for what is built from topics
//! later; `phrases` finds each topic's phrases; `select` ranks the candidates and picks the
//! terms (one stem once, then the diversity pick), for fitted topics and for summed counts
//! ([`terms_from_table`]); `labels` labels a class from its table alone (merged topics, nodes of
//! the topic hierarchy).

mod counts;
mod labels;
mod phrases;
mod select;
mod weights;

pub(in crate::describe) use counts::singular;
pub use counts::weight_units;
pub use select::{terms_from_table, NEAR_DUPLICATE};
pub use weights::ClassTable;

use crate::tokenize::TokenizedCorpus;
use counts::TopicCounts;

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

/// A weighted term or phrase of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedTerm {
    /// Surface form, e.g. "clustering" or "chain of thought".
    pub text: String,
    /// c-TF-IDF weight.
    pub weight: f64,
    /// Stems of its content words (used to keep listed terms from sharing a stem).
    pub stems: Vec<u32>,
    /// Words it shows, stop words inside a phrase included (1 for a word).
    pub words: usize,
    /// The share of all documents its least frequent word occurs in: how generic the term is
    /// (a phrase is as distinctive as its rarest word).
    pub corpus_share: f64,
    /// How many times more common (by documents) its most concentrated word is in the topic than
    /// in the whole corpus.
    pub lift: f64,
}

/// Top terms of each topic, best first, no two sharing a stem, and the c-TF-IDF tables they
/// come from. `vocabulary` flags the term ids that may be listed; `assignments` give each
/// document's topic (of `k`).
pub fn topic_terms(
    tc: &TokenizedCorpus,
    vocabulary: &[bool],
    assignments: &[usize],
    k: usize,
    rules: &TermRules,
    vectors: Option<TermVectors<'_>>,
) -> (Vec<Vec<WeightedTerm>>, ClassTable) {
    // Each vocabulary term counted per topic: occurrences, weight units, documents.
    let counts = TopicCounts::count(tc, vocabulary, assignments, k);
    // The c-TF-IDF tables of those counts: they weigh the unigrams here, and merged topics later.
    let table = counts.class_table(tc, rules.damping);
    // Each topic's unigram candidates, well-spread first; the best of them seed its phrases.
    let unigrams = select::rank_unigrams(&counts, &table, rules);
    let phrases = if rules.phrases {
        phrases::find_phrases(tc, assignments, &counts, &unigrams, rules.damping)
    } else {
        (0..k).map(|_| Vec::new()).collect()
    };
    // Phrases and the unigrams they did not absorb, one stem once, then the diversity pick.
    let lists = (0..k)
        .map(|c| select::pick_terms(c, &phrases[c], &unigrams[c], tc, &counts, rules, vectors))
        .collect();
    (lists, table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::{Analyzer, StopWordList, TokenizerParams};

    fn corpus(texts: &[String]) -> TokenizedCorpus {
        let p = TokenizerParams::new()
            .stem(false)
            .stop_words(StopWordList::None)
            .check()
            .unwrap();
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
}
