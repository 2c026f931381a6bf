//! Aggregates: what a report needs of documents, summed, so documents can be assigned in chunks
//! (a streaming run) or on other machines (Spark) and the report built from the sums.
//!
//! Per (period, topic): documents and outliers. Per (topic, vocabulary feature): c-TF-IDF weight
//! units (each document adds `1000 (1 + ln count)`, as [`super::ctfidf`] counts) and documents.
//! Per topic: the closest documents (its representatives). Per (label, topic): documents, for
//! the agreement scores. All are sums or "smallest n", so chunks and partitions merge in any
//! order into the same totals. As tables (Parquet) they are what `topicmap report` reads; Spark
//! computes the same tables with `groupBy` from per-document rows.

use super::ctfidf::{self, ClassTable, TermRules, TermVectors, WeightedTerm};
use super::{DescribeValidParams, Topic, TopicSummary};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// A representative document.
#[derive(Debug, Clone, PartialEq)]
pub struct Representative {
    pub doc_id: String,
    pub title: String,
    pub snippet: String,
    pub distance: f32,
}

/// The sums, with topics by index (`ids[index]` is the stable id).
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregates {
    /// Stable topic id of each topic index.
    pub ids: Vec<usize>,
    pub n_features: usize,
    /// `counts[period][topic] = [documents, outliers]`, periods sorted by label.
    pub counts: BTreeMap<String, Vec<[u64; 2]>>,
    /// `units[topic][feature]`.
    pub units: Vec<Vec<u64>>,
    /// `docs[topic][feature]`: documents of the topic the feature occurs in.
    pub docs: Vec<Vec<u64>>,
    /// The closest documents of each topic, closest first (ties by id), at most `keep`.
    pub representatives: Vec<Vec<Representative>>,
    pub keep: usize,
    /// `labels[label][topic]`: documents, when the input has a label column.
    pub labels: BTreeMap<String, Vec<u64>>,
    /// Documents assigned from each input file (by the path outputs show).
    pub sources: BTreeMap<String, u64>,
    /// Documents left out: file, row, why; sorted by file and row.
    pub skipped: Vec<(String, u64, String)>,
}

/// One assigned document, as a chunk hands it over.
#[derive(Debug, Clone, Copy)]
pub struct Assigned<'a> {
    pub topic: usize,
    pub period: &'a str,
    pub outlier: bool,
    pub distance: f32,
    pub doc_id: &'a str,
    pub title: &'a str,
    /// Its text (a representative keeps its start).
    pub text: &'a str,
    /// The input file it came from (the path outputs show).
    pub source: &'a str,
    pub label: Option<&'a str>,
    /// `(feature, count)` of its words.
    pub features: &'a [(u32, u32)],
}

/// A document's weight units for a term it holds `count` times (as [`ctfidf::weight_units`]).
pub use ctfidf::weight_units as units;

impl Aggregates {
    /// Empty sums for topics `ids` over `n_features` features, keeping `keep` representatives.
    pub fn new(ids: Vec<usize>, n_features: usize, keep: usize) -> Aggregates {
        let k = ids.len();
        Aggregates {
            ids,
            n_features,
            counts: BTreeMap::new(),
            units: vec![vec![0; n_features]; k],
            docs: vec![vec![0; n_features]; k],
            representatives: vec![Vec::new(); k],
            keep,
            labels: BTreeMap::new(),
            sources: BTreeMap::new(),
            skipped: Vec::new(),
        }
    }

    pub fn k(&self) -> usize {
        self.ids.len()
    }

    /// Adds one document.
    pub fn add(&mut self, d: Assigned<'_>) {
        let k = self.k();
        if !self.counts.contains_key(d.period) {
            self.counts.insert(d.period.to_string(), vec![[0, 0]; k]);
        }
        let c = self.counts.get_mut(d.period).expect("inserted above");
        c[d.topic][0] += 1;
        c[d.topic][1] += u64::from(d.outlier);
        match self.sources.get_mut(d.source) {
            Some(n) => *n += 1,
            None => {
                self.sources.insert(d.source.to_string(), 1);
            }
        }
        let (units_row, docs_row) = (&mut self.units[d.topic], &mut self.docs[d.topic]);
        for &(f, n) in d.features {
            if let (Some(u), Some(c)) =
                (units_row.get_mut(f as usize), docs_row.get_mut(f as usize))
            {
                *u += units(n);
                *c += 1;
            }
        }
        if let Some(l) = d.label {
            match self.labels.get_mut(l) {
                Some(row) => row[d.topic] += 1,
                None => {
                    let mut row = vec![0; k];
                    row[d.topic] = 1;
                    self.labels.insert(l.to_string(), row);
                }
            }
        }
        // Nearly every document is farther than the topic's representatives: its strings are
        // only copied when it is not.
        if self.would_keep(d.topic, d.distance, d.doc_id) {
            self.offer(
                d.topic,
                Representative {
                    doc_id: d.doc_id.to_string(),
                    title: d.title.to_string(),
                    snippet: crate::ingest::snippet(d.text, crate::ingest::SNIPPET_CHARS),
                    distance: d.distance,
                },
            );
        }
    }

    /// Whether a document at `distance` would be among the topic's representatives.
    pub fn would_keep(&self, topic: usize, distance: f32, doc_id: &str) -> bool {
        let reps = &self.representatives[topic];
        reps.len() < self.keep
            || reps
                .last()
                .is_some_and(|last| closer((distance, doc_id), (last.distance, &last.doc_id)))
    }

    /// Keeps `r` if it is among the topic's `keep` closest documents.
    pub fn offer(&mut self, topic: usize, r: Representative) {
        if !self.would_keep(topic, r.distance, &r.doc_id) {
            return;
        }
        let reps = &mut self.representatives[topic];
        let at = reps.partition_point(|x| closer((x.distance, &x.doc_id), (r.distance, &r.doc_id)));
        reps.insert(at, r);
        reps.truncate(self.keep);
    }

    /// Records a document left out.
    pub fn skip(&mut self, file: &str, row: u64, reason: String) {
        self.skipped.push((file.to_string(), row, reason));
    }

    /// Every topic's representatives, topic after topic: what [`describe_sums`]'s
    /// `Topic::representatives` index.
    pub fn representative_list(&self) -> Vec<&Representative> {
        self.representatives.iter().flatten().collect()
    }

    /// Documents of each topic.
    pub fn sizes(&self) -> Vec<usize> {
        self.per_topic(0)
    }

    /// Outliers of each topic.
    pub fn outliers(&self) -> Vec<usize> {
        self.per_topic(1)
    }

    /// Column `j` of the counts (0 documents, 1 outliers), summed over the periods.
    fn per_topic(&self, j: usize) -> Vec<usize> {
        let mut s = vec![0usize; self.k()];
        for c in self.counts.values() {
            for (t, x) in c.iter().enumerate() {
                s[t] += x[j] as usize;
            }
        }
        s
    }

    /// All documents.
    pub fn documents(&self) -> usize {
        self.sizes().iter().sum()
    }
}

/// Whether a document at (distance, id) comes before another: closer, ties by id.
fn closer(a: (f32, &str), b: (f32, &str)) -> bool {
    a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)) == std::cmp::Ordering::Less
}

/// Describes the topics from the sums alone, as [`super::describe`] does from documents: the
/// c-TF-IDF tables are built from the summed weight units (single words only: phrases need the
/// word order, which sums do not keep), terms and labels follow the same rules, and each
/// topic's representatives are its closest documents. `features` are the model's TF-IDF
/// features as (stem, surface), the sums' feature numbering; `term_vectors` (one row per
/// feature) drive the diversity rule. Topics keep the sums' order and ids;
/// `Topic::representatives` index [`Aggregates::representative_list`].
pub fn describe_sums(
    agg: &Aggregates,
    features: &[(&str, &str)],
    params: &DescribeValidParams,
    term_vectors: Option<ndarray::ArrayView2<f32>>,
) -> TopicSummary {
    let (table, docs) = class_table(agg, features, params.reduce_frequent_words());
    let rules = TermRules {
        top: params.top_terms(),
        phrases: false,
        damping: params.reduce_frequent_words(),
        min_spread: params.min_spread(),
        diversity: params.diversity(),
    };
    let row: Vec<u32> = (0..features.len() as u32).collect();
    let vectors = term_vectors.as_ref().map(|v| TermVectors {
        row: &row,
        vectors: v.view(),
    });
    let terms = ctfidf::terms_from_table(&table, &docs, &agg.sizes(), &rules, vectors);
    TopicSummary {
        topics: topics(agg, terms, params),
        classes: Some(table),
        documents: agg.documents(),
    }
}

/// The c-TF-IDF tables of the sums, over the single-word features (a slot each), and
/// `docs[topic][slot]`, the documents of each topic the slot's word occurs in.
fn class_table(
    agg: &Aggregates,
    features: &[(&str, &str)],
    damping: bool,
) -> (ClassTable, Vec<Vec<u64>>) {
    let n = agg.documents();
    let slots: Vec<usize> = (0..features.len().min(agg.n_features))
        .filter(|&f| !features[f].0.contains(' '))
        .collect();
    let by_slot = |table: &[Vec<u64>]| -> Vec<Vec<u64>> {
        table
            .iter()
            .map(|row| slots.iter().map(|&f| row[f]).collect())
            .collect()
    };
    let docs = by_slot(&agg.docs);
    let stem_slot: FxHashMap<&str, u32> = slots
        .iter()
        .enumerate()
        .map(|(s, &f)| (features[f].0, s as u32))
        .collect();
    let table = ClassTable::new(
        slots.iter().map(|&f| f as u32).collect(),
        slots.iter().map(|&f| features[f].1.to_string()).collect(),
        (0..slots.len())
            .map(|s| docs.iter().map(|r| r[s] as f64).sum::<f64>() / n.max(1) as f64)
            .collect(),
        slots
            .iter()
            .enumerate()
            .map(|(s, &f)| {
                ctfidf::singular(features[f].0)
                    .and_then(|x| stem_slot.get(x).copied())
                    .unwrap_or(s as u32)
            })
            .collect(),
        by_slot(&agg.units),
        damping,
    );
    (table, docs)
}

/// The topics of the sums, in their order, with these terms: labelled as
/// [`super::describe`] labels them, their representatives numbered through
/// [`Aggregates::representative_list`].
fn topics(
    agg: &Aggregates,
    terms: Vec<Vec<WeightedTerm>>,
    params: &DescribeValidParams,
) -> Vec<Topic> {
    let n = agg.documents();
    let sizes = agg.sizes();
    let outliers = agg.outliers();
    let mut first = 0;
    terms
        .into_iter()
        .enumerate()
        .map(|(c, terms)| {
            let share = sizes[c] as f64 / n.max(1) as f64;
            let parts = super::label_terms(&terms, share, params);
            let label = if parts.is_empty() {
                format!("topic {}", agg.ids[c])
            } else {
                parts.join(", ")
            };
            let reps = agg.representatives[c].len();
            let shown = reps.min(params.representatives());
            let representatives = (first..first + shown).collect();
            first += reps;
            Topic {
                id: agg.ids[c],
                auto_label: label.clone(),
                label,
                size: sizes[c],
                share: sizes[c] as f64 / n.max(1) as f64,
                terms,
                representatives,
                outliers: outliers[c],
                named: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(
        topic: usize,
        id: &'a str,
        distance: f32,
        features: &'a [(u32, u32)],
    ) -> Assigned<'a> {
        Assigned {
            topic,
            period: "2020",
            outlier: distance > 0.9,
            distance,
            doc_id: id,
            title: id,
            text: "",
            source: "a.csv",
            label: Some("x"),
            features,
        }
    }

    #[test]
    fn the_sums_do_not_depend_on_the_order_documents_come_in() {
        let f = [(0u32, 2u32), (2, 1)];
        let docs = [
            doc(0, "a", 0.3, &f),
            doc(1, "b", 0.95, &f[..1]),
            doc(0, "c", 0.1, &f[1..]),
            doc(0, "d", 0.2, &f),
        ];
        let mut whole = Aggregates::new(vec![7, 9], 3, 2);
        docs.iter().for_each(|d| whole.add(*d));
        let mut reversed = Aggregates::new(vec![7, 9], 3, 2);
        docs.iter().rev().for_each(|d| reversed.add(*d));
        assert_eq!(reversed, whole);
        assert_eq!(whole.sizes(), [3, 1]);
        assert_eq!(whole.outliers(), [0, 1]);
        assert_eq!(whole.units[0][0], 2 * units(2));
        assert_eq!(whole.docs[0][2], 3);
        let reps: Vec<&str> = whole.representatives[0]
            .iter()
            .map(|r| r.doc_id.as_str())
            .collect();
        assert_eq!(reps, ["c", "d"], "the two closest");
        assert_eq!(units(1), 1000);
    }
}
