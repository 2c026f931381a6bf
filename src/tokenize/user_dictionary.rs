//! The pipeline's own words for the Chinese segmenter (`[tokenize] user-dictionary = "FILE"`).
//!
//! jieba's bundled dictionary is general; a field's words (扩散模型, 大语言模型) are cut into
//! pieces unless the segmenter is told them. The file holds one word per line, optionally
//! followed by a frequency and a part-of-speech tag (jieba's own format: `word [freq] [tag]`);
//! blank lines and lines starting with `#` are skipped. A word without a frequency gets the one
//! jieba suggests to keep it whole.
//!
//! The dictionary travels with the tokenizer's parameters into `run.json` and `model.json`: its
//! file name, its sha256 and its text, so that `topicmap assign` (on any machine, a Spark
//! executor included) segments exactly as the fit did without the file. A model whose
//! dictionary text no longer matches its sha256 is refused.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// A user dictionary: its words and where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SavedDictionary", into = "SavedDictionary")]
pub struct UserDictionary {
    file: String,
    sha256: String,
    text: String,
    words: Vec<(String, Option<usize>)>,
}

/// How a dictionary is saved: the words are parsed again on load.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedDictionary {
    file: String,
    sha256: String,
    text: String,
}

/// A dictionary that cannot be used. Messages name the file (and line).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UserDictionaryError {
    #[error("cannot read the user dictionary {file} (tokenize.user-dictionary): {why}")]
    Read { file: String, why: String },
    #[error("user dictionary {file}, line {line}: {why}")]
    Line {
        file: String,
        line: usize,
        why: &'static str,
    },
    #[error("the user dictionary {file} saved with this model does not match its sha256 (expected {expected}, found {found}): refit with the dictionary you mean")]
    Changed {
        file: String,
        expected: String,
        found: String,
    },
}

impl UserDictionary {
    /// Reads and parses `path`; `file` is how the pipeline writes it (kept for reports). Messages
    /// name the path read.
    pub fn read(path: &Path, file: &str) -> Result<Self, UserDictionaryError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| UserDictionaryError::Read {
            file: shown.clone(),
            why: e.to_string(),
        })?;
        let mut dict = Self::parse(&text, &shown)?;
        dict.file = file.to_string();
        Ok(dict)
    }

    /// Parses a dictionary's text (see the module docs for the format).
    pub fn parse(text: &str, file: &str) -> Result<Self, UserDictionaryError> {
        let mut words = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why| UserDictionaryError::Line {
                file: file.to_string(),
                line: i + 1,
                why,
            };
            let mut parts = line.split_whitespace();
            let word = parts.next().expect("a non-empty line has a part");
            let freq = match parts.next() {
                None => None,
                Some(f) => Some(f.parse::<usize>().map_err(|_| {
                    bad("the frequency after the word must be a whole number (format: word [freq] [tag])")
                })?),
            };
            if parts.nth(1).is_some() {
                return Err(bad("too many fields (format: word [freq] [tag])"));
            }
            words.push((word.to_string(), freq));
        }
        Ok(UserDictionary {
            file: file.to_string(),
            sha256: sha256_hex(text.as_bytes()),
            text: text.to_string(),
            words,
        })
    }

    /// The words, each with its frequency when the file gives one.
    pub fn words(&self) -> &[(String, Option<usize>)] {
        &self.words
    }
    /// The file as the pipeline writes it.
    pub fn file(&self) -> &str {
        &self.file
    }
    /// The sha256 of the file's bytes, hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl TryFrom<SavedDictionary> for UserDictionary {
    type Error = UserDictionaryError;
    fn try_from(saved: SavedDictionary) -> Result<Self, Self::Error> {
        let dict = Self::parse(&saved.text, &saved.file)?;
        if dict.sha256 != saved.sha256 {
            return Err(UserDictionaryError::Changed {
                file: saved.file,
                expected: saved.sha256,
                found: dict.sha256,
            });
        }
        Ok(dict)
    }
}

impl From<UserDictionary> for SavedDictionary {
    fn from(d: UserDictionary) -> Self {
        SavedDictionary {
            file: d.file,
            sha256: d.sha256,
            text: d.text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_and_without_frequencies() {
        let d = UserDictionary::parse("# domain words\n扩散模型 200 n\n\n大语言模型\n", "d.txt")
            .unwrap();
        assert_eq!(
            d.words(),
            [
                ("扩散模型".to_string(), Some(200)),
                ("大语言模型".to_string(), None)
            ]
        );
        assert_eq!(d.sha256().len(), 64);
    }

    #[test]
    fn a_bad_line_names_the_file_and_line() {
        let e = UserDictionary::parse("扩散模型\n大模型 many\n", "d.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "user dictionary d.txt, line 2: the frequency after the word must be a whole number (format: word [freq] [tag])"
        );
        let e = UserDictionary::read(Path::new("/nonexistent/d.txt"), "d.txt").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read the user dictionary /nonexistent/d.txt"),
            "{e}"
        );
    }

    #[test]
    fn saved_with_its_sha256_and_refused_when_changed() {
        let d = UserDictionary::parse("扩散模型 100\n", "d.txt").unwrap();
        let json = serde_json::to_string(&d).unwrap();
        let back: UserDictionary = serde_json::from_str(&json).unwrap();
        assert_eq!(back, d);
        let edited = json.replace("100", "5");
        let e = serde_json::from_str::<UserDictionary>(&edited).unwrap_err();
        assert!(e.to_string().contains("does not match its sha256"), "{e}");
    }
}
