//! `--set SECTION.KEY=VALUE` overrides, merged into the parsed pipeline file before validation.
//!
//! The value is read as a TOML value (`12`, `0.5`, `true`, `"text"`, `["a", "b"]`); anything that
//! does not parse as TOML is taken as a plain string, so `--set cluster.k=auto` works unquoted.
//! Arrays of tables are addressed by index: `--set input.0.limit=100`.

use super::ConfigError;
use toml::{Table, Value};

/// One parsed override.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub path: Vec<String>,
    pub value: Value,
}

impl Override {
    /// Parses `a.b.c=value`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let bad = |reason| ConfigError::BadOverride {
            arg: text.to_string(),
            reason,
        };
        let (key, raw) = text
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=VALUE"))?;
        let path: Vec<String> = key
            .trim()
            .split('.')
            .map(|s| s.trim().to_string())
            .collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(bad("empty key segment"));
        }
        let raw = raw.trim();
        let value = match format!("v = {raw}").parse::<Table>() {
            Ok(mut t) => t
                .remove("v")
                .unwrap_or_else(|| Value::String(raw.to_string())),
            Err(_) => Value::String(raw.to_string()),
        };
        Ok(Override { path, value })
    }

    /// Writes the value into `root`, creating tables on the way.
    pub fn apply(&self, root: &mut Table) -> Result<(), ConfigError> {
        set_in_table(root, &self.path, self.value.clone()).map_err(|reason| {
            ConfigError::BadOverride {
                arg: self.path.join("."),
                reason,
            }
        })
    }
}

fn set_in_table(t: &mut Table, path: &[String], value: Value) -> Result<(), &'static str> {
    let (head, rest) = path.split_first().ok_or("empty key")?;
    if rest.is_empty() {
        t.insert(head.clone(), value);
        return Ok(());
    }
    let next = t
        .entry(head.clone())
        .or_insert_with(|| Value::Table(Table::new()));
    set_in_value(next, rest, value)
}

fn set_in_value(v: &mut Value, path: &[String], value: Value) -> Result<(), &'static str> {
    match v {
        Value::Table(t) => set_in_table(t, path, value),
        Value::Array(a) => {
            let (head, rest) = path.split_first().ok_or("empty key")?;
            let i: usize = head
                .parse()
                .map_err(|_| "arrays are indexed by number, e.g. input.0.path")?;
            let slot = a.get_mut(i).ok_or("array index out of range")?;
            if rest.is_empty() {
                *slot = value;
                Ok(())
            } else {
                set_in_value(slot, rest, value)
            }
        }
        _ => Err("cannot set a key inside a plain value"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typed_values_and_bare_strings() {
        let o = Override::parse("cluster.k=12").unwrap();
        assert_eq!(o.path, vec!["cluster", "k"]);
        assert_eq!(o.value, Value::Integer(12));
        assert_eq!(
            Override::parse("cluster.k=auto").unwrap().value,
            Value::String("auto".into())
        );
        assert_eq!(
            Override::parse("tokenize.max-df=0.5").unwrap().value,
            Value::Float(0.5)
        );
        assert!(Override::parse("nokey").is_err());
    }

    #[test]
    fn applies_into_nested_tables_and_arrays() {
        let mut t: Table = "name = \"x\"\n[[input]]\npath = \"a.txt\"\n"
            .parse()
            .unwrap();
        Override::parse("cluster.seed=7")
            .unwrap()
            .apply(&mut t)
            .unwrap();
        Override::parse("input.0.path=b.txt")
            .unwrap()
            .apply(&mut t)
            .unwrap();
        assert_eq!(t["cluster"]["seed"].as_integer(), Some(7));
        assert_eq!(t["input"][0]["path"].as_str(), Some("b.txt"));
        assert!(Override::parse("input.5.path=c")
            .unwrap()
            .apply(&mut t)
            .is_err());
        assert_eq!(
            t["name"].as_str(),
            Some("x"),
            "a failed override keeps the table"
        );
    }
}
