//! Named topics (`[[topic]]`): the topics a user already knows and wants counted by name, beside
//! the ones the data reveals.
//!
//! A named topic is a name, optionally seed words, and optionally a zero-shot threshold
//! (`min-similarity`). This module holds what the user said and its rules; [`super::guided`]
//! fits topics around the names' vectors, and the describe stage gives each named topic its
//! name as its label.

use serde::Serialize;

/// One `[[topic]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct NamedTopic {
    pub name: String,
    /// Words or phrases that belong to it (with the name, they make its starting vector).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<String>,
    /// A document at least this similar (cosine) to the topic's sentence vector joins it before
    /// any clustering (zero-shot); the global `cluster.min-similarity` when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_similarity: Option<f32>,
}

impl NamedTopic {
    /// A topic with no seeds and no threshold.
    pub fn new(name: impl Into<String>) -> NamedTopic {
        NamedTopic {
            name: name.into(),
            seeds: Vec::new(),
            min_similarity: None,
        }
    }

    /// The texts its vector is made of: the name, then each seed.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.seeds.iter().map(String::as_str))
    }
}

/// The rules of a list of named topics, for k at most `k_max` (the fixed k, or the top of the
/// automatic range), `sentence_vectors` telling whether k-means clusters a sentence model's
/// vectors (zero-shot needs them), and the global threshold `min_similarity`.
pub fn check(
    topics: &[NamedTopic],
    (k_max, k_key): (usize, &'static str),
    sentence_vectors: bool,
    min_similarity: Option<f32>,
) -> Result<(), NamedError> {
    let mut seen = std::collections::BTreeMap::new();
    for (i, t) in topics.iter().enumerate() {
        if t.name.trim().is_empty() {
            return Err(NamedError::Blank { number: i + 1 });
        }
        if seen.insert(t.name.trim().to_lowercase(), i).is_some() {
            return Err(NamedError::Twice {
                name: t.name.clone(),
            });
        }
        if let Some(v) = t.min_similarity {
            threshold(v, Some(&t.name), sentence_vectors)?;
        }
    }
    if let Some(v) = min_similarity {
        threshold(v, None, sentence_vectors)?;
    }
    if topics.len() > k_max {
        return Err(NamedError::TooMany {
            named: topics.len(),
            k: k_max,
            key: k_key,
        });
    }
    Ok(())
}

/// A zero-shot threshold's rules: within (0, 1], and only on sentence vectors.
fn threshold(v: f32, name: Option<&str>, sentence_vectors: bool) -> Result<(), NamedError> {
    let key = match name {
        Some(n) => format!("[[topic]] {n:?}: min-similarity"),
        None => "cluster.min-similarity".to_string(),
    };
    if !(v > 0.0 && v <= 1.0) {
        return Err(NamedError::Threshold { key, value: v });
    }
    if !sentence_vectors {
        return Err(NamedError::NoModel { key });
    }
    Ok(())
}

/// A list of named topics that breaks a rule; each message names the topic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NamedError {
    #[error("[[topic]] number {number} has no name: every named topic needs `name`")]
    Blank { number: usize },
    #[error("[[topic]] {name:?} is named twice: named topics need different names (case aside)")]
    Twice { name: String },
    #[error(
        "{named} named topics ([[topic]]) but {key} = {k}: k counts the named topics; raise {key}"
    )]
    TooMany {
        named: usize,
        k: usize,
        key: &'static str,
    },
    #[error("{key} = {value} must be a cosine similarity within (0, 1]")]
    Threshold { key: String, value: f32 },
    #[error("{key} needs the sentence vectors of a model: set [embed] model (and cluster.features to embedding or both)")]
    NoModel { key: String },
    #[error("named topic {name:?}: the corpus has none of its words (name and seeds), and no sentence model reads them: add seeds the corpus uses, or set [embed] model")]
    Unknown { name: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&str]) -> Vec<NamedTopic> {
        names.iter().map(|n| NamedTopic::new(*n)).collect()
    }

    #[test]
    fn every_rule_names_its_topic() {
        let ok = check(&named(&["space", "hockey"]), (10, "cluster.k"), false, None);
        assert_eq!(ok, Ok(()));
        let e = check(&named(&["space", " "]), (10, "cluster.k"), false, None).unwrap_err();
        assert_eq!(e, NamedError::Blank { number: 2 });
        let e = check(&named(&["Space", "space "]), (10, "cluster.k"), false, None);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("\"space \" is named twice"));
        let e = check(&named(&["a", "b", "c"]), (2, "cluster.k"), false, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("3 named topics ([[topic]]) but cluster.k = 2"),
            "{e}"
        );
        let mut zero_shot = named(&["space"]);
        zero_shot[0].min_similarity = Some(0.5);
        let e = check(&zero_shot, (10, "cluster.k"), false, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("[[topic]] \"space\": min-similarity needs"),
            "{e}"
        );
        assert_eq!(check(&zero_shot, (10, "cluster.k"), true, None), Ok(()));
        let e = check(&named(&["space"]), (10, "cluster.k"), true, Some(1.5)).unwrap_err();
        assert!(
            e.to_string().contains("cluster.min-similarity = 1.5"),
            "{e}"
        );
    }
}
