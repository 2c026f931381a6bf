//! What can be wrong with a pipeline's values, found while resolving them: one variant per
//! rule of this module, and each stage's own parameter error, kept as the source. The pipeline
//! file's path is added around it by [`ConfigError::Invalid`](super::ConfigError::Invalid).

use crate::chart::ChartError;
use crate::clean::BoilerplateParamsError;
use crate::cluster::ClusterError;
use crate::describe::names::NamesError;
use crate::describe::DescribeParamsError;
use crate::embed::EmbedError;
use crate::layout::MapParamsError;
use crate::reduce::ReduceError;
use crate::tokenize::{TokenizerParamsError, UserDictionaryError};
use crate::vectorize::TfIdfError;
use std::path::PathBuf;

/// What is wrong with a pipeline's values. Messages name the key as the file writes it.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("name {0:?} must be letters, digits, '-' and '_' only (it names the output folder)")]
    BadName(String),
    #[error("no [[input]]: at least one input is required")]
    NoInput,
    #[error("{key} is missing: {why}")]
    Missing { key: String, why: &'static str },
    #[error("{key} = {value:?} must be {expected}")]
    BadChoice {
        key: String,
        value: String,
        expected: &'static str,
    },
    #[error("output.formats must name at least one of csv, xlsx or parquet")]
    NoFormats,
    #[error("output.workbook-documents = {0} must be within 1..=1048575 (Excel's row limit)")]
    WorkbookDocuments(usize),
    #[error("input[{0}].text must name at least one column")]
    NoTextColumns(usize),
    #[error("input[{0}]: text, id, time and label name table columns; a paper-list has none")]
    ColumnsOfPaperList(usize),
    #[error(transparent)]
    Clean(#[from] BoilerplateParamsError),
    #[error(transparent)]
    Tokenize(#[from] TokenizerParamsError),
    #[error(transparent)]
    UserDictionary(#[from] UserDictionaryError),
    #[error(transparent)]
    TfIdf(#[from] TfIdfError),
    #[error(transparent)]
    Reduce(#[from] ReduceError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("embed.model: {0}")]
    ModelCache(String),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Describe(#[from] DescribeParamsError),
    #[error(transparent)]
    Map(#[from] MapParamsError),
    #[error("describe.per-class needs every document at hand; a streaming run (cluster.fit-sample) has only a sample")]
    PerClassStreamed,
    #[error("cannot read the names file {path} (describe.names)")]
    NamesRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the names file {path} (describe.names) is not valid")]
    Names {
        path: PathBuf,
        #[source]
        source: NamesError,
    },
    #[error(transparent)]
    Charts(#[from] ChartError),
}
