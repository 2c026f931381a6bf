//! Describe: turn a clustering into topics people can read.
//!
//! For each topic: its size and share, its top terms with c-TF-IDF weights (see [`ctfidf`]), a
//! label of its best two or three terms, and its most representative documents (closest to the
//! centroid). Everything here is shown to people, so every term is a surface form.

pub mod ctfidf;
pub mod map;
pub mod matching;
pub mod trends;

use crate::cluster::Clustering;
use crate::tokenize::TokenizedCorpus;
use crate::vectorize::TfIdf;
pub use ctfidf::WeightedTerm;

/// Settings of the describe stage. Defaults: 10 top terms, 3 label terms, phrases on, 3
/// representative documents.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DescribeParams {
    /// Top terms listed per topic (at least `label_terms`).
    pub top_terms: usize,
    /// Terms joined into a label: 1, 2 or 3.
    pub label_terms: usize,
    /// Bigram and trigram phrases in labels and terms.
    pub phrases: bool,
    /// Representative documents per topic.
    pub representatives: usize,
}

/// A broken rule of [`DescribeParams`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DescribeParamsError {
    #[error("describe.label-terms = {0} must be 1, 2 or 3")]
    LabelTerms(usize),
}

impl DescribeParams {
    /// Checks the rules; `top_terms` is raised to `label_terms` when it is smaller.
    pub fn check(mut self) -> Result<Self, DescribeParamsError> {
        if !(1..=3).contains(&self.label_terms) {
            return Err(DescribeParamsError::LabelTerms(self.label_terms));
        }
        self.top_terms = self.top_terms.max(self.label_terms);
        Ok(self)
    }
}

impl Default for DescribeParams {
    fn default() -> Self {
        DescribeParams {
            top_terms: 10,
            label_terms: 3,
            phrases: true,
            representatives: 3,
        }
    }
}

/// One topic.
#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    pub id: usize,
    /// Its best terms joined with ", ": at most `label_terms`, no stop words, no shared stems.
    pub label: String,
    pub size: usize,
    /// Size over the number of clustered documents.
    pub share: f64,
    pub terms: Vec<WeightedTerm>,
    /// Row indices of the documents closest to the centroid, closest first.
    pub representatives: Vec<usize>,
}

/// All topics of a run, largest first. Their `id`s follow size order on a first run and the
/// previous run's ids after a refit (see [`matching`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TopicSummary {
    pub topics: Vec<Topic>,
    pub documents: usize,
}

/// Describes the topics of `clustering`. `tc` and `tfidf` are the corpus it was fitted on.
pub fn describe(
    tc: &TokenizedCorpus,
    tfidf: &TfIdf,
    clustering: &Clustering,
    params: &DescribeParams,
) -> TopicSummary {
    let k = clustering.k();
    // The c-TF-IDF vocabulary: the terms that survived the TF-IDF document-frequency bounds.
    let mut vocabulary = vec![false; tc.terms.len()];
    for f in tfidf.features() {
        if let [t] = f.terms[..] {
            vocabulary[t as usize] = true;
        }
    }
    let terms = ctfidf::topic_terms(
        tc,
        &vocabulary,
        clustering.assignments(),
        k,
        params.top_terms,
        params.phrases,
    );
    let n = clustering.assignments().len();
    let members = clustering.members();
    let distances = clustering.distances();
    let topics = terms
        .into_iter()
        .enumerate()
        .map(|(id, terms)| {
            let label_parts: Vec<&str> = terms
                .iter()
                .filter(|t| !t.text.contains(' ') || t.stems.len() == t.text.split(' ').count())
                .take(params.label_terms)
                .map(|t| t.text.as_str())
                .collect();
            let label = if label_parts.is_empty() {
                format!("topic {id}")
            } else {
                label_parts.join(", ")
            };
            let mut reps = members[id].clone();
            reps.sort_by(|&a, &b| distances[a].total_cmp(&distances[b]).then(a.cmp(&b)));
            reps.truncate(params.representatives);
            Topic {
                id,
                label,
                size: members[id].len(),
                share: members[id].len() as f64 / n.max(1) as f64,
                terms,
                representatives: reps,
            }
        })
        .collect();
    TopicSummary {
        topics,
        documents: n,
    }
}
