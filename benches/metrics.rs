//! Times `evaluate::metrics::external_scores` on 1,000,000 items: the figure a unit test used to
//! assert (under one second), kept here as a measurement instead. Std only, no harness:
//!
//! ```text
//! cargo bench --bench metrics
//! ```
//!
//! Each case runs once to warm up, then [`RUNS`] times; the median, fastest and slowest run are
//! printed.

use std::hint::black_box;
use std::time::{Duration, Instant};
use topicmap::evaluate::metrics::external_scores;

/// Timed runs per case.
const RUNS: usize = 11;

/// Items per labeling.
const N: u32 = 1_000_000;

fn main() {
    // The unit test's labeling: 10 classes, 20 clusters each inside one class (dense table).
    let truth: Vec<u32> = (0..N).map(|i| i % 10).collect();
    let pred: Vec<u32> = (0..N).map(|i| i % 20).collect();
    report("1M items, 10 classes x 20 clusters", &truth, &pred);
    // Scattered large label values and many cells: the sorted (sparse) paths.
    let truth: Vec<u32> = (0..N).map(|i| scatter(i % 1000)).collect();
    let pred: Vec<u32> = (0..N)
        .map(|i| scatter(i.wrapping_mul(7919) % 5000))
        .collect();
    report(
        "1M items, 1000 classes x 5000 clusters, large ids",
        &truth,
        &pred,
    );
}

/// Times `external_scores(truth, pred)` and prints one line.
fn report(case: &str, truth: &[u32], pred: &[u32]) {
    black_box(external_scores(truth, pred).expect("valid labels"));
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(external_scores(black_box(truth), black_box(pred)).expect("valid labels"));
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "external_scores, {case}: median {:.1} ms (fastest {:.1} ms, slowest {:.1} ms, {RUNS} runs)",
        ms(times[RUNS / 2]),
        ms(times[0]),
        ms(times[RUNS - 1]),
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A label id spread over the u32 range (the same small id always gives the same value).
fn scatter(x: u32) -> u32 {
    x.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995
}
