//! Summed: an [`Analysis`] from a saved model and [`Aggregates`] alone, without the documents.
//!
//! This is what `topicmap report` builds from the sums an engine (Spark) computed, and how a
//! streaming run ends. The topics are the model's (same ids, same centroids); their sizes,
//! terms, labels, representatives, trends and label scores come from the sums over every
//! document, through the same describe rules as a run ([`describe_sums`]), then named and merged
//! as a fit's are ([`super::topics`]). What needs each document (silhouette, inertia,
//! phrases) is left out; the document map shows the model's landmarks.

use super::{topics, PipelineError};
use crate::cluster::Clustering;
use crate::config::Settings;
use crate::describe::aggregate::{describe_sums, Aggregates, Representative};
use crate::describe::trends::{self, Trends};
use crate::describe::{similarity, TopicSummary};
use crate::evaluate::Metrics;
use crate::ingest::{Corpus, Document, InputFormat, Skipped, SourceFile};
use crate::layout;
use crate::model::SavedModel;
use crate::progress::Progress;
use crate::reduce::Reducer;
use crate::render::{Analysis, Scope};
use crate::vectorize::TfIdf;
use std::path::PathBuf;

/// The analysis of `agg`, the sums of documents assigned with `model`.
pub fn analysis(
    settings: &Settings,
    model: SavedModel,
    agg: Aggregates,
    progress: &mut Progress,
) -> Result<Analysis, PipelineError> {
    let tfidf = model.tfidf();
    let reducer = model.reducer.clone();
    let mut summary = describe(settings, &agg, &tfidf, &reducer, progress)?;
    // The model's named topics keep their names (the sums describe topics by their words).
    for (t, saved) in summary.topics.iter_mut().zip(&model.topics) {
        if saved.named {
            t.label = saved.label.clone();
            t.named = true;
        }
    }
    let mut clustering = Clustering::summed(
        model.centroid_matrix(),
        model.term_centroid_matrix(),
        agg.sizes(),
    );
    let reps = agg.representative_list();
    let distances: Vec<f32> = reps.iter().map(|r| r.distance).collect();
    let shaped = topics::name_and_merge(
        settings,
        &mut summary,
        &mut clustering,
        Some(&distances),
        None,
        model.next_id,
        progress,
    );
    let k = clustering.k();
    let trends = trends_from_sums(&agg, &shaped.merged_into, k);
    let similarity = similarity::centroid_similarity(clustering.centroids().view());
    let metrics = metrics_from_sums(&agg, &shaped.merged_into, k)?;
    let corpus = corpus_from_sums(&agg, &reps, trends.timed);
    let map = match &model.map {
        Some(saved) => layout::landmarks_only(saved, &shaped.merged_into, k),
        None => layout::Map {
            documents: Vec::new(),
            centres: Vec::new(),
            method: layout::MapMethod::Linear,
            note: "The model keeps no map landmarks (a linear map), so this report has no document map.".into(),
            landmarks: None,
            topics: None,
        },
    };
    let fingerprints = model.topics.iter().map(|t| t.terms.clone()).collect();
    let next_id = model.next_id;
    let cleaner = model.cleaner().clone();
    Ok(Analysis {
        scope: Scope::Summed {
            model: Box::new(model),
            documents: None,
        },
        corpus,
        vocabulary: tfidf.features().len(),
        cleaner,
        cleaned: None,
        tfidf,
        reducer,
        embedding: None,
        clustering,
        k_selection: None,
        summary,
        trends,
        map,
        similarity,
        metrics,
        fingerprints,
        drift: None,
        next_id,
        warnings: with_per_class_note(settings, shaped.warnings, progress),
        tree: shaped.tree,
        fine: shaped.fine,
        per_class: None,
    })
}

/// The warnings of a report from sums, and one saying that `describe.per-class` is not
/// reported when the pipeline asks for it: the sums hold no document's class.
fn with_per_class_note(
    settings: &Settings,
    mut warnings: Vec<String>,
    progress: &Progress,
) -> Vec<String> {
    if let Some(column) = settings.describe.per_class() {
        let note = format!(
            "describe.per-class = {column:?} is not reported: a report from sums has no document's class"
        );
        progress.warn(&note);
        warnings.push(note);
    }
    warnings
}

/// The model's topics described from the sums: terms, labels and representatives.
fn describe(
    settings: &Settings,
    agg: &Aggregates,
    tfidf: &TfIdf,
    reducer: &Reducer,
    progress: &mut Progress,
) -> Result<TopicSummary, PipelineError> {
    progress.stage(
        "describe",
        |_| {
            let features: Vec<(&str, &str)> = tfidf
                .features()
                .iter()
                .map(|f| (f.stem.as_str(), f.surface.as_str()))
                .collect();
            let term_vectors = reducer.term_vectors();
            Ok::<_, PipelineError>(describe_sums(
                agg,
                &features,
                &settings.describe,
                term_vectors.as_ref().map(|v| v.view()),
            ))
        },
        |s: &TopicSummary| format!("{} topics from {} documents", s.topics.len(), s.documents),
    )
}

/// The trends of the `k` reported topics from the sums' counts by period (each fitted topic
/// counted in its reported one, `merged_into`): periods in time order when every label is a
/// time, else in the sums' order, as batches.
fn trends_from_sums(agg: &Aggregates, merged_into: &[usize], k: usize) -> Trends {
    let labels: Vec<String> = agg.counts.keys().cloned().collect();
    let timed = !labels.is_empty() && labels.iter().all(|l| trends::time_position(l).is_some());
    let mut order: Vec<usize> = (0..labels.len()).collect();
    if timed {
        order.sort_by(|&a, &b| {
            let p = |i: usize| trends::time_position(&labels[i]).unwrap_or(0.0);
            p(a).total_cmp(&p(b))
        });
    }
    let period_rows: Vec<&Vec<[u64; 2]>> = agg.counts.values().collect();
    let mut counts = vec![vec![0usize; labels.len()]; k];
    for (j, &p) in order.iter().enumerate() {
        for (t, c) in period_rows[p].iter().enumerate() {
            counts[merged_into[t]][j] += c[0] as usize;
        }
    }
    let shown: Vec<String> = order.iter().map(|&i| labels[i].clone()).collect();
    trends::from_counts(&shown, counts, timed)
}

/// The scores against the ground-truth labels from the sums' label-by-topic table (fitted
/// topics counted in their reported ones), when the documents had labels.
fn metrics_from_sums(
    agg: &Aggregates,
    merged_into: &[usize],
    k: usize,
) -> Result<Option<Metrics>, PipelineError> {
    if agg.labels.is_empty() {
        return Ok(None);
    }
    let mut table = agg.labels.clone();
    for row in table.values_mut() {
        let mut merged = vec![0u64; k];
        for (t, &n) in row.iter().enumerate() {
            merged[merged_into[t]] += n;
        }
        *row = merged;
    }
    Ok(Some(crate::evaluate::from_contingency(&table, k)?))
}

/// What the report shows of the corpus, from the sums: the representatives as its documents,
/// the inputs with their document counts, and the skipped documents.
fn corpus_from_sums(agg: &Aggregates, reps: &[&Representative], timed: bool) -> Corpus {
    Corpus {
        documents: reps
            .iter()
            .map(|r| Document {
                id: r.doc_id.clone(),
                source: 0,
                row: 0,
                title: Some(r.title.clone()),
                text: r.snippet.clone(),
                time: None,
                label: None,
                class: None,
                batch: String::new(),
            })
            .collect(),
        sources: agg
            .sources
            .iter()
            .map(|(path, &n)| SourceFile {
                path: PathBuf::from(path),
                location: PathBuf::from(path),
                format: InputFormat::from_path(path.as_ref()).unwrap_or(InputFormat::Csv),
                bytes: 0,
                sha256: String::new(),
                list_title: None,
                documents: n as usize,
            })
            .collect(),
        skipped: agg
            .skipped
            .iter()
            .map(|(file, row, reason)| Skipped {
                file: PathBuf::from(file),
                row: *row as usize,
                reason: reason.clone(),
            })
            .collect(),
        renamed: Vec::new(),
        duplicates: Vec::new(),
        has_time: timed,
        has_label: !agg.labels.is_empty(),
    }
}
