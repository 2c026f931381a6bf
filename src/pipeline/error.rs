//! The pipeline's one error type: any stage's failure, with its cause kept as the source.

use super::prepare::LeftOut;
use crate::ingest;
use std::path::{Path, PathBuf};

/// Any stage's failure, with its cause kept as the error's source.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Ingest(#[from] ingest::IngestError),
    #[error("{}", bad_documents(*count, *all, id, file, *row, why))]
    BadDocuments {
        count: usize,
        /// Every document of the corpus is unusable (an error in any mode).
        all: bool,
        /// The first unusable document.
        id: String,
        file: PathBuf,
        row: usize,
        why: LeftOut,
    },
    #[error(transparent)]
    TfIdf(#[from] crate::vectorize::TfIdfError),
    #[error(transparent)]
    Reduce(#[from] crate::reduce::ReduceError),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    Evaluate(#[from] crate::evaluate::metrics::MetricsError),
    #[error(transparent)]
    Present(#[from] crate::render::RenderError),
    #[error(transparent)]
    Export(#[from] crate::tables::ExportError),
    #[error(transparent)]
    Output(#[from] crate::staging::StagingError),
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    #[error(transparent)]
    Aggregates(#[from] crate::tables::aggregates::AggregatesError),
}

fn bad_documents(
    count: usize,
    all: bool,
    id: &str,
    file: &Path,
    row: usize,
    why: &LeftOut,
) -> String {
    let what = match (all, why) {
        (true, LeftOut::NoWords) => "all documents are empty".to_string(),
        (true, _) => "no document can be used".to_string(),
        (false, _) => format!("{count} documents cannot be used (on-bad-document = \"fail\")"),
    };
    format!(
        "{what}: first is {id} in {} row {row}: {why}",
        file.display()
    )
}

/// A table that could not be written to `path` (a file, or "stdout").
pub(super) fn table_error(path: &str, source: polars::prelude::PolarsError) -> PipelineError {
    crate::tables::ExportError::Table {
        path: path.into(),
        source,
    }
    .into()
}
