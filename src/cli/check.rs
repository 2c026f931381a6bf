//! `topicmap check PIPELINE.toml`: validate without clustering.

use super::CheckArgs;
use anyhow::Context;

pub fn check(args: CheckArgs, quiet: bool) -> anyhow::Result<()> {
    let overrides = super::overrides(&args.set)?;
    let settings = crate::config::load(&args.pipeline, &overrides)?;
    let corpus = crate::pipeline::check(&settings, quiet)
        .with_context(|| format!("checking {}", args.pipeline.display()))?;
    for s in &corpus.sources {
        super::print_line(format_args!(
            "{}\t{}\t{} documents",
            s.location.display(),
            s.format,
            s.documents
        ))?;
    }
    let texts: Vec<&str> = corpus.documents.iter().map(|d| d.text.as_str()).collect();
    let seed = crate::pipeline::DETECTION_SEED;
    let detected = crate::tokenize::languages::detect_sample(&texts, seed);
    super::print_line(format_args!(
        "language: {} (tokenize.language); detected: {}",
        settings.tokenize.language(),
        detected.map_or("none (too little text)".into(), |d| d.to_string())
    ))?;
    super::print_line(format_args!(
        "ok: {} documents from {} files ({} skipped)",
        corpus.len(),
        corpus.sources.len(),
        corpus.skipped.len()
    ))?;
    Ok(())
}
