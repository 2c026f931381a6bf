//! Pipeline configuration: the TOML file, `--set` overrides, and the resolved [`Settings`].
//!
//! Three layers, as in ruff: [`Options`] mirrors the file (all optional, unknown keys rejected),
//! [`Override`]s from the command line are merged into the raw TOML table, and [`Settings`] holds
//! validated, concrete values with every default filled in. Each stage is built from `Settings`.

mod error;
pub mod options;
pub mod overrides;
mod resolved;
mod sections;
pub mod settings;

pub use error::SettingsError;
pub use options::Options;
pub use overrides::Override;
pub use resolved::{normalize, ChartsSettings, OutputSettings, TopicNames, TrendsSettings};
pub use settings::Settings;

use std::path::{Path, PathBuf};

/// Everything that can be wrong with a pipeline file or its overrides.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read pipeline file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("pipeline file {path} is not valid")]
    Parse {
        path: PathBuf,
        #[source]
        source: TomlError,
    },
    #[error("pipeline file {path}, after --set, is not valid")]
    ParseAfterOverrides {
        path: PathBuf,
        #[source]
        source: TomlError,
    },
    #[error("bad --set {arg:?}: {reason}")]
    BadOverride { arg: String, reason: &'static str },
    #[error("pipeline file {path} has a bad value")]
    Invalid {
        path: PathBuf,
        #[source]
        source: SettingsError,
    },
}

/// A TOML error, shown on one line: toml's own message spans several lines with a source
/// excerpt, which would break the one-cause-per-line error output.
#[derive(Debug)]
pub struct TomlError(pub toml::de::Error);

impl std::fmt::Display for TomlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&one_line(&self.0.to_string()))
    }
}

impl std::error::Error for TomlError {}

/// Reads, merges and validates a pipeline file.
pub fn load(path: &Path, overrides: &[Override]) -> Result<Settings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let parse_err = |e: toml::de::Error| ConfigError::Parse {
        path: path.to_path_buf(),
        source: TomlError(e),
    };
    // Deserialize the file as written first: its errors carry line numbers.
    let mut options: Options = toml::from_str(text).map_err(parse_err)?;
    if !overrides.is_empty() {
        let mut table: toml::Table = text.parse().map_err(parse_err)?;
        for o in overrides {
            o.apply(&mut table)?;
        }
        options =
            Options::deserialize_table(table).map_err(|e| ConfigError::ParseAfterOverrides {
                path: path.to_path_buf(),
                source: TomlError(e),
            })?;
    }
    Settings::resolve(options, path).map_err(|source| ConfigError::Invalid {
        path: path.to_path_buf(),
        source,
    })
}

impl Options {
    fn deserialize_table(table: toml::Table) -> Result<Options, toml::de::Error> {
        use serde::Deserialize;
        Options::deserialize(toml::Value::Table(table))
    }
}

/// toml's messages span several lines with a source excerpt; keep them on one line per cause.
fn one_line(message: &str) -> String {
    // The excerpt lines: "|", "2 | bogus = 1", and the "^^^^" marker under it.
    let excerpt = |l: &str| {
        let numbered = l
            .split_once(" |")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        l.starts_with('|') || numbered || l.chars().all(|c| c == '^' || c == ' ')
    };
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !excerpt(l))
        .collect();
    lines.join(": ").replace(": :", ":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_errors_fit_on_one_line() {
        let e = toml::from_str::<Options>("name = \"p\"\nbogus = 1\n").unwrap_err();
        let line = one_line(&e.to_string());
        assert!(!line.contains('\n') && !line.contains(" | "), "{line}");
        assert!(
            line.contains("line 2") && line.contains("unknown field `bogus`"),
            "{line}"
        );
    }
}
