//! Describe: turn a clustering into topics people can read.
//!
//! For each topic: its size and share, its top terms with c-TF-IDF weights (see [`ctfidf`]), a
//! label of its best two or three terms, and its most representative documents (closest to the
//! centroid). Everything here is shown to people, so every term is a surface form.

pub mod aggregate;
pub mod ctfidf;
pub mod hierarchy;
pub mod matching;
pub mod named;
pub mod names;
pub mod per_class;
pub mod similarity;
pub mod trends;

use crate::cluster::Clustering;
use crate::tokenize::TokenizedCorpus;
use crate::vectorize::TfIdf;
pub use ctfidf::WeightedTerm;

/// The describe stage's parameters, a builder (linfa style: defaults in
/// [`DescribeParams::new`], rules in [`DescribeParams::check`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DescribeParams {
    top_terms: usize,
    label_terms: usize,
    phrases: bool,
    representatives: usize,
    reduce_frequent_words: bool,
    min_spread: f64,
    diversity: f64,
    label_max_share: f64,
    merge_to: Option<usize>,
    /// Left out of `run.json` when unset, so a pipeline without it reports as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_class: Option<String>,
}

/// Checked describe parameters, what [`describe`] and
/// [`describe_sums`](aggregate::describe_sums) take. Serialized into `run.json` as the
/// pipeline's `describe` settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct DescribeValidParams(DescribeParams);

/// A broken rule of [`DescribeParams`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DescribeParamsError {
    #[error("describe.label-terms = {0} must be 1, 2 or 3")]
    LabelTerms(usize),
    #[error(
        "describe.min-spread = {0} must be within 0.0 ..= 1.0 (a share of a topic's documents)"
    )]
    MinSpread(f64),
    #[error("describe.diversity = {0} must be within 0.0 ..= 1.0")]
    Diversity(f64),
    #[error(
        "describe.label-max-share = {0} must be within 0.0 ..= 1.0 (a share of all documents)"
    )]
    LabelMaxShare(f64),
    #[error("describe.merge-to cannot be 0: it is the number of topics to report")]
    MergeToZero,
    #[error("describe.per-class must name a column of the inputs")]
    PerClassEmpty,
}

impl DescribeParams {
    /// Defaults: 10 top terms, 3 label terms, phrases on, 3 representative documents,
    /// frequent-word damping on, spread 2%, diversity 0.3, label terms found in at most 20% of
    /// all documents, every topic reported (no merge), no topics per class.
    pub fn new() -> Self {
        let rules = ctfidf::TermRules::default();
        DescribeParams {
            top_terms: rules.top,
            label_terms: 3,
            phrases: rules.phrases,
            representatives: 3,
            reduce_frequent_words: rules.damping,
            min_spread: rules.min_spread,
            diversity: rules.diversity,
            label_max_share: 0.2,
            merge_to: None,
            per_class: None,
        }
    }
    /// Top terms listed per topic (raised to `label_terms` when smaller).
    pub fn top_terms(mut self, n: usize) -> Self {
        self.top_terms = n;
        self
    }
    /// Terms joined into a label: 1, 2 or 3.
    pub fn label_terms(mut self, n: usize) -> Self {
        self.label_terms = n;
        self
    }
    /// Bigram and trigram phrases in labels and terms.
    pub fn phrases(mut self, on: bool) -> Self {
        self.phrases = on;
        self
    }
    /// Representative documents per topic.
    pub fn representatives(mut self, n: usize) -> Self {
        self.representatives = n;
        self
    }
    /// `sqrt` of the term frequency in c-TF-IDF (BERTopic's reduce_frequent_words).
    pub fn reduce_frequent_words(mut self, on: bool) -> Self {
        self.reduce_frequent_words = on;
        self
    }
    /// Least share of a topic's documents a term must occur in (0 to 1).
    pub fn min_spread(mut self, share: f64) -> Self {
        self.min_spread = share;
        self
    }
    /// Diversity of the top terms (maximal marginal relevance weight, 0 to 1).
    pub fn diversity(mut self, weight: f64) -> Self {
        self.diversity = weight;
        self
    }
    /// Label terms must be found in at most this share of all documents (0 to 1).
    pub fn label_max_share(mut self, share: f64) -> Self {
        self.label_max_share = share;
        self
    }
    /// Report this many topics, merged along the topic hierarchy (`None`: every topic).
    pub fn merge_to(mut self, n: Option<usize>) -> Self {
        self.merge_to = n;
        self
    }

    /// Describe the topics per class of this input column (`None`: not at all; see
    /// [`per_class`]).
    pub fn per_class(mut self, column: Option<String>) -> Self {
        self.per_class = column;
        self
    }

    /// Checks the rules; `top_terms` is raised to `label_terms` when it is smaller.
    pub fn check(mut self) -> Result<DescribeValidParams, DescribeParamsError> {
        if !(1..=3).contains(&self.label_terms) {
            return Err(DescribeParamsError::LabelTerms(self.label_terms));
        }
        if !(0.0..=1.0).contains(&self.min_spread) {
            return Err(DescribeParamsError::MinSpread(self.min_spread));
        }
        if !(0.0..=1.0).contains(&self.diversity) {
            return Err(DescribeParamsError::Diversity(self.diversity));
        }
        if !(0.0..=1.0).contains(&self.label_max_share) {
            return Err(DescribeParamsError::LabelMaxShare(self.label_max_share));
        }
        if self.merge_to == Some(0) {
            return Err(DescribeParamsError::MergeToZero);
        }
        if self
            .per_class
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(DescribeParamsError::PerClassEmpty);
        }
        self.top_terms = self.top_terms.max(self.label_terms);
        Ok(DescribeValidParams(self))
    }
}

impl Default for DescribeParams {
    fn default() -> Self {
        Self::new()
    }
}

impl DescribeValidParams {
    /// Top terms listed per topic (at least `label_terms`).
    pub fn top_terms(&self) -> usize {
        self.0.top_terms
    }
    /// Terms joined into a label: 1, 2 or 3.
    pub fn label_terms(&self) -> usize {
        self.0.label_terms
    }
    /// Bigram and trigram phrases in labels and terms.
    pub fn phrases(&self) -> bool {
        self.0.phrases
    }
    /// Representative documents per topic.
    pub fn representatives(&self) -> usize {
        self.0.representatives
    }
    /// `sqrt` of the term frequency in c-TF-IDF.
    pub fn reduce_frequent_words(&self) -> bool {
        self.0.reduce_frequent_words
    }
    /// Least share of a topic's documents a term must occur in.
    pub fn min_spread(&self) -> f64 {
        self.0.min_spread
    }
    /// Diversity of the top terms.
    pub fn diversity(&self) -> f64 {
        self.0.diversity
    }
    /// Label terms must be found in at most this share of all documents.
    pub fn label_max_share(&self) -> f64 {
        self.0.label_max_share
    }
    /// Report this many topics, merged along the topic hierarchy (`None`: every topic).
    pub fn merge_to(&self) -> Option<usize> {
        self.0.merge_to
    }
    /// The input column whose classes the topics are counted per (`None`: not at all).
    pub fn per_class(&self) -> Option<&str> {
        self.0.per_class.as_deref()
    }
}

/// One topic.
#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    pub id: usize,
    /// What the topic is called: its curated name (see [`names`]), else `auto_label`.
    pub label: String,
    /// Its best terms joined with ", ": at most `label_terms`, no stop words, no shared stems.
    pub auto_label: String,
    pub size: usize,
    /// Size over the number of clustered documents.
    pub share: f64,
    pub terms: Vec<WeightedTerm>,
    /// Row indices of the documents closest to the centroid, closest first.
    pub representatives: Vec<usize>,
    /// Its documents that are far from every centroid (see `Clustering::outliers`).
    pub outliers: usize,
    /// Named by the user (`[[topic]]`): its label is that name, kept across refits.
    pub named: bool,
}

/// The mark charts and the report put before a named topic's label.
pub const NAMED_MARK: &str = "★";

impl Topic {
    /// The label as the charts and the report show it: a named topic's ([`Topic::named`])
    /// after [`NAMED_MARK`], so a reader sees which topics the pipeline file named. Tables keep
    /// the bare label and say it in their `named` column.
    pub fn shown_label(&self) -> String {
        match self.named {
            true => format!("{NAMED_MARK} {}", self.label),
            false => self.label.clone(),
        }
    }
}

/// All topics of a run, largest first. Their `id`s follow size order on a first run and the
/// previous run's ids after a refit (see [`matching`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TopicSummary {
    pub topics: Vec<Topic>,
    /// The c-TF-IDF tables the terms came from (none for a saved model's topics).
    pub classes: Option<ctfidf::ClassTable>,
    pub documents: usize,
}

/// A term more common than `label_max_share` still labels a topic when it is at least this many
/// times as common (by documents) in the topic as in the whole corpus: "llms" in the topic about
/// language models, not "model" in every topic.
pub const LABEL_LIFT: f64 = 3.0;

/// A single Han character labels a topic only when the topic holds at least this share of the
/// documents it occurs in (and it is a word of the segmenter's dictionary, see [`reads_alone`]).
pub const LONE_CHARACTER_HOLD: f64 = 0.5;

/// Whether a term can stand in a label by itself: anything but a single Han character, which
/// must be a word on its own in the segmenter's dictionary (股, 图; not 络, a piece of 网络) and
/// distinctive: the topic (`topic_share` of all documents) holds at least
/// [`LONE_CHARACTER_HOLD`] of the documents it occurs in.
fn reads_alone(t: &WeightedTerm, topic_share: f64) -> bool {
    use crate::tokenize::han;
    // lift * topic share = the topic's documents with it / all documents with it.
    !han::is_lone_han(&t.text)
        || (han::is_dictionary_word(&t.text) && t.lift * topic_share >= LONE_CHARACTER_HOLD)
}

/// The terms of a label: the best terms that are distinctive (found in at most
/// `label_max_share` of all documents) and whole (a phrase without stop words inside; no lone
/// Han character unless it [`reads_alone`]), at most `label_terms`; a topic none of whose terms
/// is distinctive keeps its best whole terms. A word found in a fifth of all abstracts
/// ("model", "learning") names no topic in particular. `topic_share`: the topic's share of all
/// documents.
fn label_terms<'a>(
    terms: &'a [WeightedTerm],
    topic_share: f64,
    params: &DescribeValidParams,
) -> Vec<&'a str> {
    let whole = |t: &&WeightedTerm| t.stems.len() == t.words && reads_alone(t, topic_share);
    let pick = |distinctive: bool| -> Vec<&'a str> {
        terms
            .iter()
            .filter(whole)
            .filter(|t| {
                !distinctive || t.corpus_share <= params.label_max_share() || t.lift >= LABEL_LIFT
            })
            .take(params.label_terms())
            .map(|t| t.text.as_str())
            .collect()
    };
    match pick(true) {
        parts if parts.is_empty() => pick(false),
        parts => parts,
    }
}

/// Describes the topics of `clustering`. `tc` and `tfidf` are the corpus it was fitted on;
/// `term_vectors` (one row per TF-IDF feature, e.g. the LSA term vectors) drive the diversity
/// of the top terms, when there are any.
pub fn describe(
    tc: &TokenizedCorpus,
    tfidf: &TfIdf,
    clustering: &Clustering,
    params: &DescribeValidParams,
    term_vectors: Option<ndarray::ArrayView2<f32>>,
) -> TopicSummary {
    let k = clustering.k();
    let (vocabulary, row) = term_inputs(tc, tfidf);
    let rules = term_rules(params, params.top_terms());
    let vectors = term_vectors.as_ref().map(|v| ctfidf::TermVectors {
        row: &row,
        vectors: v.view(),
    });
    let (terms, classes) = ctfidf::topic_terms(
        tc,
        &vocabulary,
        clustering.assignments(),
        k,
        &rules,
        vectors,
    );
    let n = clustering.assignments().len();
    let members = clustering.members();
    let distances = clustering.distances();
    let outliers = outlier_counts(clustering);
    let topics = terms
        .into_iter()
        .enumerate()
        .map(|(id, terms)| {
            let share = members[id].len() as f64 / n.max(1) as f64;
            let label_parts = label_terms(&terms, share, params);
            let label = if label_parts.is_empty() {
                format!("topic {id}")
            } else {
                label_parts.join(", ")
            };
            let mut reps = members[id].clone();
            reps.sort_by(|&a, &b| distances[a].total_cmp(&distances[b]).then(a.cmp(&b)));
            reps.truncate(params.representatives());
            Topic {
                id,
                auto_label: label.clone(),
                label,
                size: members[id].len(),
                share: members[id].len() as f64 / n.max(1) as f64,
                terms,
                representatives: reps,
                outliers: outliers[id],
                named: false,
            }
        })
        .collect();
    TopicSummary {
        topics,
        classes: Some(classes),
        documents: n,
    }
}

/// What c-TF-IDF counts, from the corpus and its TF-IDF features: the vocabulary (a flag per
/// term id: the terms that survived the TF-IDF document-frequency bounds, words only, since a
/// Chinese sub-word is a feature, never a label: see `tokenize::sub_words`), and each term's
/// row of the feature vectors (unigram features only; `u32::MAX` for none).
fn term_inputs(tc: &TokenizedCorpus, tfidf: &TfIdf) -> (Vec<bool>, Vec<u32>) {
    let mut vocabulary = vec![false; tc.terms.len()];
    let mut row = vec![u32::MAX; tc.terms.len()];
    for (i, f) in tfidf.features().iter().enumerate() {
        if let [t] = f.terms[..] {
            vocabulary[t as usize] = tc.terms[t as usize].is_word();
            row[t as usize] = i as u32;
        }
    }
    (vocabulary, row)
}

/// The term rules of `params`, listing `top` terms.
fn term_rules(params: &DescribeValidParams, top: usize) -> ctfidf::TermRules {
    ctfidf::TermRules {
        top,
        phrases: params.phrases(),
        damping: params.reduce_frequent_words(),
        min_spread: params.min_spread(),
        diversity: params.diversity(),
    }
}

/// Outlying documents per topic.
pub fn outlier_counts(clustering: &Clustering) -> Vec<usize> {
    let mut n = vec![0usize; clustering.k()];
    for (&t, o) in clustering.assignments().iter().zip(clustering.outliers()) {
        n[t] += usize::from(o);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str, stems: usize, corpus_share: f64, lift: f64) -> WeightedTerm {
        WeightedTerm {
            text: text.into(),
            weight: 1.0,
            stems: (0..stems as u32).collect(),
            words: text.split(' ').count(),
            corpus_share,
            lift,
        }
    }

    #[test]
    fn labels_skip_generic_words_unless_the_topic_owns_them() {
        let p = DescribeParams::new().check().unwrap();
        let terms = vec![
            term("model", 1, 0.45, 1.2),
            term("llms", 1, 0.25, 3.4),
            term("chain of thought", 2, 0.03, 9.0),
            term("prompt", 1, 0.08, 4.0),
            term("reasoning", 1, 0.22, 2.0),
            term("answer", 1, 0.10, 3.0),
        ];
        // "model" is everywhere; "llms" is common but three times as common in this topic;
        // "chain of thought" has a stop word inside, so it is not whole.
        assert_eq!(label_terms(&terms, 0.1, &p), ["llms", "prompt", "answer"]);
        // A topic with only generic words keeps its best ones.
        let generic = vec![term("model", 1, 0.45, 1.2), term("learning", 1, 0.5, 1.1)];
        assert_eq!(label_terms(&generic, 0.1, &p), ["model", "learning"]);
    }

    #[test]
    fn issue_20_labels_hold_no_lone_fragments_and_no_stop_words_inside() {
        let p = DescribeParams::new().check().unwrap();
        let mut inside = term("中国的经济", 2, 0.01, 9.0);
        inside.words = 3;
        let two = |text: &str, lift: f64| WeightedTerm {
            words: 2,
            ..term(text, 2, 0.01, lift)
        };
        let terms = vec![
            // 络 is only a piece of 网络; 股 is a word, but the topic (10% of all documents)
            // holds 2.0 * 0.1 = 20% of its documents; 图 is a word the topic holds 60% of.
            term("络", 1, 0.01, 9.0),
            term("股", 1, 0.01, 2.0),
            inside,
            two("基金发行", 8.0),
            term("图", 1, 0.01, 6.0),
            two("bp神经网络", 5.0),
        ];
        assert_eq!(
            label_terms(&terms, 0.1, &p),
            ["基金发行", "图", "bp神经网络"]
        );
    }
}
