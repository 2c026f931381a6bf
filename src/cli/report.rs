//! `topicmap report PIPELINE.toml --model RUN_DIR --aggregates DIR [--out DIR]`: the report of
//! documents assigned elsewhere (Spark), from their sums.

use super::ReportArgs;
use anyhow::Context;

pub fn report(args: ReportArgs, quiet: bool) -> anyhow::Result<()> {
    let overrides = super::overrides(&args.set)?;
    let settings = crate::config::load(&args.pipeline, &overrides)?;
    let opts = crate::pipeline::SumsReportOptions {
        model: args.model.clone(),
        aggregates: args.aggregates.clone(),
        run: crate::pipeline::RunOptions {
            out: args.out,
            quiet,
        },
    };
    let outcome = crate::pipeline::report_from_sums(&settings, &opts).with_context(|| {
        format!(
            "reporting the aggregates in {} with the model in {}",
            args.aggregates.display(),
            args.model.display()
        )
    })?;
    super::print_line(format_args!("{}", outcome.dir.display()))?;
    Ok(())
}
