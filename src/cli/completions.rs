//! `topicmap completions SHELL`: a completion script for the shell, on stdout (clap_complete).

use super::{Args, CompletionsArgs};
use clap::CommandFactory;

pub fn completions(args: CompletionsArgs) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Args::command(), "topicmap", &mut script);
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}
