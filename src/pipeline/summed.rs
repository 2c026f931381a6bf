//! Summed: an [`Analysis`] from a saved model and [`Aggregates`] alone, without the documents.
//!
//! This is what `topicmap report` builds from the sums an engine (Spark) computed, and how a
//! streaming run ends. The topics are the model's (same ids, same centroids); their sizes,
//! terms, labels, representatives, trends and label scores come from the sums over every
//! document, through the same describe rules as a run ([`describe_sums`]). What needs each
//! document (the document map, silhouette, inertia, phrases) is left out.

use super::PipelineError;
use crate::cluster::Clustering;
use crate::config::Settings;
use crate::describe::aggregate::{describe_sums, Aggregates};
use crate::describe::{hierarchy, names, similarity, trends, TopicSummary};
use crate::ingest::{Corpus, Document, InputFormat, Skipped, SourceFile};
use crate::layout;
use crate::model::SavedModel;
use crate::progress::Progress;
use crate::render::{Analysis, Scope};
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
    let d = &settings.describe;
    let mut summary = progress.stage(
        "describe",
        |_| {
            let features: Vec<(&str, &str)> = tfidf
                .features()
                .iter()
                .map(|f| (f.stem.as_str(), f.surface.as_str()))
                .collect();
            let term_vectors = reducer.term_vectors();
            Ok::<_, PipelineError>(describe_sums(
                &agg,
                &features,
                d,
                term_vectors.as_ref().map(|v| v.view()),
            ))
        },
        |s: &TopicSummary| format!("{} topics from {} documents", s.topics.len(), s.documents),
    )?;
    let mut warnings = Vec::new();
    if let Some(n) = &settings.names {
        for w in names::apply(&mut summary, &n.names, None, model.next_id) {
            progress.warn(&w);
            warnings.push(w);
        }
    }
    let sizes = agg.sizes();
    let mut clustering = Clustering::summed(
        model.centroid_matrix(),
        model.term_centroid_matrix(),
        sizes.clone(),
    );
    let tree = hierarchy::build(
        &summary,
        model.next_id,
        d.label_terms(),
        d.label_max_share(),
    );
    let reps = agg.representative_list();
    let distances: Vec<f32> = reps.iter().map(|r| r.distance).collect();
    let merged = super::fit::merge_along_tree(
        settings,
        tree.as_ref(),
        &summary,
        &clustering,
        &distances,
        progress,
    );
    // Each fitted topic's reported topic (they differ when topics are merged).
    let mut merged_into: Vec<usize> = (0..clustering.k()).collect();
    let fine = merged.map(|m| {
        let (fine, groups) = m.report(&mut summary, &mut clustering);
        for (g, members) in groups.iter().enumerate() {
            for &t in members {
                merged_into[t] = g;
            }
        }
        fine
    });
    let k = clustering.k();
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
    let trends = trends::from_counts(&shown, counts, timed);
    let similarity = similarity::centroid_similarity(clustering.centroids().view());
    let metrics = if agg.labels.is_empty() {
        None
    } else {
        let mut table = agg.labels.clone();
        for row in table.values_mut() {
            let mut merged = vec![0u64; k];
            for (t, &n) in row.iter().enumerate() {
                merged[merged_into[t]] += n;
            }
            *row = merged;
        }
        Some(crate::evaluate::from_contingency(&table, k)?)
    };
    let corpus = Corpus {
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
        has_time: timed,
        has_label: !agg.labels.is_empty(),
    };
    let fingerprints = model.topics.iter().map(|t| t.terms.clone()).collect();
    let next_id = model.next_id;
    Ok(Analysis {
        scope: Scope::Summed {
            model: Box::new(model),
            documents: None,
        },
        corpus,
        vocabulary: tfidf.features().len(),
        tfidf,
        reducer,
        clustering,
        k_selection: None,
        summary,
        trends,
        map: layout::Map {
            documents: Vec::new(),
            centres: Vec::new(),
        },
        similarity,
        metrics,
        fingerprints,
        drift: None,
        next_id,
        warnings,
        tree,
        fine,
    })
}
