//! The serde schema of a pipeline file: every field optional, kebab-case, unknown keys rejected.
//!
//! This is the first of three configuration layers (as in ruff): `Options` is exactly what the TOML
//! file says, [`super::overrides`] merges `--set SECTION.KEY=VALUE` into it, and
//! [`super::Settings`] resolves defaults and validates. Keeping the file schema separate from the
//! resolved settings lets a typo fail with the key's name while defaults live in one place.

use crate::vectorize::DocFreq;
use serde::Deserialize;

/// A whole pipeline file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Output folder name: letters, digits, `-` and `_` only.
    pub name: Option<String>,
    /// Human title used in chart headings and reports. Default: the name.
    pub title: Option<String>,
    /// One or more inputs (`[[input]]`).
    #[serde(default)]
    pub input: Vec<InputOptions>,
    pub clean: Option<CleanOptions>,
    pub tokenize: Option<TokenizeOptions>,
    pub tfidf: Option<TfIdfOptions>,
    pub reduce: Option<ReduceOptions>,
    pub embed: Option<EmbedOptions>,
    pub cluster: Option<ClusterOptions>,
    pub describe: Option<DescribeOptions>,
    pub map: Option<MapOptions>,
    pub trends: Option<TrendsOptions>,
    pub charts: Option<ChartsOptions>,
    pub output: Option<OutputOptions>,
    /// Named topics (`[[topic]]`), counted in k.
    #[serde(default)]
    pub topic: Vec<TopicOptions>,
}

/// One `[[topic]]`: a topic the user names ([`crate::cluster::NamedTopic`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TopicOptions {
    pub name: Option<String>,
    pub seeds: Option<Vec<String>>,
    pub min_similarity: Option<f32>,
}

/// One `[[input]]` table: the ingest stage's [`InputSpec`](crate::ingest::InputSpec) as the file
/// writes it, every key optional here so that [`Settings`](super::Settings) can name what is
/// missing. Each key means what the `InputSpec` field of the same name means, documented there
/// with its default, and `path` is its `pattern`; `Settings::resolve` turns one into the other.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct InputOptions {
    pub path: Option<String>,
    pub format: Option<String>,
    pub text: Option<Vec<String>>,
    pub id: Option<String>,
    pub title: Option<String>,
    pub time: Option<String>,
    pub label: Option<String>,
    pub batch: Option<String>,
    pub filter: Option<FilterOptions>,
    pub limit: Option<usize>,
}

/// `[input.filter]`: [`FilterSpec`](crate::ingest::FilterSpec) as the file writes it (both keys
/// are required).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FilterOptions {
    pub column: Option<String>,
    pub values: Option<Vec<String>>,
}

/// `[clean]`: what is removed before tokenizing, besides markup.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CleanOptions {
    /// Repeated segments, rights statements, signatures and quoted headers (default true).
    pub boilerplate: Option<bool>,
    /// Documents a segment must recur in to be boilerplate (default automatic).
    pub boilerplate_min_docs: Option<usize>,
    /// Segments that stay whatever the rules say.
    pub keep: Option<Vec<String>>,
    /// URLs, e-mail addresses, DOIs and arXiv identifiers (default true).
    pub links: Option<bool>,
}

/// `[map]`: how the document map is laid out.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MapOptions {
    /// `"umap"` (default) or `"linear"`.
    pub method: Option<String>,
    /// Neighbours per document in the map's graph (default 15).
    pub neighbours: Option<usize>,
    /// Most documents embedded; the rest are placed among them (default 10,000).
    pub sample: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TokenizeOptions {
    pub language: Option<String>,
    pub stem: Option<bool>,
    /// `"english"`, `"stopwords-iso"` or `"none"`, or a list of words (`[]`: none).
    pub stop_words: Option<StopWordsOption>,
    pub extra_stop_words: Option<Vec<String>>,
    pub min_length: Option<usize>,
    pub max_length: Option<usize>,
    pub ngram_range: Option<[usize; 2]>,
    pub min_df: Option<DocFreq>,
    pub max_df: Option<DocFreq>,
    pub max_features: Option<usize>,
    /// Chinese: a file of domain words for the segmenter, relative to the pipeline file.
    pub user_dictionary: Option<String>,
    /// Chinese: what Han text is cut into, `"words"`, `"characters"`, or words with sub-words.
    pub chinese: Option<String>,
}

/// `stop-words = "english"` or `stop-words = ["word", ...]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum StopWordsOption {
    Named(String),
    List(Vec<String>),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TfIdfOptions {
    pub sublinear_tf: Option<bool>,
    pub smooth_idf: Option<bool>,
    pub norm: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ReduceOptions {
    pub method: Option<String>,
    pub dims: Option<usize>,
    pub n_iter: Option<usize>,
}

/// `k = 6` or `k = "auto"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum KOption {
    Fixed(i64),
    Named(String),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterOptions {
    pub k: Option<KOption>,
    pub k_min: Option<usize>,
    pub k_max: Option<usize>,
    pub seed: Option<u64>,
    pub runs: Option<usize>,
    pub max_iter: Option<u64>,
    pub tolerance: Option<f64>,
    /// Use mini-batch k-means above this many documents.
    pub minibatch_above: Option<usize>,
    pub silhouette_sample: Option<usize>,
    /// Spherical k-means passes on the TF-IDF vectors after k-means (0 = none).
    pub refine_iter: Option<usize>,
    /// Fit on a seeded sample of this many documents, then assign every document in chunks.
    pub fit_sample: Option<usize>,
    /// What k-means clusters: `tfidf`, `embedding` or `both`.
    pub features: Option<String>,
    /// Zero-shot: a document this similar to a named topic joins it (per topic: `[[topic]]`).
    pub min_similarity: Option<f32>,
}

/// `[embed]`: the sentence model and how it runs (see [`crate::embed::EmbedParams`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EmbedOptions {
    /// A known model by name (`all-MiniLM-L6-v2`, `wordllama-l2-256`, fetched into the
    /// models cache), or a model folder relative to the pipeline file.
    pub model: Option<String>,
    /// `transformer` or `static` (the pretrained static table, `wordllama-l2-256` unless
    /// `model` names another); by default, what the model's folder holds.
    pub method: Option<String>,
    pub weight: Option<f32>,
    pub batch: Option<usize>,
    pub max_length: Option<usize>,
    /// The first `dims` values of a static model's vectors (Matryoshka); by default 128
    /// beside the words (`both`), else all.
    pub dims: Option<usize>,
    /// The transformer's dense products: `int8` (on CPUs with VNNI) or `f32`.
    pub precision: Option<String>,
    pub cache: Option<bool>,
    pub cache_mib: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DescribeOptions {
    pub top_terms: Option<usize>,
    pub label_terms: Option<usize>,
    pub phrases: Option<bool>,
    pub representatives: Option<usize>,
    pub reduce_frequent_words: Option<bool>,
    pub min_spread: Option<f64>,
    pub diversity: Option<f64>,
    pub label_max_share: Option<f64>,
    /// A TOML file of curated topic names (`id = "name"`), relative to the pipeline file.
    pub names: Option<String>,
    /// Report this many topics, merged along the topic hierarchy.
    pub merge_to: Option<usize>,
    /// An input column (a venue, a track): the topics counted and described per its values.
    pub per_class: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TrendsOptions {
    pub period: Option<String>,
    pub top: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ChartsOptions {
    pub enabled: Option<bool>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub scale: Option<f32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OutputOptions {
    pub dir: Option<String>,
    pub on_bad_document: Option<String>,
    /// The run whose topic ids to keep (a report folder or its model.json), or "none".
    pub previous: Option<String>,
    /// Table formats: any of "csv", "xlsx", "parquet".
    pub formats: Option<Vec<String>>,
    /// Most documents in report.xlsx's Documents sheet.
    pub workbook_documents: Option<usize>,
}
