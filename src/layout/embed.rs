//! The 2-D layout of a neighbour graph: UMAP's stochastic gradient descent with negative
//! sampling (McInnes, Healy & Melville 2018, §3.2 and appendix C).
//!
//! Each edge pulls its two ends together as often as its weight asks (an edge of the largest
//! weight every epoch); each pull comes with pushes away from a few uniformly drawn points. The
//! low-dimensional similarity is `1 / (1 + a·d^(2b))` with umap-learn's `a` and `b` for
//! `min_dist = 0.1`. (`b = 1` would save the power, but trustworthiness@10 on nips-1987-2018
//! fell from 0.903 to 0.889 with it: the heavier tail of `b < 1` keeps neighbours.)
//!
//! Fewer, stronger pushes than umap-learn's defaults: [`NEGATIVES`] drawn points per pull
//! instead of 5, each [`REPULSION`] times umap-learn's strength (its `repulsion_strength`, `γ`),
//! so the points a document is not tied to are kept off harder (its map neighbours are its true
//! neighbours more often) at half the kernel evaluations. The measured effect of each choice
//! (trustworthiness@10 against scikit-learn's LSA, and time) is in docs/benchmarks.md.
//!
//! One step differs from umap-learn in order only: a pull and its pushes are all computed
//! from the head's position before any of them moves it, then summed. That takes the chain of
//! dependent loads and stores out of the inner loop and is the same step to first order.
//! (Computing every point's step from the epoch's start positions instead, in parallel, gave
//! trustworthiness@10 0.873 on nips-1987-2018 against 0.902: the descent stays sequential.)
//!
//! The descent runs on one thread with a seeded generator, so the layout is the same at any
//! thread count (umap-learn's parallel descent is not reproducible).

use super::graph::Graph;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `a` and `b` of the kernel `1 / (1 + a·d^(2b))`: umap-learn's fit for `min_dist = 0.1`,
/// `spread = 1` (`find_ab_params`).
const A: f32 = 1.576_943;
const B: f32 = 0.895_061;
/// Largest step of one coordinate (umap-learn's gradient clip).
const CLIP: f32 = 4.0;
/// Pushes per pull (umap-learn: 5).
const NEGATIVES: f32 = 2.0;
/// Strength of a push, relative to umap-learn's default (its `repulsion_strength`, `γ`; 7.5
/// with 2 pushes is 3 times umap-learn's total push per pull).
const REPULSION: f32 = 7.5;

/// Lays out `graph` in 2-D from `init` (one point per node), `epochs` passes.
pub fn optimize(graph: &Graph, init: Vec<[f64; 2]>, epochs: usize, seed: u64) -> Vec<[f64; 2]> {
    let n = graph.n;
    if n < 2 || graph.edges.is_empty() || epochs == 0 {
        return init;
    }
    let mut y: Vec<[f32; 2]> = init.iter().map(|p| [p[0] as f32, p[1] as f32]).collect();
    let max_w = graph.edges.iter().map(|e| e.2).fold(0.0f32, f32::max);
    let edges = schedule(graph, max_w, epochs);
    let mut next: Vec<f32> = edges.iter().map(|e| e.2).collect();
    let mut next_negative: Vec<f32> = edges.iter().map(|e| e.2 / NEGATIVES).collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for epoch in 0..epochs {
        let alpha = 1.0 - epoch as f32 / epochs as f32;
        let now = epoch as f32;
        for (e, &(i, j, every)) in edges.iter().enumerate() {
            if next[e] > now {
                continue;
            }
            next[e] += every;
            let per_negative = every / NEGATIVES;
            // Truncation is the floor here: the value is clamped at 0 first.
            let pushes = ((now - next_negative[e]) / per_negative).max(0.0) as usize;
            next_negative[e] += pushes as f32 * per_negative;
            let yi = y[i];
            let pull = pull(yi, y[j]);
            let mut step = pull;
            for _ in 0..pushes {
                let k = rng.gen_range(0..n);
                if k != i {
                    let p = push(yi, y[k]);
                    step = [step[0] + p[0], step[1] + p[1]];
                }
            }
            y[i] = [yi[0] + step[0] * alpha, yi[1] + step[1] * alpha];
            y[j] = [y[j][0] - pull[0] * alpha, y[j][1] - pull[1] * alpha];
        }
    }
    y.into_iter().map(|p| [p[0] as f64, p[1] as f64]).collect()
}

/// Both directions of every edge, each with its own pushes, in head order (umap-learn's
/// symmetric matrix), as (head, tail, epochs between samples); edges too weak to be sampled
/// once in `epochs` are dropped, as there.
fn schedule(graph: &Graph, max_w: f32, epochs: usize) -> Vec<(usize, usize, f32)> {
    let mut edges: Vec<(usize, usize, f32)> = graph
        .edges
        .iter()
        .map(|&(a, b, w)| (a as usize, b as usize, max_w / w))
        .filter(|e| e.2 <= epochs as f32)
        .flat_map(|(a, b, every)| [(a, b, every), (b, a, every)])
        .collect();
    edges.sort_by_key(|e| (e.0, e.1));
    edges
}

/// A step coordinate within ±[`CLIP`].
fn clip(v: f32) -> f32 {
    v.clamp(-CLIP, CLIP)
}

/// The attraction of an edge on its head (its tail takes the opposite).
fn pull(yi: [f32; 2], yj: [f32; 2]) -> [f32; 2] {
    let (dx, dy) = (yi[0] - yj[0], yi[1] - yj[1]);
    let d2 = dx * dx + dy * dy;
    if d2 <= 0.0 {
        return [0.0, 0.0];
    }
    let pb = d2.powf(B);
    let coeff = -2.0 * A * B * pb / (d2 * (1.0 + A * pb));
    [clip(coeff * dx), clip(coeff * dy)]
}

/// The repulsion of a drawn point `yk` on `yi`.
fn push(yi: [f32; 2], yk: [f32; 2]) -> [f32; 2] {
    let (dx, dy) = (yi[0] - yk[0], yi[1] - yk[1]);
    let d2 = dx * dx + dy * dy;
    if d2 <= 0.0 {
        return [CLIP, CLIP];
    }
    let coeff = 2.0 * REPULSION * B / ((0.001 + d2) * (1.0 + A * d2.powf(B)));
    [clip(coeff * dx), clip(coeff * dy)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cliques of four, joined by nothing: laid out, they separate.
    fn two_cliques() -> Graph {
        let mut edges = Vec::new();
        for base in [0u32, 4] {
            for a in 0..4 {
                for b in a + 1..4 {
                    edges.push((base + a, base + b, 1.0));
                }
            }
        }
        Graph { n: 8, edges }
    }

    fn spread_init(n: usize) -> Vec<[f64; 2]> {
        (0..n)
            .map(|i| [(i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()])
            .collect()
    }

    #[test]
    fn edges_are_taken_both_ways_in_head_order_and_weak_ones_dropped() {
        let g = Graph {
            n: 4,
            edges: vec![(0, 1, 1.0), (0, 2, 0.5), (1, 2, 1.0), (2, 3, 0.001)],
        };
        let s = schedule(&g, 1.0, 100);
        let pairs: Vec<(usize, usize)> = s.iter().map(|e| (e.0, e.1)).collect();
        // (2, 3) is sampled less than once in 100 epochs, so neither direction is kept.
        assert_eq!(pairs, vec![(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]);
        assert_eq!(s[0].2, 1.0);
        assert_eq!(s[1].2, 2.0);
    }

    #[test]
    fn cliques_end_apart_and_the_run_repeats_exactly() {
        let g = two_cliques();
        let y = optimize(&g, spread_init(8), 200, 7);
        let dist =
            |a: usize, b: usize| ((y[a][0] - y[b][0]).powi(2) + (y[a][1] - y[b][1]).powi(2)).sqrt();
        let within = (dist(0, 1) + dist(4, 5)) / 2.0;
        let across = (dist(0, 4) + dist(1, 5)) / 2.0;
        assert!(across > 2.0 * within, "within {within}, across {across}");
        assert_eq!(y, optimize(&g, spread_init(8), 200, 7));
    }
}
