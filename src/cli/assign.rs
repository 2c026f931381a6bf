//! `topicmap assign --model RUN_DIR INPUT... [--out DIR]`: new documents into saved topics;
//! `--in arrow --out arrow` pipes them through stdin and stdout (an engine's partitions).

use super::AssignArgs;
use crate::ingest::{InputFormat, InputSpec, OnBadDocument, PeriodUnit};
use crate::pipeline::{AssignFolder, AssignOutput, StreamInput};
use crate::tables::OutputFormat;
use anyhow::{bail, Context};
use std::path::Path;

pub fn assign(args: AssignArgs, quiet: bool) -> anyhow::Result<()> {
    let format = match args.format.as_deref() {
        None => None,
        Some(f) => match InputFormat::from_name(f) {
            Some(f) => Some(f),
            None => bail!("--format {f:?} must be {}", InputFormat::NAMES),
        },
    };
    let (period, on_bad) = policies(&args)?;
    let spec = |p: &Path| InputSpec {
        format,
        text: args.text.clone(),
        id: args.id.clone(),
        time: args.time.clone(),
        label: args.label.clone(),
        ..InputSpec::file(p)
    };
    let stdin = match args.stdin.as_deref() {
        None => None,
        Some("arrow") => Some(StreamInput {
            spec: spec(Path::new(&args.source_name)),
            name: args.source_name.clone(),
            source_column: args.source_column.clone(),
            row_column: args.row_column.clone(),
        }),
        Some(other) => bail!("--in {other:?}: the one stdin format is arrow"),
    };
    let to_stdout = args.out.as_deref() == Some(Path::new("arrow"));
    if args.emit_terms && !to_stdout {
        bail!("--emit-terms goes with --out arrow");
    }
    if to_stdout && args.aggregates {
        bail!("--aggregates writes into a folder: give --out DIR (an engine sums the --emit-terms rows itself)");
    }
    let out = if to_stdout {
        AssignOutput::Arrow {
            emit_terms: args.emit_terms,
        }
    } else {
        let mut formats = Vec::new();
        for t in &args.tables {
            match OutputFormat::from_name(t) {
                Some(f @ (OutputFormat::Csv | OutputFormat::Parquet)) => formats.push(f),
                _ => bail!("--tables {t:?}: each must be csv or parquet"),
            }
        }
        AssignOutput::Dir(AssignFolder {
            dir: args.out.clone(),
            formats,
            aggregates: args.aggregates.then_some(args.representatives),
        })
    };
    let opts = crate::pipeline::AssignOptions {
        model: args.model.clone(),
        inputs: args.inputs.iter().map(|p| spec(p)).collect(),
        stdin,
        out,
        period,
        on_bad,
        from_model: Vec::new(),
        quiet,
    };
    let outcome = crate::pipeline::assign(&opts)
        .with_context(|| format!("assigning with the model in {}", args.model.display()))?;
    if !to_stdout {
        super::print_line(format_args!("{}", outcome.dir.display()))?;
    }
    Ok(())
}

/// `--period` and `--on-bad-document`, when given (else the model's, see
/// `pipeline::assign_defaults`).
fn policies(args: &AssignArgs) -> anyhow::Result<(Option<PeriodUnit>, Option<OnBadDocument>)> {
    let period = match args.period.as_deref() {
        None => None,
        Some(p) => match PeriodUnit::from_name(p) {
            Some(p) => Some(p),
            None => bail!("--period {p:?} must be year, quarter or month"),
        },
    };
    let on_bad = match args.on_bad_document.as_deref() {
        None => None,
        Some(m) => match OnBadDocument::from_name(m) {
            Some(m) => Some(m),
            None => bail!("--on-bad-document {m:?} must be skip or fail"),
        },
    };
    Ok((period, on_bad))
}
