//! Layout: where documents and topics sit on the 2-D document map.
//!
//! The map is a neighbour embedding of the reduced (LSA) document vectors, laid out as UMAP
//! does it: each document's nearest neighbours by cosine ([`knn`]), the fuzzy graph they make
//! ([`graph`]) and a seeded descent that keeps neighbours together in 2-D ([`embed`]). A linear
//! projection would keep distances but smears the topics over one cloud; the embedding keeps
//! who is next to whom, which is what a reader of a map looks for.
//!
//! * At most `sample` documents (seeded) are embedded; the rest, and every document placed
//!   later (`assign`, a streamed chunk), are put among their most similar embedded documents of
//!   the same topic ([`landmarks`]). The chart's note says which.
//! * The descent starts from the linear projection on the topic centroids' main axes
//!   ([`linear`]), so topics that are alike start, and mostly end, near each other.
//! * Too few documents to embed, or a layout that collapsed to a point, fall back to that
//!   linear projection, with a note saying why.
//! * Each topic's label anchor is the medoid of its documents on the map: a point of the
//!   topic's largest region, not the mean of two islands.

pub mod embed;
pub mod graph;
pub mod knn;
pub mod landmarks;
pub mod linear;

use crate::norm::unit_rows;
use crate::progress::thousands;
use crate::sample::even_indices;
pub use landmarks::{Landmarks, SavedLandmarks};
use ndarray::{Array2, ArrayView2};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Passes of the descent. umap-learn takes 200 for more than 10,000 points and 500 below; with
/// the stronger pushes of [`embed`] 100 keep as many neighbours (docs/benchmarks.md).
const EPOCHS: usize = 100;

/// Landmarks the model keeps, for placing documents later.
pub const MODEL_LANDMARKS: usize = 5_000;

/// The longer side of the frame map coordinates are written in (see `to_frame`).
const FRAME: f32 = 100.0;

/// How the map is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MapMethod {
    /// The neighbour embedding (the default).
    Umap,
    /// The projection on the topic centroids' two main axes.
    Linear,
}

/// The map's parameters, a builder (defaults in [`MapParams::new`], rules in
/// [`MapParams::check`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MapParams {
    method: MapMethod,
    neighbours: usize,
    sample: usize,
    reach: usize,
    /// Whether the documents outside the sample are placed too (a streaming run's fit needs
    /// only the sample's layout: every document is placed later, chunk by chunk).
    #[serde(skip)]
    place_rest: bool,
}

/// Checked map parameters; serialized into `run.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct MapValidParams(MapParams);

impl MapValidParams {
    /// The same map, laid out for the embedded sample only: the other documents get no place
    /// (NaN). A streaming run fits on a sample and places every document later.
    pub fn sample_only(mut self) -> Self {
        self.0.place_rest = false;
        self
    }
}

/// A broken rule of [`MapParams`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MapParamsError {
    #[error("map.neighbours = {0} must be within 2 ..= 100")]
    Neighbours(usize),
    #[error("map.sample = {0} must be at least 100 (documents embedded; the rest are placed)")]
    Sample(usize),
}

impl Default for MapParams {
    fn default() -> Self {
        Self::new()
    }
}

impl MapParams {
    /// Defaults: UMAP, 15 neighbours, at most 10,000 documents embedded, neighbours searched in
    /// a document's own topic and its 2 nearest others.
    pub fn new() -> Self {
        MapParams {
            method: MapMethod::Umap,
            neighbours: 15,
            sample: 10_000,
            reach: 2,
            place_rest: true,
        }
    }
    /// `umap` or `linear`.
    pub fn method(mut self, method: MapMethod) -> Self {
        self.method = method;
        self
    }
    /// Neighbours per document in the graph (UMAP's `n_neighbors`).
    pub fn neighbours(mut self, k: usize) -> Self {
        self.neighbours = k;
        self
    }
    /// Most documents embedded; the others are placed among them.
    pub fn sample(mut self, n: usize) -> Self {
        self.sample = n;
        self
    }
    pub fn check(self) -> Result<MapValidParams, MapParamsError> {
        if !(2..=100).contains(&self.neighbours) {
            return Err(MapParamsError::Neighbours(self.neighbours));
        }
        if self.sample < 100 {
            return Err(MapParamsError::Sample(self.sample));
        }
        Ok(MapValidParams(self))
    }
}

/// Documents and topic label anchors in 2-D, with how they were laid out.
#[derive(Debug, Clone, PartialEq)]
pub struct Map {
    pub documents: Vec<[f32; 2]>,
    /// Each topic's label anchor (by topic index; NaN for a topic without documents).
    pub centres: Vec<[f32; 2]>,
    pub method: MapMethod,
    /// How the map was made, for the chart's note and run.json.
    pub note: String,
    /// The embedded documents new ones are placed among (none for a linear map).
    pub landmarks: Option<Landmarks>,
    /// Each point's topic index when the points are not the run's documents (a report from
    /// sums draws the model's landmarks, [`landmarks_only`]); `None`: the points are the
    /// documents, in the clustering's topics.
    pub topics: Option<Vec<usize>>,
}

/// The map of a report built from sums, which has no documents to draw: the model's landmarks
/// (a seeded sample of the documents it was fitted on, laid out by the fit), each in its
/// reported topic (`reported[t]` for the model's topic `t`, of `k` reported topics). A landmark
/// whose topic the model does not have is left out.
pub fn landmarks_only(saved: &SavedLandmarks, reported: &[usize], k: usize) -> Map {
    let (documents, topics): (Vec<[f32; 2]>, Vec<usize>) = saved
        .coords
        .iter()
        .zip(&saved.topics)
        .filter_map(|(&p, &t)| reported.get(t as usize).map(|&r| (p, r)))
        .filter(|&(_, r)| r < k)
        .unzip();
    Map {
        centres: anchors(&documents, &topics, k),
        note: format!(
            "UMAP of the model's {} landmarks, a seeded sample of the documents it was fitted on; every document's own place is in the documents table (map_x, map_y).",
            thousands(documents.len())
        ),
        documents,
        method: MapMethod::Umap,
        landmarks: None,
        topics: Some(topics),
    }
}

/// The clustering the map is laid out for.
#[derive(Debug, Clone, Copy)]
pub struct Topics<'a> {
    pub assignments: &'a [usize],
    pub centroids: ArrayView2<'a, f32>,
    pub sizes: &'a [usize],
}

/// A map in the making, after [`MapValidParams::neighbours`]: the sample with its neighbour
/// graph, or why the map is the linear projection instead.
pub type Graphed = Result<SampleGraph, String>;

/// A map in the making, after [`MapValidParams::descend`]: the sample laid out, or why the map
/// is the linear projection instead.
pub type Embedded = Result<SampleLayout, String>;

/// The embedded sample and its neighbour graph, with the descent's start.
#[derive(Debug)]
pub struct SampleGraph {
    sample: Vec<usize>,
    /// The sample's rows, at unit length.
    sampled: Array2<f32>,
    graph: graph::Graph,
    init: Vec<[f64; 2]>,
}

impl SampleGraph {
    /// Edges of the neighbour graph (each pair once).
    pub fn edges(&self) -> usize {
        self.graph.edges.len()
    }
}

/// The embedded sample, laid out.
#[derive(Debug)]
pub struct SampleLayout {
    sample: Vec<usize>,
    sampled: Array2<f32>,
    coords: Vec<[f32; 2]>,
}

impl MapValidParams {
    /// The map of `vectors` (one row per document), seeded by `seed`: the three steps below in
    /// a row.
    pub fn fit(&self, vectors: ArrayView2<f32>, topics: Topics<'_>, seed: u64) -> Map {
        let graphed = self.neighbours(vectors, topics, seed);
        self.finish(self.descend(graphed, seed), vectors, topics)
    }

    /// Step 1, on every core: the seeded sample and its neighbour graph (or why the map is
    /// linear: asked for, or too few documents).
    pub fn neighbours(&self, vectors: ArrayView2<f32>, topics: Topics<'_>, seed: u64) -> Graphed {
        let n = vectors.nrows();
        let k = self.0.neighbours;
        if self.0.method == MapMethod::Linear {
            return Err("Linear projection on the topic centroids' two main axes.".into());
        }
        if n <= k {
            return Err(format!(
                "Linear projection on the topic centroids' two main axes: {n} documents are too few to embed with {k} neighbours."
            ));
        }
        let sample = sample_rows(n, self.0.sample, seed);
        let mut sampled = crate::sample::rows(vectors, &sample);
        unit_rows(sampled.view_mut());
        let topic_of: Vec<usize> = sample.iter().map(|&i| topics.assignments[i]).collect();
        let nb = knn::neighbours(sampled.view(), &topic_of, topics.centroids, k, self.0.reach);
        Ok(SampleGraph {
            graph: graph::fuzzy_graph(&nb, sample.len()),
            init: start(sampled.view(), topics, seed),
            sample,
            sampled,
        })
    }

    /// Step 2, on one core (a thread of its own can take it while other stages run): the
    /// descent that lays the sample out. A layout that collapsed to a point gives the reason
    /// for a linear map instead.
    pub fn descend(&self, graphed: Graphed, seed: u64) -> Embedded {
        let g = graphed?;
        let mut coords: Vec<[f32; 2]> = embed::optimize(&g.graph, g.init, EPOCHS, seed)
            .into_iter()
            .map(|p| [p[0] as f32, p[1] as f32])
            .collect();
        if degenerate(&coords) {
            return Err("Linear projection on the topic centroids' two main axes: the embedding collapsed to one point.".into());
        }
        to_frame(&mut coords);
        Ok(SampleLayout {
            sample: g.sample,
            sampled: g.sampled,
            coords,
        })
    }

    /// Step 3, on every core: every other document placed among the embedded ones (unless
    /// [`MapValidParams::sample_only`]), and the topics' label anchors.
    pub fn finish(&self, embedded: Embedded, vectors: ArrayView2<f32>, topics: Topics<'_>) -> Map {
        let e = match embedded {
            Ok(e) => e,
            Err(why) => return linear_map(vectors, topics, why),
        };
        let (n, k) = (vectors.nrows(), self.0.neighbours);
        let landmarks = Landmarks {
            topics: e.sample.iter().map(|&i| topics.assignments[i]).collect(),
            vectors: e.sampled,
            coords: e.coords,
            k,
        };
        let sample = e.sample;
        let documents = if self.0.place_rest {
            place_rest(vectors, &sample, &landmarks, topics.assignments)
        } else {
            let mut out = vec![[f32::NAN; 2]; n];
            for (j, &i) in sample.iter().enumerate() {
                out[i] = landmarks.coords[j];
            }
            out
        };
        let note = if sample.len() == n {
            format!("UMAP of all {} documents ({k} neighbours).", thousands(n))
        } else {
            format!(
                "UMAP of a seeded sample of {} of {} documents ({k} neighbours); the other {} are placed among their most similar embedded documents.",
                thousands(sample.len()),
                thousands(n),
                thousands(n - sample.len())
            )
        };
        Map {
            centres: anchors(&documents, topics.assignments, topics.centroids.nrows()),
            documents,
            method: MapMethod::Umap,
            note,
            landmarks: Some(landmarks),
            topics: None,
        }
    }
}

/// The map as the linear projection, with `note` saying why.
fn linear_map(vectors: ArrayView2<f32>, topics: Topics<'_>, note: String) -> Map {
    let mut p = linear::project(vectors, topics.centroids, topics.sizes);
    to_frame(&mut p.documents);
    Map {
        centres: anchors(&p.documents, topics.assignments, topics.centroids.nrows()),
        documents: p.documents,
        method: MapMethod::Linear,
        note,
        landmarks: None,
        topics: None,
    }
}

/// `cap` of the rows `0..n` drawn with the seed, in row order (all of them when `n <= cap`).
fn sample_rows(n: usize, cap: usize, seed: u64) -> Vec<usize> {
    if n <= cap {
        return (0..n).collect();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6d61_705f_7361_6d70);
    let mut rows = rand::seq::index::sample(&mut rng, n, cap).into_vec();
    rows.sort_unstable();
    rows
}

/// The descent's start: the linear projection of the sample, scaled to 0..10 on each axis (as
/// umap-learn scales its spectral start), with a little seeded noise to part equal documents.
fn start(x: ArrayView2<f32>, topics: Topics<'_>, seed: u64) -> Vec<[f64; 2]> {
    use rand::Rng;
    let p = linear::project(x, topics.centroids, topics.sizes).documents;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6d61_705f_696e_6974);
    let range = |axis: usize| {
        let lo = p
            .iter()
            .map(|q| q[axis] as f64)
            .fold(f64::INFINITY, f64::min);
        let hi = p
            .iter()
            .map(|q| q[axis] as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        (lo, (hi - lo).max(1e-12))
    };
    let (rx, ry) = (range(0), range(1));
    p.iter()
        .map(|q| {
            [
                (q[0] as f64 - rx.0) / rx.1 * 10.0 + rng.gen_range(-1e-3..1e-3),
                (q[1] as f64 - ry.0) / ry.1 * 10.0 + rng.gen_range(-1e-3..1e-3),
            ]
        })
        .collect()
}

/// True when every point is (nearly) the same, or a coordinate is not finite.
fn degenerate(points: &[[f32; 2]]) -> bool {
    let bad = points
        .iter()
        .any(|p| !(p[0].is_finite() && p[1].is_finite()));
    let span = |axis: usize| {
        let lo = points.iter().map(|p| p[axis]).fold(f32::INFINITY, f32::min);
        let hi = points
            .iter()
            .map(|p| p[axis])
            .fold(f32::NEG_INFINITY, f32::max);
        hi - lo
    };
    bad || (points.len() > 1 && span(0).max(span(1)) < 1e-6)
}

/// Moves and scales `points` (uniformly, so distances keep their ratios) into the frame every
/// map is written in: the lowest x and y are 0 and the longer side is [`FRAME`] long. So no
/// coordinate is negative: a spreadsheet would take a cell such as `-0.23` for a formula's
/// start, and a document placed among landmarks (their weighted mean) stays in the frame too.
/// Points that are not finite (not placed) are left as they are.
fn to_frame(points: &mut [[f32; 2]]) {
    let finite = || {
        points
            .iter()
            .filter(|p| p[0].is_finite() && p[1].is_finite())
    };
    let lo = |axis: usize| finite().map(|p| p[axis]).fold(f32::INFINITY, f32::min);
    let hi = |axis: usize| finite().map(|p| p[axis]).fold(f32::NEG_INFINITY, f32::max);
    let (x0, y0) = (lo(0), lo(1));
    if !x0.is_finite() {
        return;
    }
    let side = (hi(0) - x0).max(hi(1) - y0);
    let scale = if side > 0.0 { FRAME / side } else { 1.0 };
    for p in points
        .iter_mut()
        .filter(|p| p[0].is_finite() && p[1].is_finite())
    {
        *p = [(p[0] - x0) * scale, (p[1] - y0) * scale];
    }
}

/// Every document's place: the embedded ones where the embedding put them, the others among
/// the landmarks of their topic.
fn place_rest(
    vectors: ArrayView2<f32>,
    sample: &[usize],
    landmarks: &Landmarks,
    assignments: &[usize],
) -> Vec<[f32; 2]> {
    let n = vectors.nrows();
    let mut out = vec![[0.0f32; 2]; n];
    let mut embedded = vec![false; n];
    for (j, &i) in sample.iter().enumerate() {
        out[i] = landmarks.coords[j];
        embedded[i] = true;
    }
    let rest: Vec<usize> = (0..n).filter(|&i| !embedded[i]).collect();
    if rest.is_empty() {
        return out;
    }
    let topic_of: Vec<usize> = rest.iter().map(|&i| assignments[i]).collect();
    let placed = landmarks.place_rows(vectors, &rest, &topic_of);
    for (&i, p) in rest.iter().zip(placed) {
        out[i] = p;
    }
    out
}

/// Points of a topic the anchor is chosen among (evenly spread), and compared with.
const ANCHOR_POINTS: usize = 400;

/// Each topic's label anchor: of (up to [`ANCHOR_POINTS`] of) its points, the one nearest to
/// all the others in sum (the medoid).
pub fn anchors(points: &[[f32; 2]], topic_of: &[usize], topics: usize) -> Vec<[f32; 2]> {
    knn::members(topic_of, topics)
        .iter()
        .map(|rows| {
            let m = rows.len();
            let pick: Vec<[f32; 2]> = even_indices(m, ANCHOR_POINTS)
                .map(|j| points[rows[j]])
                .filter(|p| p[0].is_finite() && p[1].is_finite())
                .collect();
            let cost = |a: &[f32; 2]| -> f64 {
                pick.iter()
                    .map(|b| (((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)) as f64).sqrt())
                    .sum()
            };
            pick.iter()
                .min_by(|a, b| cost(a).total_cmp(&cost(b)))
                .copied()
                .unwrap_or([f32::NAN; 2])
        })
        .collect()
}

#[cfg(test)]
mod tests;
