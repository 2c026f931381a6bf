//! Assign: new documents into a saved model's topics, without refitting.
//!
//! The documents go through the same preparation as a fit (ingest, clean, the model's own
//! tokenizer), then the model's TF-IDF, reduction and centroids ([`place`]). Documents sharing
//! no word with the model's vocabulary are left out and listed. The same [`place`] serves
//! `topicmap assign` on files, on an Arrow stream (an engine's partition), and each chunk of a
//! streaming run.

use super::prepare::{self, LeftOut, Prepared};
use super::PipelineError;
use crate::cluster::Clustering;
use crate::describe::aggregate::{Aggregates, Assigned};
use crate::describe::trends::{self, Trends};
use crate::describe::{Topic, TopicSummary};
use crate::ingest::{Corpus, InputSpec, OnBadDocument, PeriodUnit};
use crate::model::SavedModel;
use crate::progress::Progress;
use crate::vectorize::TfIdf;
use ndarray::Array2;
use std::path::{Path, PathBuf};

/// What `topicmap assign` was asked to do.
#[derive(Debug, Clone)]
pub struct AssignOptions {
    /// A report folder holding `model.json`, or the file itself.
    pub model: PathBuf,
    /// Input files (none when the documents come on stdin).
    pub inputs: Vec<InputSpec>,
    /// Documents on stdin as an Arrow IPC stream, instead of files.
    pub stdin: Option<StreamInput>,
    pub out: AssignOutput,
    pub period: PeriodUnit,
    pub on_bad: OnBadDocument,
    pub quiet: bool,
}

/// An Arrow IPC stream on stdin: its columns (`spec`'s text, id, time, label), the name its
/// rows are shown under, or the column naming each row's input file.
#[derive(Debug, Clone)]
pub struct StreamInput {
    pub spec: InputSpec,
    pub name: String,
    pub source_column: Option<String>,
}

/// Where `topicmap assign` writes.
#[derive(Debug, Clone)]
pub enum AssignOutput {
    /// A folder: `documents` and the trend tables in `formats` (CSV, Parquet), `run.json`, and
    /// with `aggregates`, the sums (`aggregates/`, keeping that many representatives per topic).
    /// `dir: None`: a dated folder beside the model's (see [`default_root`]).
    Dir {
        dir: Option<PathBuf>,
        formats: Vec<crate::tables::OutputFormat>,
        aggregates: Option<usize>,
    },
    /// The documents table as an Arrow IPC stream on stdout; with `emit_terms`, each row's
    /// feature counts too, and a row per skipped document (see `tables::documents_with_terms`).
    Arrow { emit_terms: bool },
}

/// A saved model made ready to place documents: its TF-IDF, centroids and outlier floors built
/// once, for every batch.
#[derive(Debug)]
pub struct Placer {
    pub model: SavedModel,
    tfidf: TfIdf,
    centroids: Array2<f32>,
    term_centroids: Option<Array2<f32>>,
    floors: Vec<f64>,
}

impl Placer {
    pub fn new(model: SavedModel) -> Placer {
        Placer {
            tfidf: model.tfidf(),
            centroids: model.centroid_matrix(),
            term_centroids: model.term_centroid_matrix(),
            floors: model.outlier_floors(),
            model,
        }
    }

    /// The model's topics (ids and labels) with a batch's `sizes` and `outliers` (by topic
    /// index).
    pub fn summary(&self, sizes: &[usize], outliers: &[usize]) -> TopicSummary {
        let n: usize = sizes.iter().sum();
        TopicSummary {
            topics: self
                .model
                .topics
                .iter()
                .enumerate()
                .map(|(index, t)| Topic {
                    id: t.id,
                    label: t.label.clone(),
                    auto_label: t.auto_label.clone().unwrap_or_else(|| t.label.clone()),
                    size: sizes[index],
                    share: sizes[index] as f64 / n.max(1) as f64,
                    terms: Vec::new(),
                    representatives: Vec::new(),
                    outliers: outliers[index],
                })
                .collect(),
            classes: None,
            documents: n,
        }
    }

    /// Empty sums over this model's topics and features.
    pub fn aggregates(&self, keep: usize) -> Aggregates {
        Aggregates::new(
            self.model.topics.iter().map(|t| t.id).collect(),
            self.tfidf.features().len(),
            keep,
        )
    }
}

/// Documents placed into a model's topics.
#[derive(Debug)]
pub struct Placed {
    pub corpus: Corpus,
    pub clustering: Clustering,
    /// Each document's `(feature, count)` of its single-word features, when asked for.
    pub features: Option<Vec<Vec<(u32, u32)>>>,
}

impl Placed {
    /// Adds every document to `agg` (periods bucketed by `unit`), and the skipped ones.
    pub fn add_to(&self, agg: &mut Aggregates, unit: PeriodUnit) {
        let features = self
            .features
            .as_ref()
            .expect("placed with features for aggregates");
        let outliers = self.clustering.outliers();
        let sources: Vec<String> = self
            .corpus
            .sources
            .iter()
            .map(|s| s.path.display().to_string())
            .collect();
        for (i, d) in self.corpus.documents.iter().enumerate() {
            let period = d.period(unit);
            agg.add(Assigned {
                topic: self.clustering.assignments()[i],
                period: &period,
                outlier: outliers[i],
                distance: self.clustering.distances()[i],
                doc_id: &d.id,
                title: &crate::ingest::display_title(&self.corpus, i),
                text: &d.text,
                source: &sources[d.source],
                label: d.label.as_deref(),
                features: &features[i],
            });
        }
        for s in &self.corpus.skipped {
            agg.skip(
                &s.file.display().to_string(),
                s.row as u64,
                s.reason.clone(),
            );
        }
    }
}

/// Places prepared documents into the model's topics: TF-IDF, reduction, nearest centroid (in
/// the term space for a refined model), outliers judged by the fit's floors. With `features`,
/// each document's word counts per model feature come back too (for c-TF-IDF sums).
pub fn place(
    placer: &Placer,
    mut prepared: Prepared,
    features: bool,
    progress: &Progress,
) -> Result<Placed, PipelineError> {
    let (matrix, mut counts) = if features {
        placer.tfidf.transform_counting(&prepared.tokens)
    } else {
        (placer.tfidf.transform(&prepared.tokens), Vec::new())
    };
    let zero: Vec<usize> = (0..matrix.n_rows())
        .filter(|&i| matrix.row(i).0.is_empty())
        .collect();
    let keep = prepared.drop_rows(&zero, LeftOut::NotInModel, progress)?;
    let matrix = if zero.is_empty() {
        matrix
    } else {
        let mut k = keep.iter();
        counts.retain(|_| *k.next().unwrap_or(&true));
        let rows: Vec<usize> = (0..matrix.n_rows()).filter(|&i| keep[i]).collect();
        matrix.select_rows(&rows)
    };
    let vectors = placer.model.reducer.transform(&matrix)?;
    let clustering = match &placer.term_centroids {
        Some(terms) => Clustering::assign_terms(
            placer.centroids.view(),
            terms.view(),
            vectors.view(),
            &matrix,
        ),
        None => Clustering::assign(placer.centroids.view(), vectors.view()),
    }
    .with_outlier_floors(placer.floors.clone());
    let features = features.then_some(counts);
    Ok(Placed {
        corpus: prepared.corpus,
        clustering,
        features,
    })
}

/// New documents placed into saved topics.
#[derive(Debug)]
pub struct Assignment {
    pub placed: Placed,
    /// The model's topics with this batch's sizes.
    pub summary: TopicSummary,
    /// Each document's period.
    pub periods: Vec<String>,
    pub trends: Trends,
}

/// Places the documents of `corpus` (read already, e.g. from an Arrow stream; `None`: read
/// `opts.inputs`) into `placer`'s topics, with each document's feature counts when `features`.
pub fn assign(
    placer: &Placer,
    opts: &AssignOptions,
    corpus: Option<Corpus>,
    features: bool,
    progress: &mut Progress,
) -> Result<Assignment, PipelineError> {
    let model = &placer.model;
    let prepared = match corpus {
        Some(c) => prepare::prepare_corpus(c, opts.on_bad, &model.tokenize, progress)?,
        None => prepare::prepare(&opts.inputs, opts.on_bad, &model.tokenize, progress)?,
    };
    let placed = place(placer, prepared, features, progress)?;
    let clustering = &placed.clustering;
    let summary = placer.summary(
        clustering.sizes(),
        &crate::describe::outlier_counts(clustering),
    );
    let periods: Vec<String> = placed
        .corpus
        .documents
        .iter()
        .map(|d| d.period(opts.period))
        .collect();
    let trends = trends::trends(&periods, clustering.assignments(), clustering.k());
    Ok(Assignment {
        placed,
        summary,
        periods,
        trends,
    })
}

/// Where assignments go without `--out`: `<pipeline output>-assigned/` beside the model's own
/// pipeline folder (`output/x/latest` or `output/x/runs/<stamp>` give
/// `output/x-assigned`), or `<name>-assigned` beside any other model folder.
pub fn default_root(model_path: &Path, model_name: &str) -> PathBuf {
    let dir = if model_path.is_file() {
        model_path.parent().unwrap_or(Path::new("."))
    } else {
        model_path
    };
    let parent = dir.parent();
    let pipeline_dir = match (dir.file_name(), parent) {
        (Some(n), Some(p)) if n == "latest" => Some(p),
        (_, Some(p)) if p.file_name().is_some_and(|n| n == "runs") => p.parent(),
        _ => None,
    };
    match pipeline_dir {
        Some(p) => {
            let name = p.file_name().map_or_else(
                || model_name.to_string(),
                |n| n.to_string_lossy().to_string(),
            );
            p.with_file_name(format!("{name}-assigned"))
        }
        None => parent
            .unwrap_or(Path::new("."))
            .join(format!("{model_name}-assigned")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_go_beside_the_models_pipeline_folder() {
        let r = |p: &str| default_root(Path::new(p), "nips");
        assert_eq!(
            r("output/nips/latest"),
            PathBuf::from("output/nips-assigned")
        );
        assert_eq!(
            r("/data/out/nips/runs/20261201T000000Z"),
            PathBuf::from("/data/out/nips-assigned")
        );
        assert_eq!(r("/tmp/fit"), PathBuf::from("/tmp/nips-assigned"));
    }
}
