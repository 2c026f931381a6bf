//! A sentence-transformers model folder, read and checked before any weight is used.
//!
//! Why a stage of its own: a model folder is several files written by other tools
//! (`config.json`, `model.safetensors`, `tokenizer.json`, `modules.json`,
//! `sentence_bert_config.json`, `1_Pooling/config.json`), and each can be missing, of another
//! architecture, truncated or out of step with the others. Everything that can be checked
//! without running the transformer is checked here, once, so a bad folder is one clear error
//! naming the file before anything is read or written, and the encoder only ever sees a
//! consistent folder. The folder's own settings decide how sentences are pooled and whether
//! they are normalised, as sentence-transformers decides them.

use super::EmbedError;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// How token vectors become one sentence vector (`1_Pooling/config.json`). Several modes are
/// concatenated in sentence-transformers' order: CLS, max, mean, mean / sqrt(length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Pooling {
    #[serde(rename = "pooling_mode_cls_token", default)]
    pub cls: bool,
    #[serde(rename = "pooling_mode_max_tokens", default)]
    pub max: bool,
    #[serde(rename = "pooling_mode_mean_tokens", default)]
    pub mean: bool,
    #[serde(rename = "pooling_mode_mean_sqrt_len_tokens", default)]
    pub mean_sqrt_len: bool,
}

impl Pooling {
    /// How many of the modes are on (each adds the hidden size to the sentence vector).
    pub fn modes(&self) -> usize {
        [self.cls, self.max, self.mean, self.mean_sqrt_len]
            .iter()
            .filter(|&&on| on)
            .count()
    }
}

/// The pooling file's keys this build does not implement; a folder that turns one on is refused.
#[derive(Deserialize)]
struct PoolingRest {
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

/// One entry of `modules.json`.
#[derive(Deserialize)]
struct Module {
    #[serde(default)]
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

/// `sentence_bert_config.json`.
#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

/// The architecture part of `config.json` this build checks before handing the file to the BERT
/// implementation.
#[derive(Deserialize)]
struct Architecture {
    model_type: Option<String>,
    #[serde(default)]
    architectures: Vec<String>,
}

/// A checked model folder: where its files are, the BERT configuration, how sentences are
/// pooled and normalised, the longest input, and the weights' SHA-256 (which names the model in
/// saved models and caches).
#[derive(Debug, Clone)]
pub struct ModelFolder {
    pub dir: PathBuf,
    pub config: candle_transformers::models::bert::Config,
    pub pooling: Pooling,
    pub normalize: bool,
    /// Tokens per text, `[CLS]` and `[SEP]` included (`sentence_bert_config.json`, capped by the
    /// model's position embeddings).
    pub max_length: usize,
    /// The SHA-256 of `model.safetensors`, in hex.
    pub weights_sha256: String,
    /// The dense products' precision (`[embed] precision`; f32 unless set).
    pub precision: super::Precision,
}

impl ModelFolder {
    /// Reads and checks the folder at `dir`: every file it needs is there and parses, the model
    /// is a BERT, the pooling is one this build implements, the weights file is whole (its
    /// header's tensors fit in it) and the tokenizer's vocabulary is the model's.
    pub fn open(dir: &Path) -> Result<ModelFolder, EmbedError> {
        if !dir.is_dir() {
            return Err(EmbedError::NoFolder { dir: dir.into() });
        }
        let config_path = dir.join("config.json");
        let text = read_text(&config_path)?;
        let arch: Architecture = parse(&config_path, &text)?;
        let is_bert = match &arch.model_type {
            Some(t) => t == "bert",
            None => arch.architectures.iter().any(|a| a.starts_with("Bert")),
        };
        if !is_bert {
            return Err(EmbedError::NotBert {
                path: config_path,
                found: arch
                    .model_type
                    .or_else(|| arch.architectures.first().cloned())
                    .unwrap_or_else(|| "no model_type".into()),
            });
        }
        let config: candle_transformers::models::bert::Config = parse(&config_path, &text)?;
        let modules = read_modules(dir)?;
        let pooling = read_pooling(dir, &modules)?;
        let normalize = modules.iter().any(|m| m.kind.ends_with(".Normalize"));
        let max_length = read_max_length(dir, config.max_position_embeddings)?;
        let weights = dir.join("model.safetensors");
        let weights_sha256 = check_weights(&weights)?;
        let folder = ModelFolder {
            dir: dir.into(),
            config,
            pooling,
            normalize,
            max_length,
            weights_sha256,
            precision: super::Precision::F32,
        };
        folder.tokenizer()?;
        Ok(folder)
    }

    /// The sentence vector's length.
    pub fn dims(&self) -> usize {
        self.config.hidden_size * self.pooling.modes()
    }

    /// The folder's tokenizer, set to cut texts at [`Self::max_length`] and pad nothing (the
    /// encoder batches texts of equal length). Refused when its vocabulary is not the model's.
    pub fn tokenizer(&self) -> Result<tokenizers::Tokenizer, EmbedError> {
        let path = self.dir.join("tokenizer.json");
        if !path.is_file() {
            return Err(EmbedError::Missing { path });
        }
        let bad = |why: String| EmbedError::Tokenizer {
            path: path.clone(),
            why,
        };
        let mut tokenizer =
            tokenizers::Tokenizer::from_file(&path).map_err(|e| bad(e.to_string()))?;
        let vocab = tokenizer.get_vocab_size(true);
        if vocab > self.config.vocab_size {
            return Err(bad(format!(
                "its vocabulary has {vocab} tokens, the model's embeddings {} (config.json)",
                self.config.vocab_size
            )));
        }
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: self.max_length,
                ..Default::default()
            }))
            .map_err(|e| bad(e.to_string()))?;
        Ok(tokenizer)
    }
}

pub(super) fn read_text(path: &Path) -> Result<String, EmbedError> {
    if !path.is_file() {
        return Err(EmbedError::Missing { path: path.into() });
    }
    std::fs::read_to_string(path).map_err(|source| EmbedError::Read {
        path: path.into(),
        source,
    })
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, EmbedError> {
    serde_json::from_str(text).map_err(|e| EmbedError::Json {
        path: path.into(),
        why: e.to_string(),
    })
}

/// `modules.json`; a folder without it is a plain transformer with mean pooling (as
/// sentence-transformers treats one), without normalisation.
fn read_modules(dir: &Path) -> Result<Vec<Module>, EmbedError> {
    let path = dir.join("modules.json");
    if !path.is_file() {
        return Ok(Vec::new());
    }
    parse(&path, &read_text(&path)?)
}

fn read_pooling(dir: &Path, modules: &[Module]) -> Result<Pooling, EmbedError> {
    let Some(module) = modules.iter().find(|m| m.kind.ends_with(".Pooling")) else {
        return Ok(Pooling {
            cls: false,
            max: false,
            mean: true,
            mean_sqrt_len: false,
        });
    };
    let path = dir.join(&module.path).join("config.json");
    let text = read_text(&path)?;
    let pooling: Pooling = parse(&path, &text)?;
    let rest: PoolingRest = parse(&path, &text)?;
    if rest.pooling_mode_weightedmean_tokens || rest.pooling_mode_lasttoken {
        return Err(EmbedError::Pooling {
            path,
            why: "weighted-mean and last-token pooling are not implemented".into(),
        });
    }
    if pooling.modes() == 0 {
        return Err(EmbedError::Pooling {
            path,
            why: "no pooling mode is on".into(),
        });
    }
    Ok(pooling)
}

/// `sentence_bert_config.json`'s `max_seq_length` (the model's position embeddings without it),
/// never more than the position embeddings.
fn read_max_length(dir: &Path, positions: usize) -> Result<usize, EmbedError> {
    let path = dir.join("sentence_bert_config.json");
    let given = if path.is_file() {
        parse::<SentenceConfig>(&path, &read_text(&path)?)?.max_seq_length
    } else {
        None
    };
    Ok(given.unwrap_or(positions).min(positions))
}

/// Checks that the safetensors file is whole (its header parses and every tensor's bytes lie
/// inside the file), and returns its SHA-256.
pub(super) fn check_weights(path: &Path) -> Result<String, EmbedError> {
    if !path.is_file() {
        return Err(EmbedError::Missing { path: path.into() });
    }
    let bytes = std::fs::read(path).map_err(|source| EmbedError::Read {
        path: path.into(),
        source,
    })?;
    let bad = |why: String| EmbedError::Weights {
        path: path.into(),
        why,
    };
    if bytes.len() < 8 {
        return Err(bad(format!(
            "{} bytes: too short for a header",
            bytes.len()
        )));
    }
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header = bytes
        .get(8..8usize.saturating_add(header_len))
        .ok_or_else(|| bad(format!("its header claims {header_len} bytes")))?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| bad(format!("its header: {e}")))?;
    let data = bytes.len() - 8 - header_len;
    let end = header
        .iter()
        .filter(|(name, _)| *name != "__metadata__")
        .filter_map(|(_, t)| t.get("data_offsets")?.as_array()?.get(1)?.as_u64())
        .max()
        .unwrap_or(0) as usize;
    if end > data {
        return Err(bad(format!(
            "truncated: its tensors need {end} bytes of data, the file holds {data}"
        )));
    }
    Ok(hex(&Sha256::digest(&bytes)))
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
