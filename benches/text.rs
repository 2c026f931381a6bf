//! Times the per-word work every document goes through, on one core: the markup cleaner, the
//! word segmentation alone, and the whole tokenizer (segmentation, word table, analysis chain),
//! on the texts of a pipeline's inputs. Std only, no harness:
//!
//! ```text
//! cargo bench --bench text -- pipelines/arxiv-scale.toml
//! ```
//!
//! The inputs are read whole (the 1M scale corpus takes about 1.3 GB). The tokenizer runs on
//! blocks of 110,000 texts, about what a streaming run's 128 MB chunk holds, with the pipeline's
//! tokenizer settings (`language = "auto"` is taken as English). Each step runs once to warm
//! up, then [`RUNS`] times; the median, fastest and slowest run are printed.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};
use topicmap::clean::Cleaner;
use topicmap::tokenize::{Analyzer, TokenizedCorpus, WordSegmenter};

/// Timed runs per step.
const RUNS: usize = 3;

/// Texts per tokenizer call.
const BLOCK: usize = 110_000;

/// Ends the bench as the CLI ends a command: the error and each cause on stderr, exit code 2.
/// When an input fails, also where the pipeline file says how to make it, since the scale
/// corpora are generated.
fn fail(pipeline: &str, err: impl Into<anyhow::Error>) -> ! {
    let err = err.into();
    let code = topicmap::cli::report_error(&err, topicmap::cli::ExitCodes::Simple);
    if topicmap::cli::ErrorClass::of(&err) == topicmap::cli::ErrorClass::Data {
        eprintln!("  (a generated input is made as the header of {pipeline} shows)");
    }
    std::process::exit(code.into())
}

fn main() {
    let pipeline = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "pipelines/arxiv-scale.toml".into());
    let settings =
        topicmap::config::load(Path::new(&pipeline), &[]).unwrap_or_else(|e| fail(&pipeline, e));
    let corpus = topicmap::ingest::ingest(&settings.inputs, settings.output.on_bad_document)
        .unwrap_or_else(|e| fail(&pipeline, e));
    let texts: Vec<&str> = corpus.documents.iter().map(|d| d.text.as_str()).collect();
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    println!("{pipeline}: {} texts, {bytes} bytes", texts.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    pool.install(|| {
        let cleaner = Cleaner::new();
        let mut out = String::new();
        let cleaned: Vec<String> = texts
            .iter()
            .map(|t| {
                cleaner.clean_into(t, &mut out);
                out.clone()
            })
            .collect();
        report("markup cleaner", || {
            texts
                .iter()
                .map(|t| {
                    cleaner.clean_into(t, &mut out);
                    out.len()
                })
                .sum::<usize>()
        });
        let cleaned: Vec<&str> = cleaned.iter().map(|s| s.as_str()).collect();
        report("word segmentation", || {
            cleaned
                .iter()
                .map(|t| WordSegmenter.words(t).count())
                .sum::<usize>()
        });
        let analyzer = Analyzer::new(&settings.tokenize);
        report("tokenizer", || {
            cleaned
                .chunks(BLOCK)
                .map(|b| TokenizedCorpus::build_texts(b, &analyzer).n_docs())
                .sum::<usize>()
        });
    });
}

/// Times `f` and prints one line.
fn report(step: &str, mut f: impl FnMut() -> usize) {
    let result = black_box(f());
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            assert_eq!(black_box(f()), result, "{step}: the same result every run");
            t.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{step:<20} median {:>7.3} s   fastest {:.3} s   slowest {:.3} s   ({result})",
        times[RUNS / 2].as_secs_f64(),
        times[0].as_secs_f64(),
        times[RUNS - 1].as_secs_f64(),
    );
}
