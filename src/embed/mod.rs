//! Embed: sentence vectors of the documents from a pretrained model, either a
//! sentence-transformers model (BERT, run by candle) or a table of static token vectors
//! (WordLlama, model2vec), as the features k-means clusters instead of, or beside, the LSA
//! vectors.
//!
//! Why: on short texts (titles, snippets) TF-IDF shares few words between documents of one
//! topic, and a sentence model's vectors carry the meaning the words miss (BERTopic's premise).
//! The topics are still described by their words (c-TF-IDF labels, phrases, trends, the map
//! and the reports do not change); only what k-means sees does.
//!
//! * [`registry`] and [`fetch`]: models by name, fetched into the user's cache;
//! * [`folder`]: the model folder, checked before anything runs;
//! * [`encoder`]: the transformer forward pass, in batches of equal-length texts;
//! * [`table`]: static token vectors, a text's vector the mean of its tokens' rows
//!   (`method = "static"`: thousands of texts a second), summed by `rows`' kernels, its new
//!   words spelled by `bpe`;
//! * [`cache`]: vectors of documents already embedded, by text and model, so scheduled
//!   reruns do not embed them again;
//!
//! `[cluster] features` chooses the space ([`FeatureSpace`]): `tfidf` (the LSA vectors, the
//! default without a model), `embedding` (the sentence vectors), or `both` (each part
//! unit-length and weighted so that the concatenation's cosine is
//! `(1 - w) cos_lsa + w cos_embedding`, `w` = `[embed] weight`).

mod attention;
pub mod bert;
mod bpe;
pub mod cache;
mod dense;
pub mod encoder;
pub mod fetch;
pub mod folder;
pub mod int8;
mod math;
pub mod registry;
mod rows;
mod storage;
pub mod table;

pub use encoder::{Encoder, SentenceEncoder};
pub use folder::{ModelFolder, Pooling};

use ndarray::{s, Array2, ArrayView2};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What k-means clusters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureSpace {
    /// The reduced TF-IDF vectors (LSA by default).
    Tfidf,
    /// The sentence vectors.
    Embedding,
    /// Both, concatenated; `weight` is the embedding's share of the cosine.
    Both,
}

impl FeatureSpace {
    pub fn parse(s: &str) -> Option<FeatureSpace> {
        match s {
            "tfidf" => Some(FeatureSpace::Tfidf),
            "embedding" => Some(FeatureSpace::Embedding),
            "both" => Some(FeatureSpace::Both),
            _ => None,
        }
    }

    /// The name `[cluster] features` gives it.
    pub fn name(self) -> &'static str {
        match self {
            FeatureSpace::Tfidf => "tfidf",
            FeatureSpace::Embedding => "embedding",
            FeatureSpace::Both => "both",
        }
    }

    /// Whether the sentence model runs.
    pub fn embeds(self) -> bool {
        self != FeatureSpace::Tfidf
    }
}

/// How documents are embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedMethod {
    /// Every document through the transformer.
    Transformer,
    /// The mean of the text's token vectors from a static table ([`table`]).
    Static,
}

impl EmbedMethod {
    pub fn parse(s: &str) -> Option<EmbedMethod> {
        match s {
            "transformer" => Some(EmbedMethod::Transformer),
            "static" => Some(EmbedMethod::Static),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EmbedMethod::Transformer => "transformer",
            EmbedMethod::Static => "static",
        }
    }

    /// The method a folder's model runs by.
    pub fn of(folder: &Folder) -> EmbedMethod {
        match folder.is_static() {
            true => EmbedMethod::Static,
            false => EmbedMethod::Transformer,
        }
    }
}

/// The precision of the transformer's dense products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    F32,
    /// Dynamic int8 on VNNI ([`int8`]); on a CPU without VNNI the f32 path runs.
    Int8,
}

impl Precision {
    pub fn parse(s: &str) -> Option<Precision> {
        match s {
            "f32" => Some(Precision::F32),
            "int8" => Some(Precision::Int8),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// What runs on this CPU when `self` is asked for: int8 only with a VNNI kernel.
    pub fn on_this_cpu(self) -> Precision {
        match (self, int8::Kernel::best()) {
            (Precision::Int8, Some(_)) => Precision::Int8,
            _ => Precision::F32,
        }
    }
}

/// The precision asked for by default (docs/benchmarks.md, "int8").
pub const DEFAULT_PRECISION: Precision = Precision::Int8;

/// A checked model folder of either kind: a sentence transformer, or a table of static token
/// vectors ([`table`]). Which one is read off the folder's files.
#[derive(Debug, Clone)]
pub enum Folder {
    Transformer(ModelFolder),
    Static(table::StaticFolder),
}

impl Folder {
    /// Opens and checks the folder at `dir`, of the kind its files say.
    pub fn open(dir: &Path) -> Result<Folder, EmbedError> {
        if !dir.is_dir() {
            return Err(EmbedError::NoFolder { dir: dir.into() });
        }
        if table::StaticFolder::looks_static(dir) {
            return Ok(Folder::Static(table::StaticFolder::open(dir)?));
        }
        Ok(Folder::Transformer(ModelFolder::open(dir)?))
    }

    pub fn dir(&self) -> &Path {
        match self {
            Folder::Transformer(f) => &f.dir,
            Folder::Static(f) => &f.dir,
        }
    }

    /// The vector's length.
    pub fn dims(&self) -> usize {
        match self {
            Folder::Transformer(f) => f.dims(),
            Folder::Static(f) => f.dims,
        }
    }

    /// The SHA-256 of the weights file, in hex.
    pub fn weights_sha256(&self) -> &str {
        match self {
            Folder::Transformer(f) => &f.weights_sha256,
            Folder::Static(f) => &f.weights_sha256,
        }
    }

    /// What names the vectors in the cache: a static table's weights' SHA-256; for a
    /// transformer, the SHA-256 of that, the precision and the tokens per text (vectors of
    /// another precision or length are other vectors).
    pub fn vectors_key(&self) -> String {
        use sha2::Digest;
        match self {
            Folder::Transformer(f) => {
                let mut h = sha2::Sha256::new();
                h.update(f.weights_sha256.as_bytes());
                h.update(format!(":{}:{}", f.precision.name(), f.max_length).as_bytes());
                folder::hex(&h.finalize())
            }
            // The cache holds a static table's sums, not unit vectors (`:sums`; older caches
            // of unit vectors had the weights' hash alone).
            Folder::Static(f) => {
                folder::hex(&sha2::Sha256::digest(format!("{}:sums", f.weights_sha256)))
            }
        }
    }

    /// The precision the transformer's dense products run in (f32 for a static table).
    pub fn precision(&self) -> Precision {
        match self {
            Folder::Transformer(f) => f.precision,
            Folder::Static(_) => Precision::F32,
        }
    }

    /// Tokens per text the model reads (a static table reads them all: 0).
    pub fn max_length(&self) -> usize {
        match self {
            Folder::Transformer(f) => f.max_length,
            Folder::Static(_) => 0,
        }
    }

    /// Whether the folder holds static token vectors.
    pub fn is_static(&self) -> bool {
        matches!(self, Folder::Static(_))
    }
}

/// The model `method = "static"` uses when `[embed] model` is not given.
pub const DEFAULT_STATIC_MODEL: &str = "wordllama-l2-256";

/// Default texts per forward pass.
pub const DEFAULT_BATCH: usize = 32;
/// Default embedding share of `both` (the best of 0.5, 0.75 and 0.9 over the labelled sets of
/// docs/benchmarks.md).
pub const DEFAULT_WEIGHT: f32 = 0.75;
/// The same for a static model, whose vectors add less to the words on long texts (the
/// measurements of docs/benchmarks.md, "Static token vectors").
pub const DEFAULT_STATIC_WEIGHT: f32 = 0.5;
/// The values of a static model's vectors kept beside the words (`both`): WordLlama is trained
/// so that a vector's first values are a shorter vector of their own (Matryoshka), and its
/// first 128 clustered as well as all 256 on five labelled sets, with k-means, the neighbours
/// and the map over 228 columns instead of 356 (docs/benchmarks.md, "Shorter static vectors
/// beside the words"). Alone (`embedding`, short texts) every value is kept.
pub const STATIC_BOTH_DIMS: usize = 128;
/// Default tokens per text through a transformer (at most the model's own limit): abstracts
/// cut at 128 tokens clustered as well as or better than at 256, at about twice the texts per
/// second (docs/benchmarks.md, "int8 and the token limit"); all-MiniLM-L6-v2 was trained on 128.
pub const DEFAULT_MAX_LENGTH: usize = 128;
/// Default cap of the vector cache, in MiB.
pub const DEFAULT_CACHE_MIB: usize = 512;
/// With a model and no `features`, documents whose median TF-IDF row has fewer terms than
/// this are clustered on their sentence vectors alone (`embedding`), longer ones on `both`
/// (the choice measured best on the labelled sets of docs/benchmarks.md).
pub const SHORT_FEATURES: usize = 20;

/// `[embed]`'s parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedParams {
    model: Option<PathBuf>,
    /// The known model `model` was resolved from (`[embed] model = "NAME"`).
    model_name: Option<&'static str>,
    features: Option<FeatureSpace>,
    method: Option<EmbedMethod>,
    weight: Option<f32>,
    batch: usize,
    max_length: Option<usize>,
    dims: Option<usize>,
    precision: Precision,
    cache: bool,
    cache_mib: usize,
}

impl Default for EmbedParams {
    fn default() -> Self {
        Self::new()
    }
}

impl EmbedParams {
    /// No model; features `tfidf` (with a model, chosen by the documents' length: see
    /// [`EmbedValidParams::for_documents`]); the method the model's folder runs by; weight 0.75
    /// (0.5 with a static model); batches of 32 texts; 128 tokens per text at most (or the model's
    /// own limit, when lower); int8 dense products where the CPU has VNNI; a cache of
    /// at most 512 MiB.
    pub fn new() -> Self {
        EmbedParams {
            model: None,
            model_name: None,
            features: None,
            method: None,
            weight: None,
            batch: DEFAULT_BATCH,
            max_length: None,
            dims: None,
            precision: DEFAULT_PRECISION,
            cache: true,
            cache_mib: DEFAULT_CACHE_MIB,
        }
    }

    /// The model folder (a sentence transformer's, or a static table's).
    pub fn model(mut self, dir: PathBuf) -> Self {
        self.model = Some(dir);
        self
    }

    /// The model by what `[embed] model` says: a known name (its folder in the cache, which
    /// must have been fetched) or a folder path.
    pub fn model_ref(mut self, model: registry::ModelRef) -> Self {
        match model {
            registry::ModelRef::Named { name, dir } => {
                self.model_name = Some(name);
                self.model = Some(dir);
            }
            registry::ModelRef::Folder(dir) => self.model = Some(dir),
        }
        self
    }

    pub fn features(mut self, features: FeatureSpace) -> Self {
        self.features = Some(features);
        self
    }

    /// The method the model must run by (a folder of the other kind is refused).
    pub fn method(mut self, method: EmbedMethod) -> Self {
        self.method = Some(method);
        self
    }

    /// The embedding's share of the cosine with `features = "both"`, in `[0, 1]`.
    pub fn weight(mut self, weight: f32) -> Self {
        self.weight = Some(weight);
        self
    }

    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch;
        self
    }

    /// Tokens per text (at most the model's own limit).
    pub fn max_length(mut self, max_length: usize) -> Self {
        self.max_length = Some(max_length);
        self
    }

    /// The first `dims` values of a static model's vectors (WordLlama's Matryoshka
    /// truncation; a transformer's vectors are kept whole, so only its own length is taken).
    /// By default [`STATIC_BOTH_DIMS`] beside the words (`both`), else all of them.
    pub fn dims(mut self, dims: usize) -> Self {
        self.dims = Some(dims);
        self
    }

    /// The transformer's dense products in `f32` or `int8` (int8 runs on CPUs with VNNI only).
    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    pub fn cache(mut self, cache: bool) -> Self {
        self.cache = cache;
        self
    }

    pub fn cache_mib(mut self, mib: usize) -> Self {
        self.cache_mib = mib;
        self
    }

    /// Checks the rules and opens the model folder (so a bad folder fails before any input
    /// is read).
    pub fn check(self) -> Result<EmbedValidParams, EmbedError> {
        let features = self.features.unwrap_or(if self.model.is_some() {
            FeatureSpace::Both
        } else {
            FeatureSpace::Tfidf
        });
        if features.embeds() && self.model.is_none() {
            return Err(EmbedError::NoModel);
        }
        if let Some(w) = self.weight.filter(|w| !(0.0..=1.0).contains(w)) {
            return Err(EmbedError::Weight(w));
        }
        if self.batch == 0 {
            return Err(EmbedError::ZeroBatch);
        }
        if self.max_length.is_some_and(|m| m < 3) {
            return Err(EmbedError::MaxLength(self.max_length.unwrap_or(0)));
        }
        let folder = match (&self.model, features.embeds()) {
            (Some(dir), true) => {
                let mut f = open_folder(dir, self.model_name.and_then(registry::known))?;
                if let Folder::Transformer(f) = &mut f {
                    f.max_length = f
                        .max_length
                        .min(self.max_length.unwrap_or(DEFAULT_MAX_LENGTH));
                    f.precision = self.precision.on_this_cpu();
                }
                Some(f)
            }
            _ => None,
        };
        let method = folder
            .as_ref()
            .map_or(EmbedMethod::Transformer, EmbedMethod::of);
        if let (Some(want), Some(f)) = (self.method, &folder) {
            if want != method {
                return Err(EmbedError::MethodModel {
                    dir: f.dir().into(),
                    method: want.name(),
                    holds: method.name(),
                });
            }
        }
        if let (Some(d), Some(f)) = (self.dims, &folder) {
            let whole = f.dims();
            if d == 0 || d > whole || (d < whole && !f.is_static()) {
                return Err(EmbedError::Dims {
                    dims: d,
                    dir: f.dir().into(),
                    whole,
                    method: method.name(),
                });
            }
        }
        let default_weight = match method {
            EmbedMethod::Transformer => DEFAULT_WEIGHT,
            EmbedMethod::Static => DEFAULT_STATIC_WEIGHT,
        };
        Ok(EmbedValidParams {
            features,
            by_length: self.features.is_none() && features.embeds(),
            method,
            model_sha256: folder.as_ref().map(|f| f.weights_sha256().to_string()),
            folder,
            weight: self.weight.unwrap_or(default_weight),
            dims: self.dims,
            batch: self.batch,
            cache: self.cache,
            cache_mib: self.cache_mib,
        })
    }
}

/// Opens the model folder; a model by name must have been fetched whole (its weights are the
/// pinned ones), else the error says how to fetch it.
fn open_folder(
    dir: &std::path::Path,
    name: Option<&registry::KnownModel>,
) -> Result<Folder, EmbedError> {
    let Some(known) = name else {
        return Folder::open(dir);
    };
    let not_fetched = |why: String| EmbedError::NotFetched {
        name: known.name,
        dir: dir.into(),
        why,
    };
    if !dir.is_dir() {
        return Err(not_fetched("it is not in the cache".into()));
    }
    let folder = Folder::open(dir).map_err(|e| not_fetched(e.to_string()))?;
    let pinned = known
        .files
        .iter()
        .any(|f| f.sha256 == folder.weights_sha256());
    if !pinned {
        return Err(not_fetched(format!(
            "its weights (SHA-256 {}) are not the pinned ones",
            folder.weights_sha256()
        )));
    }
    Ok(folder)
}

/// Checked `[embed]` parameters, with the opened model folder when the features need it.
#[derive(Debug, Clone, Serialize)]
pub struct EmbedValidParams {
    pub features: FeatureSpace,
    /// No `features` was given with a model: [`EmbedValidParams::for_documents`] chooses them.
    pub by_length: bool,
    /// What the model folder holds: a transformer, or static token vectors.
    pub method: EmbedMethod,
    #[serde(skip)]
    pub folder: Option<Folder>,
    /// The SHA-256 of the model's weights (run.json names the model by it, not by a path of
    /// the machine that ran it).
    pub model_sha256: Option<String>,
    pub weight: f32,
    /// `[embed] dims` as given (none: [`EmbedValidParams::kept_dims`] chooses).
    pub dims: Option<usize>,
    pub batch: usize,
    pub cache: bool,
    pub cache_mib: usize,
}

impl EmbedValidParams {
    /// Whether the documents' whole texts go through the model (`embedding` or `both`
    /// features).
    pub fn reads_texts(&self) -> bool {
        self.features.embeds()
    }

    /// The features for these documents (their TF-IDF rows): the given ones, or by default
    /// `embedding` when the median document has fewer than [`SHORT_FEATURES`] terms (titles,
    /// snippets: few words shared within a topic) and `both` otherwise (abstracts, news: the
    /// words add what the sentence model's truncated input misses). With the median's length.
    /// A static table reads short texts of a language its vocabulary does not cover
    /// ([`static_reads`]) beside their words: `both`.
    pub fn for_documents(
        &self,
        rows: &crate::vectorize::CsrMatrix,
        language: &str,
    ) -> (FeatureSpace, usize) {
        let mut lengths: Vec<usize> = rows.rows().map(|(ids, _)| ids.len()).collect();
        let median = match lengths.len() {
            0 => 0,
            n => *lengths.select_nth_unstable(n / 2).1,
        };
        let features = match (self.by_length, median < SHORT_FEATURES) {
            (false, _) => self.features,
            (true, true) if self.method == EmbedMethod::Static && !static_reads(language) => {
                FeatureSpace::Both
            }
            (true, true) => FeatureSpace::Embedding,
            (true, false) => FeatureSpace::Both,
        };
        (features, median)
    }

    /// How many of each sentence vector's values k-means sees in `space`: `[embed] dims` when
    /// given; a static table's first [`STATIC_BOTH_DIMS`] beside the words (`both`); else all.
    pub fn kept_dims(&self, space: FeatureSpace) -> usize {
        let whole = self.folder.as_ref().map_or(0, Folder::dims);
        match (self.dims, space, self.method) {
            (Some(d), _, _) => d.min(whole),
            (None, FeatureSpace::Both, EmbedMethod::Static) => STATIC_BOTH_DIMS.min(whole),
            _ => whole,
        }
    }

    /// How many of each sentence vector's values a static table sums when no cache keeps the
    /// vectors: the kept ones when the features are known before embedding (placement; a
    /// fit with `features` given), all of them when the documents' length will choose.
    fn summed_dims(&self) -> usize {
        match self.by_length {
            true => self.folder.as_ref().map_or(0, Folder::dims),
            false => self.kept_dims(self.features),
        }
    }

    /// The vectors k-means clusters in `space`: the sentence vectors cut to
    /// [`EmbedValidParams::kept_dims`], then [`combine`]d with the LSA vectors at this weight.
    /// The fit, placement and named topics all make them here, so a document's vector is the
    /// same in each.
    pub fn features(
        &self,
        space: FeatureSpace,
        lsa: Array2<f32>,
        sentences: Option<Sentences>,
    ) -> Array2<f32> {
        let sentences = sentences.map(|s| s.first(self.kept_dims(space)));
        combine(space, self.weight, lsa, sentences)
    }

    /// The columns to leave before each sentence vector for `lsa_dims` LSA columns
    /// ([`Sentences`]): all of them when the features are, or may turn out to be, `both`.
    pub fn lead(&self, lsa_dims: usize) -> usize {
        match self.features == FeatureSpace::Both || self.by_length {
            true => lsa_dims,
            false => 0,
        }
    }

    /// Whether the features leave the sentence model out (`tfidf`).
    pub fn unused(&self) -> bool {
        !self.features.embeds()
    }
}

/// Whether a static table over Llama-2's vocabulary reads a language's words as words: it
/// spells most Chinese characters as bytes, and on THUCNews headlines its vectors alone cluster
/// far below the words (V .218 against .361; beside them, .366: docs/benchmarks.md).
pub fn static_reads(language: &str) -> bool {
    language != "chinese"
}

/// What the embed stage can fail on. Every message names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("cluster.features needs a sentence model: set [embed] model to a model's name (topicmap models list) or folder")]
    NoModel,
    #[error("embed.weight = {0} must be within 0..=1 (the embedding's share of the cosine)")]
    Weight(f32),
    #[error("embed.batch cannot be 0")]
    ZeroBatch,
    #[error("embed.method = \"{method}\" but {dir} holds a {holds} model")]
    MethodModel {
        dir: PathBuf,
        method: &'static str,
        holds: &'static str,
    },
    #[error("embed.dims = {dims} must be within 1..={whole} for {dir} (a {method} model's vectors; only a static table's can be cut short)")]
    Dims {
        dims: usize,
        dir: PathBuf,
        whole: usize,
        method: &'static str,
    },
    #[error("embed.max-length = {0} must be at least 3 ([CLS], one token, [SEP])")]
    MaxLength(usize),
    #[error("the model {name} is not ready in {dir}: {why}; run `topicmap models fetch {name}`")]
    NotFetched {
        name: &'static str,
        dir: PathBuf,
        why: String,
    },
    #[error("no model folder at {dir} (embed.model)")]
    NoFolder { dir: PathBuf },
    #[error("the model folder lacks {path}")]
    Missing { path: PathBuf },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON for this file: {why}")]
    Json { path: PathBuf, why: String },
    #[error("{path}: the model is {found:?}; embed.model takes BERT sentence models only")]
    NotBert { path: PathBuf, found: String },
    #[error("{path}: {why}")]
    Pooling { path: PathBuf, why: String },
    #[error("{path} cannot be loaded: {why}")]
    Weights { path: PathBuf, why: String },
    #[error("{path} does not fit the model: {why}")]
    Tokenizer { path: PathBuf, why: String },
    #[error("embedding failed: {0}")]
    Encode(String),
    #[error("the model folder {dir} is not the one the model was fitted with (model.safetensors has SHA-256 {found}, the fit's had {expected})")]
    OtherModel {
        dir: PathBuf,
        found: String,
        expected: String,
    },
}

/// How the sentence vectors of a run were had.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Embedded {
    /// Texts run through the model.
    pub encoded: usize,
    /// Texts whose vectors came from the cache.
    pub cached: usize,
    /// Seconds spent loading the model (0 when every vector was cached).
    pub load_seconds: f64,
    /// Seconds spent tokenizing and encoding the `encoded` texts.
    pub encode_seconds: f64,
}

/// A model loaded on first use and kept for the calls that follow: a stream places its chunks
/// with one model (loaded once, and a static table's words spelled once), not one per chunk.
/// One that does not keep ([`Loaded::once`]) loads the model for each call and lets it go at
/// the call's end, so its memory is free for what follows (a fit's features).
#[derive(Default)]
pub struct Loaded {
    once: bool,
    model: std::sync::OnceLock<Encoder>,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match (self.once, self.model.get().is_some()) {
            (true, _) => "Loaded(each call)",
            (false, true) => "Loaded(model)",
            (false, false) => "Loaded(none yet)",
        })
    }
}

impl Loaded {
    /// Loads the model in each call, keeping nothing.
    pub fn once() -> Loaded {
        Loaded {
            once: true,
            model: std::sync::OnceLock::new(),
        }
    }

    /// Loads a static table now, so that it is ready when the first texts come (`prepare`
    /// calls it beside reading the inputs, where a core is often idle). A transformer is left
    /// to its first use: it is large, and a rerun may find every vector in the cache. An
    /// error is left for that first use to report.
    pub fn warm(&self, folder: &Folder) {
        if folder.is_static() {
            let _ = self.kept(folder);
        }
    }

    /// The kept model of `folder`, loaded now if it was not yet (the folder is the same for
    /// every call); `None` when this keeps nothing.
    fn kept(&self, folder: &Folder) -> Result<Option<&Encoder>, EmbedError> {
        if self.once {
            return Ok(None);
        }
        if let Some(e) = self.model.get() {
            return Ok(Some(e));
        }
        let e = Encoder::load(folder)?;
        Ok(Some(self.model.get_or_init(|| e)))
    }
}

/// The sentence vectors of documents, row for row, in the matrix k-means will cluster: each
/// row holds `lead` columns left for the LSA part (zero until [`combine`] fills them) and then
/// the sentence vector. So the features `both` are made in place, not beside a second copy of
/// the vectors (74,728 abstracts: 76 MB of static vectors and 106 MB of features).
#[derive(Debug, Clone, PartialEq)]
pub struct Sentences {
    rows: Array2<f32>,
    lead: usize,
    /// The rows are a static table's sums ([`Encoder::sums`]), unit length once
    /// [`Sentences::first`] cuts them.
    sums: bool,
}

impl Sentences {
    /// Vectors with no room before them.
    pub fn of(vectors: Array2<f32>) -> Sentences {
        Sentences {
            rows: vectors,
            lead: 0,
            sums: false,
        }
    }

    /// The sentence vectors, one row per document (a static table's as sums: [`Self::unit`]).
    pub fn view(&self) -> ArrayView2<'_, f32> {
        self.rows.slice(s![.., self.lead..])
    }

    /// Keeps the rows whose `keep` is true (moved up in place: no second copy).
    pub fn retain(&mut self, keep: &[bool]) {
        let cols = self.rows.ncols();
        let mut v = buffer(std::mem::take(&mut self.rows));
        let mut to = 0;
        for (from, _) in keep.iter().enumerate().filter(|(_, &k)| k) {
            if from != to {
                v.copy_within(from * cols..(from + 1) * cols, to * cols);
            }
            to += 1;
        }
        v.truncate(to * cols);
        self.rows = Array2::from_shape_vec((to, cols), v).expect("whole rows");
    }

    /// The first `dims` values of each sentence vector, unit length again (a Matryoshka
    /// model's shorter vectors, [`EmbedValidParams::kept_dims`]); the rows are moved up in
    /// place. All of them (`dims` at least the vectors' length): the vectors as they are, a
    /// static table's sums made unit length. So a static vector cut to its first values is
    /// the unit vector of those values' sums, the same bits whether the table summed all the
    /// values or only those.
    pub fn first(self, dims: usize) -> Sentences {
        let (lead, cols) = (self.lead, self.rows.ncols());
        let kept = (lead + dims).min(cols);
        if kept == cols && !self.sums {
            return self;
        }
        // The rows moved up in place to their first `kept` values (nothing to move when all
        // are kept), then each made unit length, the rows shared among the threads.
        let mut rows = if kept == cols {
            self.rows
        } else {
            let n = self.rows.nrows();
            let mut v = buffer(self.rows);
            for i in 0..n {
                // Row i moves from i * cols to i * kept: never past a row not yet moved.
                v.copy_within(i * cols..i * cols + kept, i * kept);
            }
            v.truncate(n * kept);
            Array2::from_shape_vec((n, kept), v).expect("whole rows")
        };
        crate::norm::unit_rows(rows.slice_mut(s![.., lead..]));
        Sentences {
            rows,
            lead,
            sums: false,
        }
    }

    /// The vectors, every value kept, each unit length ([`Self::first`]).
    pub fn unit(self) -> Sentences {
        let all = self.rows.ncols();
        self.first(all)
    }
}

/// The sentence vectors of `texts` (row `i` is `texts[i]`'s), after `lead` columns left for
/// the LSA part ([`Sentences`]): from the cache in `cache_dir` where it has them (when the
/// parameters keep a cache), the others from the model (the transformer in batches, or the
/// static table); `bar` counts texts. The model is loaded only when some text is not cached,
/// once for all the calls given the same `loaded` (a stream's chunks). A cache that cannot be
/// trusted is reported to `warn` and rebuilt.
pub fn sentence_vectors(
    params: &EmbedValidParams,
    texts: &[&str],
    (cache_dir, loaded, lead): (Option<&std::path::Path>, &Loaded, usize),
    warn: impl Fn(&str),
    bar: &indicatif::ProgressBar,
) -> Result<(Sentences, Embedded), EmbedError> {
    let folder = params.folder.as_ref().ok_or(EmbedError::NoModel)?;
    let cache = cache_dir.filter(|_| params.cache).map(|dir| {
        let (c, why) = cache::VectorCache::open(dir, &folder.vectors_key(), folder.dims());
        if let Some(why) = why {
            warn(&why);
        }
        c
    });
    // A static table sums only the values kept, where the features are known and no cache
    // keeps whole vectors (placement: half of each row read, beside the words).
    let dims = match (folder.is_static(), &cache) {
        (true, None) => params.summed_dims(),
        _ => folder.dims(),
    };
    // Zeros cost no memory until written (the allocator maps them lazily). A kernel that reads
    // a row before writing it writes the row first (`table.rs`'s `encode_into`).
    let mut rows = Array2::<f32>::zeros((texts.len(), lead + dims));
    let mut out = rows.slice_mut(s![.., lead..]);
    let (keys, missing) = from_cache(cache.as_ref(), texts, out.view_mut());
    let mut done = Embedded {
        encoded: missing.len(),
        cached: texts.len() - missing.len(),
        ..Embedded::default()
    };
    if !missing.is_empty() {
        let start = std::time::Instant::now();
        let this_call;
        let encoder = match loaded.kept(folder)? {
            Some(e) => e,
            None => {
                this_call = Encoder::load(folder)?;
                &this_call
            }
        };
        done.load_seconds = start.elapsed().as_secs_f64();
        bar.set_length(missing.len() as u64);
        let start = std::time::Instant::now();
        let inc = |n: usize| bar.inc(n as u64);
        if missing.len() == texts.len() {
            // Every text: straight into the rows.
            encoder.encode_into(texts, params.batch, out.view_mut(), inc)?;
        } else {
            let todo: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let mut vectors = Array2::<f32>::zeros((todo.len(), dims));
            encoder.encode_into(&todo, params.batch, vectors.view_mut(), inc)?;
            for (row, &i) in vectors.rows().into_iter().zip(&missing) {
                out.row_mut(i).assign(&row);
            }
        }
        done.encode_seconds = start.elapsed().as_secs_f64();
    }
    if let Some(c) = cache.filter(|_| done.encoded > 0) {
        if let Err(e) = c.save(&keys, out.view(), params.cache_mib << 20) {
            warn(&format!("the embedding cache was not written: {e}"));
        }
    }
    let sums = folder.is_static();
    Ok((Sentences { rows, lead, sums }, done))
}

/// The rows `cache` holds for `texts`, copied into `out`: the texts' keys (none without a
/// cache: they are for the cache only) and the rows still to embed.
fn from_cache(
    cache: Option<&cache::VectorCache>,
    texts: &[&str],
    mut out: ndarray::ArrayViewMut2<f32>,
) -> (Vec<u128>, Vec<usize>) {
    let Some(c) = cache else {
        return (Vec::new(), (0..texts.len()).collect());
    };
    let keys: Vec<u128> = texts.iter().map(|t| cache::key(t)).collect();
    let mut missing = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match c.get(*k) {
            Some(v) => out.row_mut(i).assign(&ndarray::ArrayView1::from(v)),
            None => missing.push(i),
        }
    }
    (keys, missing)
}

/// An owned matrix's values, row after row, to move rows up in place.
fn buffer(rows: Array2<f32>) -> Vec<f32> {
    let (v, offset) = rows.into_raw_vec_and_offset();
    debug_assert_eq!(
        offset.unwrap_or(0),
        0,
        "an owned matrix starts at its buffer"
    );
    v
}

/// The vectors k-means clusters, from the LSA vectors and (for `embedding` and `both`) the
/// sentence vectors of the same documents, row for row. `both` is made in the sentences' own
/// rows when they left room for exactly these LSA columns.
pub fn combine(
    space: FeatureSpace,
    weight: f32,
    lsa: Array2<f32>,
    sentences: Option<Sentences>,
) -> Array2<f32> {
    match (space, sentences) {
        (FeatureSpace::Tfidf, _) | (_, None) => lsa,
        (FeatureSpace::Embedding, Some(e)) if e.lead == 0 => e.rows,
        (FeatureSpace::Embedding, Some(e)) => e.view().to_owned(),
        (FeatureSpace::Both, Some(e)) => {
            let a = lsa.ncols();
            let mut out = match e.lead == a {
                true => e.rows,
                false => {
                    let mut out = Array2::<f32>::zeros((lsa.nrows(), a + e.view().ncols()));
                    out.slice_mut(s![.., a..]).assign(&e.view());
                    out
                }
            };
            out.slice_mut(s![.., ..a]).assign(&lsa);
            drop(lsa);
            let (lsa_share, embedding_share) = ((1.0 - weight).sqrt(), weight.sqrt());
            out.axis_iter_mut(ndarray::Axis(0))
                .into_par_iter()
                .for_each(|mut row| {
                    let (mut l, mut e) = row.multi_slice_mut((s![..a], s![a..]));
                    crate::norm::unit(l.view_mut());
                    l *= lsa_share;
                    crate::norm::unit(e.view_mut());
                    e *= embedding_share;
                });
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn both_weighs_each_part_into_the_cosine() {
        let lsa = array![[3.0f32, 4.0], [1.0, 0.0]];
        let emb = array![[0.0f32, 2.0, 0.0], [1.0, 0.0, 0.0]];
        // Made beside the vectors, or in the room they left for the LSA part: the same.
        let mut room = Array2::<f32>::zeros((2, 5));
        room.slice_mut(s![.., 2..]).assign(&emb);
        let room = Sentences {
            rows: room,
            lead: 2,
            sums: false,
        };
        let v = combine(FeatureSpace::Both, 0.25, lsa.clone(), Some(room));
        let beside = combine(FeatureSpace::Both, 0.25, lsa, Some(Sentences::of(emb)));
        assert_eq!(v, beside);
        // Each row is unit length; the LSA part holds 0.75 of it and the embedding 0.25.
        for row in v.rows() {
            approx::assert_abs_diff_eq!(row.dot(&row), 1.0, epsilon = 1e-6);
            let e = row.slice(s![2..]);
            approx::assert_abs_diff_eq!(e.dot(&e), 0.25, epsilon = 1e-6);
        }
        approx::assert_abs_diff_eq!(v[[0, 0]], 0.6 * 0.75f32.sqrt(), epsilon = 1e-6);
    }

    #[test]
    fn sentences_keep_their_rows_in_place_and_give_their_own_part() {
        let all = Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j) as f32);
        let mut kept = Sentences {
            rows: all.clone(),
            lead: 1,
            sums: false,
        };
        kept.retain(&[true, false, true, true, false]);
        let want = all.select(ndarray::Axis(0), &[0, 2, 3]);
        assert_eq!(kept.view(), want.slice(s![.., 1..]));
        let lsa = Array2::<f32>::zeros((3, 1));
        let alone = combine(FeatureSpace::Embedding, 0.5, lsa, Some(kept));
        assert_eq!(alone, want.slice(s![.., 1..]));
    }

    #[test]
    fn features_need_a_model_and_default_to_tfidf_without_one() {
        let err = EmbedParams::new()
            .features(FeatureSpace::Both)
            .check()
            .unwrap_err();
        assert!(matches!(err, EmbedError::NoModel));
        assert_eq!(
            EmbedParams::new().check().unwrap().features,
            FeatureSpace::Tfidf
        );
        let err = EmbedParams::new()
            .model("/nonexistent/model".into())
            .check()
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/model"), "{err}");
        let err = EmbedParams::new().weight(1.5).check().unwrap_err();
        assert!(matches!(err, EmbedError::Weight(_)));
    }

    /// The first values of each vector, unit length again, after the room left for the LSA
    /// columns (kept as it was); all of them: the vectors as they are.
    #[test]
    fn the_first_values_of_the_vectors_are_kept_unit_length() {
        let mut rows = Array2::<f32>::zeros((3, 6));
        rows.slice_mut(s![.., 2..]).assign(&array![
            [0.5f32, 0.5, 0.5, 0.5],
            [0.0, 0.6, 0.8, 0.0],
            [0.0, 0.0, 0.6, 0.8]
        ]);
        rows.slice_mut(s![.., ..2]).fill(7.0);
        let whole = Sentences {
            rows,
            lead: 2,
            sums: false,
        };
        assert_eq!(whole.clone().first(4), whole);
        assert_eq!(whole.clone().first(9), whole);
        let two = whole.first(2);
        assert_eq!(two.lead, 2);
        let r = std::f32::consts::FRAC_1_SQRT_2;
        assert_eq!(
            two.rows,
            array![[7.0, 7.0, r, r], [7.0, 7.0, 0.0, 1.0], [7.0, 7.0, 0.0, 0.0]]
        );
    }

    /// A static table's sums become unit length when cut, and when all their values are
    /// kept; the cut of whole sums is the unit vector of the first values' sums, to the bit.
    #[test]
    fn a_static_tables_sums_are_made_unit_length_when_cut() {
        let sums = array![[3.0f32, 4.0, 12.0], [0.0, 0.0, 0.0], [0.1, 0.7, -2.5]];
        let mut rows = Array2::<f32>::from_elem((3, 4), 9.0);
        rows.slice_mut(s![.., 1..]).assign(&sums);
        let whole = Sentences {
            rows,
            lead: 1,
            sums: true,
        };
        let all = whole.clone().unit();
        assert!(!all.sums);
        assert_eq!(
            all.view().row(0),
            array![3.0f32 / 13.0, 4.0 / 13.0, 12.0 / 13.0]
        );
        assert_eq!(all.view().row(1), array![0.0f32, 0.0, 0.0]);
        assert_eq!(all.rows.column(0), array![9.0f32, 9.0, 9.0]);
        let cut = whole.first(2);
        let mut narrow = Array2::<f32>::from_elem((3, 3), 9.0);
        narrow
            .slice_mut(s![.., 1..])
            .assign(&sums.slice(s![.., ..2]));
        let narrow = Sentences {
            rows: narrow,
            lead: 1,
            sums: true,
        }
        .unit();
        assert_eq!(cut, narrow);
        assert_eq!(cut.view().row(0), array![0.6f32, 0.8]);
    }

    /// Rows of the given lengths (distinct columns from 0), 40 columns wide.
    fn rows_of(lengths: &[usize]) -> crate::vectorize::CsrMatrix {
        let mut indptr = vec![0];
        let mut indices = Vec::new();
        for &n in lengths {
            indices.extend(0..n as u32);
            indptr.push(indices.len());
        }
        let data = vec![1.0; indices.len()];
        crate::vectorize::CsrMatrix::new(40, indptr, indices, data).unwrap()
    }

    #[test]
    fn the_default_features_follow_the_median_length_and_given_ones_stay() {
        let mut params = EmbedParams::new().check().unwrap();
        assert!(!params.by_length, "no model: tfidf, not chosen by length");
        let short = rows_of(&[3, 30, 7, 8, 35]);
        let long = rows_of(&[3, 30, 25, 8, 35]);
        let en = "english";
        assert_eq!(params.for_documents(&short, en), (FeatureSpace::Tfidf, 8));
        params.by_length = true;
        assert_eq!(
            params.for_documents(&short, en),
            (FeatureSpace::Embedding, 8)
        );
        assert_eq!(params.for_documents(&long, en), (FeatureSpace::Both, 25));
        let edge = rows_of(&[SHORT_FEATURES; 3]);
        assert_eq!(params.for_documents(&edge, en).0, FeatureSpace::Both);
        let edge = rows_of(&[SHORT_FEATURES - 1; 3]);
        assert_eq!(params.for_documents(&edge, en).0, FeatureSpace::Embedding);
        // A transformer reads Chinese titles alone; a static table beside their words.
        assert_eq!(
            params.for_documents(&short, "chinese").0,
            FeatureSpace::Embedding
        );
        params.method = EmbedMethod::Static;
        assert_eq!(
            params.for_documents(&short, "chinese").0,
            FeatureSpace::Both
        );
        assert_eq!(params.for_documents(&short, en).0, FeatureSpace::Embedding);
    }
}
