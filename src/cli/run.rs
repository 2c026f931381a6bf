//! `topicmap run PIPELINE.toml [--out DIR] [--set KEY=VALUE]...`

use super::RunArgs;
use anyhow::Context;

pub fn run(args: RunArgs, quiet: bool) -> anyhow::Result<()> {
    let overrides = super::overrides(&args.set)?;
    let settings = crate::config::load(&args.pipeline, &overrides)?;
    // The heap starts tuned for a corpus held whole (`src/main.rs`); a streaming run keeps
    // what it frees for its next chunk (see `crate::heap`).
    if settings.cluster.fit_sample().is_some() {
        crate::heap::tune(crate::heap::Workload::Streaming);
    }
    let history = args.out.is_none();
    let opts = crate::pipeline::RunOptions {
        out: args.out,
        quiet,
    };
    let outcome = crate::pipeline::run(&settings, &opts)
        .with_context(|| format!("running {}", args.pipeline.display()))?;
    if let (Some(keep), true) = (args.keep, history) {
        for old in crate::staging::prune(&settings.output.dir, keep)? {
            crate::progress::info(quiet, &format!("removed old run {}", old.display()));
        }
    }
    // The report's folder is the run's one piece of data: it goes to stdout for scripts.
    super::print_line(format_args!("{}", outcome.dir.display()))?;
    Ok(())
}
