//! Curated topic names: a person's name for a topic replaces its generated label everywhere.
//!
//! Names are keyed by topic id. Ids are stable across refits (see [`super::matching`]), so a
//! name follows its topic from run to run; a named topic that vanishes is reported, and so is a
//! name for an id the pipeline has never had (a typo, most likely). The names file is TOML, one
//! `id = "name"` line per topic; [`template`] writes one from a run, with today's labels.

use super::matching::DriftRow;
use super::TopicSummary;
use std::collections::BTreeMap;

/// Topic id -> curated name.
pub type Names = BTreeMap<usize, String>;

/// Why a names file cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NamesError {
    #[error(transparent)]
    Toml(#[from] TomlSyntax),
    #[error("key {0:?} is not a topic id (a whole number, as in topics.csv)")]
    BadId(String),
    #[error("topic {0}: the name must be a non-empty string")]
    BadName(usize),
}

/// A names file that is not TOML: toml's error, kept whole (its span, line and column), shown on
/// one line as a pipeline file's TOML errors are: where, then why ("TOML parse error at line 2,
/// column 5: string values must be quoted, expected literal string"). toml's own text spans
/// several lines with an excerpt of the file, which would break the one-cause-per-line error
/// output, so it is not a further cause: this line says all it says but the excerpt. (Boxed:
/// toml's error is large, and every configuration error would carry its size.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlSyntax(Box<toml::de::Error>);

impl TomlSyntax {
    /// toml's error, with its span.
    pub fn error(&self) -> &toml::de::Error {
        &self.0
    }
}

impl From<toml::de::Error> for TomlSyntax {
    fn from(e: toml::de::Error) -> Self {
        TomlSyntax(Box::new(e))
    }
}

impl std::fmt::Display for TomlSyntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why: Vec<&str> = self
            .0
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        // toml's text opens with where, when it knows: "TOML parse error at line 2, column 5".
        let text = self.0.to_string();
        match text
            .lines()
            .next()
            .filter(|l| l.starts_with("TOML parse error at"))
        {
            Some(at) => write!(f, "{at}: {}", why.join(": ")),
            None => f.write_str(&why.join(": ")),
        }
    }
}

impl std::error::Error for TomlSyntax {}

/// Parses a names file's text: `id = "name"` lines (comments allowed).
pub fn parse(text: &str) -> Result<Names, NamesError> {
    let table: toml::Table = text.parse().map_err(TomlSyntax::from)?;
    let mut names = Names::new();
    for (key, value) in table {
        let id: usize = key
            .trim()
            .parse()
            .map_err(|_| NamesError::BadId(key.clone()))?;
        match value.as_str().map(str::trim) {
            Some(name) if !name.is_empty() => {
                names.insert(id, name.to_string());
            }
            _ => return Err(NamesError::BadName(id)),
        }
    }
    Ok(names)
}

/// Gives the named topics their names (their generated labels stay in `auto_label`), names the
/// vanished topics in `drift`, and returns a warning for each name that has no topic in this run:
/// a topic that vanished since the previous run, or an id this pipeline never had (below
/// `next_id`, the first id no topic has had, it once had; at or above, never).
pub fn apply(
    summary: &mut TopicSummary,
    names: &Names,
    drift: Option<&mut Vec<DriftRow>>,
    next_id: usize,
) -> Vec<String> {
    for t in &mut summary.topics {
        if let Some(name) = names.get(&t.id) {
            t.label = name.clone();
        }
    }
    let mut warnings = Vec::new();
    let vanished: Vec<usize> = match drift {
        Some(rows) => {
            for row in rows.iter_mut() {
                if let Some(name) = row.previous_id.and_then(|id| names.get(&id)) {
                    row.name = name.clone();
                }
            }
            rows.iter()
                .filter(|r| r.status == "vanished")
                .filter_map(|r| r.previous_id)
                .collect()
        }
        None => Vec::new(),
    };
    for (&id, name) in names {
        if summary.topics.iter().any(|t| t.id == id) {
            continue;
        }
        warnings.push(if vanished.contains(&id) {
            format!("named topic {id} ({name:?}) vanished in this run: no topic matches it (see drift.csv)")
        } else if id < next_id {
            format!("named topic {id} ({name:?}) is not in this run (it vanished in an earlier one)")
        } else {
            format!("the names file names topic {id} ({name:?}), which this pipeline has never had")
        });
    }
    warnings
}

/// One topic of a run, for the template.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateTopic {
    pub id: usize,
    /// The generated label.
    pub auto_label: String,
    /// Its curated name in that run, if it had one.
    pub name: Option<String>,
    pub size: usize,
    /// Named in the pipeline file (`[[topic]]`): `name` is that name, which a names file
    /// need not repeat.
    pub named: bool,
}

/// A names file for a run's topics: named topics keep their names; the others are listed
/// commented out, with their generated label, ready to be named.
pub fn template(pipeline: &str, run: &str, topics: &[TemplateTopic]) -> String {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = format!(
        "# Topic names for pipeline {}, from {run}.\n\
         # A name replaces the topic's label in every CSV, chart, report.html and summary.md.\n\
         # Topic ids stay with their topics across refits, so a name follows its topic.\n\
         # Uncomment a line and write the name; then set, in the pipeline file:\n\
         #   [describe]\n\
         #   names = \"topic-names.toml\"\n\n",
        quote(pipeline)
    );
    let mut topics = topics.to_vec();
    topics.sort_by_key(|t| t.id);
    for t in topics {
        let docs = format!("{} documents; label: {}", t.size, t.auto_label);
        match &t.name {
            Some(name) if t.named => out.push_str(&format!(
                "# {} is {} ([[topic]] in the pipeline file)  # {docs}\n",
                t.id,
                quote(name)
            )),
            Some(name) => out.push_str(&format!("{} = {}  # {docs}\n", t.id, quote(name))),
            None => out.push_str(&format!(
                "# {} = {}  # {} documents\n",
                t.id,
                quote(&t.auto_label),
                t.size
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::Topic;

    fn topic(id: usize, label: &str) -> Topic {
        Topic {
            id,
            label: label.into(),
            auto_label: label.into(),
            size: 10,
            share: 0.5,
            terms: Vec::new(),
            representatives: Vec::new(),
            outliers: 0,
            named: false,
        }
    }

    #[test]
    fn names_parse_and_refuse_what_is_not_an_id_or_a_name() {
        let n =
            parse("# comment\n0 = \"Kernel methods\"\n7 = \"Reinforcement learning\"\n").unwrap();
        assert_eq!(n[&0], "Kernel methods");
        assert_eq!(n.len(), 2);
        assert_eq!(
            parse("x = \"a\"").unwrap_err(),
            NamesError::BadId("x".into())
        );
        assert_eq!(parse("3 = 4").unwrap_err(), NamesError::BadName(3));
        assert_eq!(parse("3 = \"  \"").unwrap_err(), NamesError::BadName(3));
        let NamesError::Toml(e) = parse("0 = \"Kernels\"\n3 = \n").unwrap_err() else {
            panic!("a TOML error");
        };
        // Where and why, on one line (toml's message has two: "invalid string", "expected
        // ..."); toml's error is kept whole.
        let shown = e.to_string();
        assert!(
            shown.starts_with("TOML parse error at line 2, column 5: invalid string: expected"),
            "{shown}"
        );
        assert!(!shown.contains('\n'), "{shown}");
        assert!(e.error().span().is_some());
    }

    #[test]
    fn a_name_replaces_the_label_and_a_missing_topic_is_reported() {
        let mut summary = TopicSummary {
            topics: vec![topic(0, "kernel, svm"), topic(2, "policy, reward")],
            classes: None,
            documents: 20,
        };
        let mut drift = vec![DriftRow {
            previous_id: Some(1),
            id: None,
            label: String::new(),
            previous_label: "graph, nodes".into(),
            similarity: 0.0,
            share_change: -0.1,
            status: "vanished",
            name: String::new(),
        }];
        let names = parse("0 = \"Kernels\"\n1 = \"Graphs\"\n9 = \"Typo\"\n").unwrap();
        let w = apply(&mut summary, &names, Some(&mut drift), 3);
        assert_eq!(summary.topics[0].label, "Kernels");
        assert_eq!(summary.topics[0].auto_label, "kernel, svm");
        assert_eq!(summary.topics[1].label, "policy, reward");
        assert_eq!(drift[0].name, "Graphs");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("topic 1") && w[0].contains("vanished"),
            "{w:?}"
        );
        assert!(
            w[1].contains("topic 9") && w[1].contains("never had"),
            "{w:?}"
        );
    }

    #[test]
    fn the_template_reads_back_as_the_names_it_keeps() {
        let topics = [
            TemplateTopic {
                id: 1,
                auto_label: "graph, \"nodes\"".into(),
                name: None,
                size: 30,
                named: false,
            },
            TemplateTopic {
                id: 0,
                auto_label: "kernel, svm".into(),
                name: Some("Kernels".into()),
                size: 40,
                named: false,
            },
        ];
        let t = template("nips", "output/nips/latest", &topics);
        assert!(
            t.contains("\n# 1 = ") && t.contains("# 30 documents"),
            "{t}"
        );
        let names = parse(&t).unwrap();
        assert_eq!(names.len(), 1);
        assert_eq!(names[&0], "Kernels");
        // Uncommenting a line makes a valid name.
        let named = t.replace("# 1 = ", "1 = ");
        assert_eq!(parse(&named).unwrap()[&1], "graph, \"nodes\"");
    }
}
