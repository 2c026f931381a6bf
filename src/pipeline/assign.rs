//! Assign: new documents into a saved model's topics, without refitting.
//!
//! The documents go through the same preparation as a fit (ingest, clean, the model's own
//! tokenizer), then the model's TF-IDF, reduction and centroids. Documents sharing no word with
//! the model's vocabulary are left out and listed.

use super::prepare::{self, LeftOut};
use super::PipelineError;
use crate::cluster::Clustering;
use crate::describe::trends::{self, Trends};
use crate::describe::{Topic, TopicSummary};
use crate::ingest::{Corpus, InputSpec, OnBadDocument, PeriodUnit};
use crate::model::SavedModel;
use crate::progress::Progress;
use std::path::{Path, PathBuf};

/// What `topicmap assign` was asked to do.
#[derive(Debug, Clone)]
pub struct AssignOptions {
    /// A report folder holding `model.json`, or the file itself.
    pub model: PathBuf,
    pub inputs: Vec<InputSpec>,
    /// Write exactly here; default: a dated history folder beside the model's (see
    /// [`default_root`]).
    pub out: Option<PathBuf>,
    pub period: PeriodUnit,
    pub quiet: bool,
}

/// New documents placed into saved topics.
#[derive(Debug)]
pub struct Assignment {
    pub corpus: Corpus,
    pub clustering: Clustering,
    /// The model's topics with this batch's sizes.
    pub summary: TopicSummary,
    pub trends: Trends,
}

/// Places the documents of `opts.inputs` into `model`'s topics.
pub fn assign(
    model: &SavedModel,
    opts: &AssignOptions,
    progress: &mut Progress,
) -> Result<Assignment, PipelineError> {
    let mut prepared =
        prepare::prepare(&opts.inputs, OnBadDocument::Skip, &model.tokenize, progress)?;
    let tfidf = model.tfidf();
    let matrix = tfidf.transform(&prepared.tokens);
    let zero: Vec<usize> = (0..matrix.n_rows())
        .filter(|&i| matrix.row(i).0.is_empty())
        .collect();
    let keep = prepared.drop_rows(&zero, LeftOut::NotInModel, progress)?;
    let rows: Vec<usize> = (0..matrix.n_rows()).filter(|&i| keep[i]).collect();
    let matrix = matrix.select_rows(&rows);
    let vectors = model.reducer.transform(&matrix)?;
    let centroids = model.centroid_matrix();
    let clustering = match model.term_centroid_matrix() {
        Some(terms) => {
            Clustering::assign_terms(centroids.view(), terms.view(), vectors.view(), &matrix)
        }
        None => Clustering::assign(centroids.view(), vectors.view()),
    };
    let n = clustering.assignments().len();
    let outliers = crate::describe::outlier_counts(&clustering);
    let summary = TopicSummary {
        topics: model
            .topics
            .iter()
            .enumerate()
            .map(|(index, t)| Topic {
                id: t.id,
                label: t.label.clone(),
                auto_label: t.auto_label.clone().unwrap_or_else(|| t.label.clone()),
                size: clustering.sizes()[index],
                share: clustering.sizes()[index] as f64 / n as f64,
                terms: Vec::new(),
                representatives: Vec::new(),
                outliers: outliers[index],
            })
            .collect(),
        classes: None,
        documents: n,
    };
    let periods = prepared.periods(opts.period);
    let trends = trends::trends(&periods, clustering.assignments(), clustering.k());
    Ok(Assignment {
        corpus: prepared.corpus,
        clustering,
        summary,
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
