//! `topicmap assign --model RUN_DIR INPUT... [--out DIR]`: new documents into saved topics.

use super::AssignArgs;
use crate::ingest::{InputFormat, InputSpec, PeriodUnit};
use anyhow::{bail, Context};

pub fn assign(args: AssignArgs, quiet: bool) -> anyhow::Result<()> {
    let format = match args.format.as_deref() {
        None => None,
        Some(f) => match InputFormat::from_name(f) {
            Some(f) => Some(f),
            None => bail!("--format {f:?} must be {}", InputFormat::NAMES),
        },
    };
    let Some(period) = PeriodUnit::from_name(&args.period) else {
        bail!("--period {:?} must be year, quarter or month", args.period)
    };
    let inputs = args
        .inputs
        .iter()
        .map(|p| InputSpec {
            format,
            text: args.text.clone(),
            id: args.id.clone(),
            time: args.time.clone(),
            label: args.label.clone(),
            ..InputSpec::file(p)
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
    super::print_line(format_args!("{}", outcome.dir.display()))?;
    Ok(())
}
