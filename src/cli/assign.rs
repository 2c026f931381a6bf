//! `topicmap assign --model RUN_DIR INPUT... [--out DIR]`: new documents into saved topics.

use super::AssignArgs;
use crate::config::{InputFormat, InputSettings, Period};
use anyhow::{bail, Context};

pub fn assign(args: AssignArgs, quiet: bool) -> anyhow::Result<()> {
    let format = match args.format.as_deref() {
        None => None,
        Some(f) => match InputFormat::from_name(f) {
            Some(f) => Some(f),
            None => bail!("--format {f:?} must be paper-list, csv, tsv, parquet, json or ndjson"),
        },
    };
    let period = match args.period.as_str() {
        "year" => Period::Year,
        "quarter" => Period::Quarter,
        "month" => Period::Month,
        other => bail!("--period {other:?} must be year, quarter or month"),
    };
    let inputs = args
        .inputs
        .iter()
        .map(|p| InputSettings {
            pattern: p.display().to_string(),
            resolved: p.clone(),
            format,
            text: args.text.clone(),
            id: args.id.clone(),
            title: None,
            time: args.time.clone(),
            label: args.label.clone(),
            batch: None,
            filter: None,
            limit: None,
        })
        .collect();
    let opts = crate::pipeline::AssignOptions {
        model: args.model.clone(),
        inputs,
        out: args.out,
        period,
        quiet,
    };
    let outcome = crate::pipeline::assign(&opts)
        .with_context(|| format!("assigning with the model in {}", args.model.display()))?;
    println!("{}", outcome.dir.display());
    Ok(())
}
