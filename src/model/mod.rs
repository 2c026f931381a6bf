//! Saved models: what a run learned, so new documents can be placed into its topics later.
//!
//! Each run writes `model.json` into its report folder: the tokenizer settings, the TF-IDF
//! vocabulary (stems and surfaces) and IDF, the fitted reduction (LSA components), the topic
//! centroids (and, when the topics were refined, their centroids in the TF-IDF space) and labels.
//! `topicmap assign` reloads it and runs new documents through exactly the same code paths as the
//! fit (clean, analyse, TF-IDF `transform`, reduction `transform`, then the nearest centroid, or
//! the most similar term-space centroid for refined topics), so assigning the training documents
//! reproduces the fit's topics exactly.
//!
//! The file is JSON with `"format": "topicmap-model"` and an integer `"version"`: 2 adds
//! `term_centroids`; version 1 files (without them) are still read. A file of another format or
//! version is refused with a message saying which versions this build reads.

mod fit_input;

pub use fit_input::FitInput;

use crate::clean::TextCleaner;
use crate::cluster::Clustering;
use crate::describe::matching::{PreviousTopics, TopicFingerprint};
use crate::reduce::Reducer;
use crate::tokenize::TokenizerValidParams;
use crate::vectorize::{Norm, TfIdf, TfIdfError, TfIdfParams, TfIdfValidParams};
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The format tag.
pub const FORMAT: &str = "topicmap-model";
/// The version this build writes (it reads 1 and 2).
pub const VERSION: u32 = 2;
/// The file name inside a report folder.
pub const FILE: &str = "model.json";

/// A saved model (the JSON schema of `model.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedModel {
    pub format: String,
    pub version: u32,
    pub tool_version: String,
    /// The pipeline's name and title.
    pub name: String,
    pub title: String,
    /// Checked when the model is read.
    pub tokenize: TokenizerValidParams,
    pub ngram_range: [usize; 2],
    pub sublinear_tf: bool,
    pub smooth_idf: bool,
    pub norm: Norm,
    /// Feature stems (space-separated for n-grams), their surface forms and IDF, by column.
    pub stems: Vec<String>,
    pub surfaces: Vec<String>,
    pub idf: Vec<f32>,
    /// The document-frequency bounds the fit applied (min, max), for reports built later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df_bounds: Option<[usize; 2]>,
    pub reducer: Reducer,
    /// Topic centroids in the reduced space: `centroids[topic]`.
    pub centroids: Vec<Vec<f32>>,
    /// Version 2: topic centroids in the TF-IDF space (`term_centroids[topic][feature]`, unit
    /// length) when the topics were refined there; documents then go to the most similar one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term_centroids: Option<Vec<Vec<f32>>>,
    /// Topics, in centroid order; their ids are the stable topic ids.
    pub topics: Vec<SavedTopic>,
    /// The first id no topic of this pipeline has had (ids of vanished topics are not reused).
    pub next_id: usize,
    /// The clean stage's fitted rules (boilerplate segments, links). Models written before
    /// them lack it, and clean markup only, as they did when fitted ([`SavedModel::cleaner`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean: Option<TextCleaner>,
    /// The fit's input columns, period and bad-document policy, `assign`'s defaults (models
    /// written before them lack it: then `assign` takes its flags' defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_input: Option<FitInput>,
    /// The document map's landmarks, which `assign` and a stream's chunks place documents among
    /// (models written before the map, or with a linear map, lack it: no map coordinates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<crate::layout::SavedLandmarks>,
    /// The sentence model the topics were clustered with (`[cluster] features` other than
    /// `tfidf`): `assign` and a stream's chunks embed their documents with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<SavedEmbedding>,
}

/// The sentence model of a fit, as `assign` needs it again: the features, the folder (as the
/// fit resolved it) and its weights' SHA-256, which must match when the folder is opened again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedEmbedding {
    pub features: crate::embed::FeatureSpace,
    pub method: crate::embed::EmbedMethod,
    pub weight: f32,
    pub model: PathBuf,
    pub weights_sha256: String,
    pub max_length: usize,
    pub batch: usize,
    /// The precision the fit's transformer ran in (`assign` asks for the same; a CPU without
    /// VNNI runs f32). Models before int8 ran f32.
    #[serde(default = "f32_precision")]
    pub precision: crate::embed::Precision,
    /// The sentence vectors' length: the first `dims` values of the model's (all of them in
    /// models before `[embed] dims`).
    pub dims: usize,
    /// The named topics with a zero-shot threshold (`min-similarity`), in the space clustered:
    /// `assign` gives a document the named topic it is most similar to when it meets that
    /// topic's threshold, as the fit did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zero_shot: Vec<SavedZeroShot>,
}

/// A named topic as zero-shot placement needs it: its topic (index into the model's topics),
/// threshold (none: it takes no document by similarity, but is compared) and vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedZeroShot {
    pub topic: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_similarity: Option<f32>,
    pub vector: Vec<f32>,
}

fn f32_precision() -> crate::embed::Precision {
    crate::embed::Precision::F32
}

impl SavedEmbedding {
    /// The zero-shot topics as placement takes them: their vectors (rows) and, per row, the
    /// model topic and threshold.
    pub fn zero_shot_guides(&self) -> Option<(crate::cluster::guided::Guides, Vec<usize>)> {
        let first = self.zero_shot.first()?;
        let vectors =
            ndarray::Array2::from_shape_fn((self.zero_shot.len(), first.vector.len()), |(i, j)| {
                self.zero_shot[i].vector.get(j).copied().unwrap_or(0.0)
            });
        let guides = crate::cluster::guided::Guides {
            vectors,
            thresholds: self.zero_shot.iter().map(|z| z.min_similarity).collect(),
        };
        Some((guides, self.zero_shot.iter().map(|z| z.topic).collect()))
    }
}

impl SavedEmbedding {
    /// What a fit with `params` and the `features` it clustered saves (none for `tfidf` features).
    pub fn of(
        params: &crate::embed::EmbedValidParams,
        features: crate::embed::FeatureSpace,
    ) -> Option<SavedEmbedding> {
        let folder = params.folder.as_ref()?;
        Some(SavedEmbedding {
            dims: params.kept_dims(features),
            features,
            method: params.method,
            weight: params.weight,
            model: folder.dir().to_path_buf(),
            weights_sha256: folder.weights_sha256().to_string(),
            max_length: folder.max_length(),
            batch: params.batch,
            precision: folder.precision(),
            zero_shot: Vec::new(),
        })
    }

    /// The embed parameters to place documents as the fit did (no cache: `assign` writes no
    /// pipeline folder), with the folder opened and its weights checked against the fit's.
    pub fn params(&self) -> Result<crate::embed::EmbedValidParams, crate::embed::EmbedError> {
        let mut params = crate::embed::EmbedParams::new()
            .model(self.model.clone())
            .method(self.method)
            .features(self.features)
            .weight(self.weight)
            .dims(self.dims)
            .batch(self.batch)
            .precision(self.precision)
            .cache(false);
        // A static table reads every token (saved as 0).
        if self.max_length > 0 {
            params = params.max_length(self.max_length);
        }
        let params = params.check()?;
        let found = params
            .folder
            .as_ref()
            .map(|f| f.weights_sha256().to_string());
        if found.as_deref() != Some(self.weights_sha256.as_str()) {
            return Err(crate::embed::EmbedError::OtherModel {
                dir: self.model.clone(),
                found: found.unwrap_or_default(),
                expected: self.weights_sha256.clone(),
            });
        }
        Ok(params)
    }
}

/// A topic as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedTopic {
    pub id: usize,
    /// Its label as shown: the curated name, when it had one.
    pub label: String,
    /// Its generated label (models before curated names lack it: then `label`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_label: Option<String>,
    pub size: usize,
    pub share: f64,
    /// c-TF-IDF weights of its top terms, keyed by stem: the fingerprint refits match against.
    pub terms: Vec<(String, f64)>,
    /// The fit's outlier floor on `ln(closeness)` (none: the topic was too small to judge), so
    /// documents assigned later are judged as the fit's were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outlier_floor: Option<f64>,
    /// Named by the user (`[[topic]]`): `label` is that name, and a refit gives the id to the
    /// topic of the same name.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub named: bool,
}

impl SavedTopic {
    pub fn fingerprint(&self) -> TopicFingerprint {
        TopicFingerprint {
            id: self.id,
            label: self.label.clone(),
            share: self.share,
            terms: self.terms.clone(),
            named: self.named,
        }
    }
}

/// Loading failures.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("no model at {path} (output.previous or --model must name a report folder or its model.json)")]
    NotFound { path: PathBuf },
    #[error("cannot read model {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("model {path} is not valid JSON of a topicmap model")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is not a topicmap model (format {found:?})")]
    Format { path: PathBuf, found: String },
    #[error("{path} is a version {found} model; this topicmap reads versions 1 to {VERSION}: refit with this version")]
    Version { path: PathBuf, found: u32 },
    #[error("model {path} is inconsistent: {problem}")]
    Inconsistent {
        path: PathBuf,
        problem: &'static str,
    },
}

/// `model.json` in a report folder, or the file itself.
fn model_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(FILE)
    } else {
        path.to_path_buf()
    }
}

/// The bytes of `model.json` in a report folder (or of the file itself).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ModelError> {
    let file = model_file(path);
    std::fs::read(&file).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ModelError::NotFound { path: file.clone() },
        _ => ModelError::Read {
            path: file.clone(),
            source,
        },
    })
}

/// The sha256 of a model's bytes, in hex: what aggregates record to name their model.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a model keeps of the pipeline besides the fit: its name, title, input columns and
/// tokenizer.
#[derive(Debug, Clone, Copy)]
pub struct ModelMeta<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub input: &'a FitInput,
    pub tokenizer: &'a TokenizerValidParams,
}

impl SavedModel {
    /// Collects what a fit learned: the vocabulary and IDF, the reduction, the topics'
    /// centroids (and term-space centroids when refined), the topics and the next fresh id.
    pub fn new(
        meta: ModelMeta<'_>,
        tfidf: &TfIdf,
        reducer: &Reducer,
        clustering: &Clustering,
        topics: Vec<SavedTopic>,
        next_id: usize,
    ) -> SavedModel {
        let (centroids, term_centroids) = (clustering.centroids(), clustering.term_centroids());
        let (ngram_range, sublinear_tf, smooth_idf, norm) = tfidf.params().weighting();
        SavedModel {
            format: FORMAT.into(),
            version: VERSION,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            name: meta.name.into(),
            title: meta.title.into(),
            tokenize: meta.tokenizer.clone(),
            ngram_range,
            sublinear_tf,
            smooth_idf,
            norm,
            stems: tfidf.features().iter().map(|f| f.stem.clone()).collect(),
            surfaces: tfidf.features().iter().map(|f| f.surface.clone()).collect(),
            idf: tfidf.idf().to_vec(),
            df_bounds: Some([tfidf.df_bounds().0, tfidf.df_bounds().1]),
            reducer: reducer.clone(),
            centroids: centroids.outer_iter().map(|r| r.to_vec()).collect(),
            term_centroids: term_centroids.map(|t| t.outer_iter().map(|r| r.to_vec()).collect()),
            topics,
            next_id,
            clean: None,
            fit_input: Some(meta.input.clone()),
            map: None,
            embedding: None,
        }
    }

    /// The clean stage as the fit ran it.
    pub fn cleaner(&self) -> &TextCleaner {
        static MARKUP_ONLY: std::sync::LazyLock<TextCleaner> =
            std::sync::LazyLock::new(TextCleaner::markup_only);
        self.clean.as_ref().unwrap_or(&MARKUP_ONLY)
    }

    /// Loads `model.json` from a report folder (or the file itself), checking format and version.
    pub fn load(path: &Path) -> Result<SavedModel, ModelError> {
        SavedModel::from_bytes(path, &read_bytes(path)?)
    }

    /// Parses a model read by [`read_bytes`] from `path`, checking format and version.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<SavedModel, ModelError> {
        let file = model_file(path);
        let text = std::str::from_utf8(bytes).map_err(|_| ModelError::Inconsistent {
            path: file.clone(),
            problem: "the file is not UTF-8 text",
        })?;
        let json = |source| ModelError::Json {
            path: file.clone(),
            source,
        };
        // Check the header first, so an unknown version gets a clear message, not a schema error.
        // (Only these two fields are kept: a document tree of a large model would cost several
        // times the file's size.)
        #[derive(serde::Deserialize)]
        struct Header {
            #[serde(default)]
            format: serde_json::Value,
            #[serde(default)]
            version: serde_json::Value,
        }
        let header: Header = serde_json::from_str(text).map_err(json)?;
        let format = header.format.as_str().unwrap_or("").to_string();
        if format != FORMAT {
            return Err(ModelError::Format {
                path: file,
                found: format,
            });
        }
        let version = header.version.as_u64().unwrap_or(0) as u32;
        if !(1..=VERSION).contains(&version) {
            return Err(ModelError::Version {
                path: file,
                found: version,
            });
        }
        let mut model: SavedModel = serde_json::from_str(text).map_err(json)?;
        model.clean = model.clean.take().map(TextCleaner::indexed);
        let bad = |problem| ModelError::Inconsistent {
            path: file.clone(),
            problem,
        };
        let n = model.stems.len();
        if model.surfaces.len() != n || model.idf.len() != n {
            return Err(bad("vocabulary, surfaces and IDF differ in length"));
        }
        if model.reducer.n_features() != n {
            return Err(bad("the reduction does not match the vocabulary"));
        }
        let d = model.clustered_dims();
        if model.centroids.is_empty() || model.centroids.iter().any(|c| c.len() != d) {
            return Err(bad(
                "centroids must be one row per topic, each as long as the clustered vectors",
            ));
        }
        if model.topics.len() != model.centroids.len() {
            return Err(bad("topics and centroids differ in number"));
        }
        if let Some(t) = &model.term_centroids {
            if t.len() != model.centroids.len() || t.iter().any(|c| c.len() != n) {
                return Err(bad(
                    "term_centroids must be one row per topic, each as long as the vocabulary",
                ));
            }
        }
        if model.weighting().is_err() {
            return Err(bad(
                "ngram_range must be [min, max] with 1 <= min <= max <= 3",
            ));
        }
        Ok(model)
    }

    /// The TF-IDF weighting the fit used, checked.
    fn weighting(&self) -> Result<TfIdfValidParams, TfIdfError> {
        TfIdfParams::new()
            .ngram_range(self.ngram_range)
            .sublinear_tf(self.sublinear_tf)
            .smooth_idf(self.smooth_idf)
            .norm(self.norm)
            .check()
    }

    /// The length of the vectors the topics were clustered in (and their centroids): the
    /// reduction's, the sentence vectors', or both together.
    pub fn clustered_dims(&self) -> usize {
        use crate::embed::FeatureSpace;
        match &self.embedding {
            None => self.reducer.dims(),
            Some(e) => match e.features {
                FeatureSpace::Tfidf => self.reducer.dims(),
                FeatureSpace::Embedding => e.dims,
                FeatureSpace::Both => self.reducer.dims() + e.dims,
            },
        }
    }

    /// The TF-IDF model, ready to `transform`.
    pub fn tfidf(&self) -> TfIdf {
        let params = self
            .weighting()
            .expect("a fit's weighting, checked when the model is read");
        TfIdf::from_saved(
            params,
            self.stems.clone(),
            self.surfaces.clone(),
            self.idf.clone(),
            self.df_bounds.map_or((0, 0), |[a, b]| (a, b)),
        )
    }

    /// The topics a refit matches its own against, to keep their ids.
    pub fn previous_topics(&self) -> PreviousTopics {
        PreviousTopics {
            topics: self.topics.iter().map(SavedTopic::fingerprint).collect(),
            next_id: self.next_id,
            fitted_k: Some(self.centroids.len()).filter(|&k| k > 0),
        }
    }

    /// The centroids as a matrix.
    pub fn centroid_matrix(&self) -> Array2<f32> {
        rows_to_matrix(&self.centroids)
    }

    /// Each topic's outlier floor (`-inf` where the fit had none).
    pub fn outlier_floors(&self) -> Vec<f64> {
        self.topics
            .iter()
            .map(|t| t.outlier_floor.unwrap_or(f64::NEG_INFINITY))
            .collect()
    }

    /// The term-space centroids as a matrix, for a refined model.
    pub fn term_centroid_matrix(&self) -> Option<Array2<f32>> {
        self.term_centroids.as_deref().map(rows_to_matrix)
    }
}

fn rows_to_matrix(rows: &[Vec<f32>]) -> Array2<f32> {
    let k = rows.len();
    let d = rows.first().map_or(0, Vec::len);
    Array2::from_shape_vec((k, d), rows.concat()).expect("checked on load")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_format_and_version_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(FILE);
        std::fs::write(&p, r#"{"format": "topicmap-model", "version": 99}"#).unwrap();
        let e = SavedModel::load(d.path()).unwrap_err();
        assert!(matches!(e, ModelError::Version { found: 99, .. }), "{e}");
        assert!(
            e.to_string().contains("version 99") && e.to_string().contains("reads versions 1 to 2")
        );
        std::fs::write(&p, r#"{"format": "something-else", "version": 1}"#).unwrap();
        assert!(matches!(
            SavedModel::load(&p).unwrap_err(),
            ModelError::Format { .. }
        ));
        std::fs::write(&p, "not json").unwrap();
        assert!(matches!(
            SavedModel::load(&p).unwrap_err(),
            ModelError::Json { .. }
        ));
        assert!(matches!(
            SavedModel::load(&d.path().join("missing.json")).unwrap_err(),
            ModelError::NotFound { .. }
        ));
    }
}
