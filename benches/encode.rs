//! Times the sentence transformer on a pipeline's texts, f32 and int8 side by side: the two
//! precisions take turns (f32, int8, f32, int8, ...), so a noisy minute slows both. Std only,
//! no harness:
//!
//! ```text
//! cargo bench --bench encode -- PIPELINE.toml [--model all-MiniLM-L6-v2] [--max-length 128] [--runs 5]
//! ```
//!
//! The model is a known name (fetched with `topicmap models fetch NAME`) or a folder. Each run
//! encodes every text on all cores, as `topicmap run` does; the first run of each precision
//! warms up and is not counted. It prints each precision's median texts per second, and the
//! int8/f32 ratio of the medians and of each pair of runs. On a CPU without VNNI, int8 is
//! f32 and the bench says so. The allocator and candle's threads are set as `src/main.rs`
//! sets them.

use std::path::Path;
use std::time::Instant;
use topicmap::embed::encoder::{Encoder, SentenceEncoder};
use topicmap::embed::folder::ModelFolder;
use topicmap::embed::registry::ModelRef;
use topicmap::embed::Precision;

/// The binary's allocator, tuned as the binary tunes it (`src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    topicmap::heap::tune(topicmap::heap::Workload::Whole);
    // SAFETY: no other thread exists yet.
    unsafe { topicmap::embed::encoder::one_candle_thread_per_batch() };
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let pipeline = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with('-') && (*i == 0 || !args[i - 1].starts_with("--")))
        .map(|(_, a)| a.clone())
        .unwrap_or_else(|| fail("give a pipeline file: cargo bench --bench encode -- P.toml"));
    let model = option("--model").unwrap_or_else(|| "all-MiniLM-L6-v2".into());
    let max_length: usize =
        option("--max-length").map_or(topicmap::embed::DEFAULT_MAX_LENGTH, |v| {
            v.parse()
                .unwrap_or_else(|_| fail("--max-length takes a number"))
        });
    let runs: usize = option("--runs").map_or(5, |v| {
        v.parse().unwrap_or_else(|_| fail("--runs takes a number"))
    });

    let settings = topicmap::config::load(Path::new(&pipeline), &[]).unwrap_or_else(|e| fail(e));
    let corpus = topicmap::ingest::ingest(&settings.inputs, settings.output.on_bad_document)
        .unwrap_or_else(|e| fail(e));
    let texts: Vec<&str> = corpus.documents.iter().map(|d| d.text.as_str()).collect();
    let dir = ModelRef::parse(&model, Path::new(".")).unwrap_or_else(|e| fail(e));
    let mut folder = ModelFolder::open(dir.dir()).unwrap_or_else(|e| fail(e));
    folder.max_length = folder.max_length.min(max_length);
    let encoders: Vec<(Precision, Encoder)> = [Precision::F32, Precision::Int8]
        .into_iter()
        .map(|p| {
            folder.precision = p.on_this_cpu();
            (
                p,
                Encoder::Transformer(SentenceEncoder::load(&folder).unwrap_or_else(|e| fail(e))),
            )
        })
        .collect();
    let int8 = topicmap::embed::int8::Kernel::best();
    println!(
        "{pipeline}: {} texts, {model}, {} tokens at most, {} threads; int8 on {}",
        texts.len(),
        folder.max_length,
        rayon::current_num_threads(),
        int8.map_or("no VNNI kernel (f32 runs)", |k| k.name()),
    );
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); encoders.len()];
    for run in 0..=runs {
        for (e, (_, encoder)) in encoders.iter().enumerate() {
            let t = Instant::now();
            let v = encoder
                .encode(&texts, topicmap::embed::DEFAULT_BATCH, |_| {})
                .unwrap_or_else(|e| fail(e));
            let rate = texts.len() as f64 / t.elapsed().as_secs_f64();
            assert_eq!(v.nrows(), texts.len());
            if run > 0 {
                rates[e].push(rate);
            }
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for ((p, _), r) in encoders.iter().zip(&rates) {
        let (lo, hi) = r
            .iter()
            .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        println!(
            "{:<5} median {:>8.1} texts/s   slowest {lo:.1}   fastest {hi:.1}   ({} runs)",
            p.name(),
            median(r),
            r.len()
        );
    }
    let pairs: Vec<f64> = rates[1].iter().zip(&rates[0]).map(|(a, b)| a / b).collect();
    println!(
        "int8/f32: {:.2}x (medians), {:.2}x (median of each pair's ratio)",
        median(&rates[1]) / median(&rates[0]),
        median(&pairs)
    );
}

/// Ends the bench with the error on stderr.
fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2)
}
