//! k-means with linfa-clustering, seeded and repeatable.
//!
//! Up to `minibatch_above` rows, each of `runs` restarts starts from greedy k-means++ centroids
//! (see [`super::seeding`]; scikit-learn's seeding, better than linfa's plain k-means++) and linfa
//! runs Lloyd's iterations from them. Each restart runs [`SCREEN_ITER`] passes, and the one with
//! the lowest inertia then runs on to convergence (a lone restart runs to convergence at once).
//! Above that, linfa's mini-batch k-means (`fit_with`) runs with its own k-means++ on the first
//! batch, and when asked ([`KMeansParams::polish`]) Lloyd passes of our own ([`super::polish`],
//! with Elkan's bounds) carry its centroids towards a local optimum. Both
//! draw from one seeded Xoshiro256Plus generator; linfa's default seeding, k-means||, samples in
//! parallel with per-thread seeds, so results would depend on the thread count. Two facts of
//! linfa 0.8.1 are handled here: `cluster_count()` reflects the last run rather than the best, so
//! sizes come from `predict`; and `inertia()` is a mean, so the sklearn-style sum is computed from
//! the distances. Topics are renumbered by size (topic 0 is the largest), and a cluster that ends
//! up empty is dropped, so every topic id that is reported has documents.

use linfa::prelude::*;
use linfa_clustering::{IncrKMeansError, KMeans, KMeansInit};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;
use rayon::prelude::*;

use super::distance::LaneL2;
use super::polish::polish;
use super::{refine, seeding};
use crate::vectorize::CsrMatrix;

/// The modified z-score below which a document is an outlier of its topic (Iglewicz and
/// Hoaglin's 3.5; see [`Clustering::outliers`]).
pub const OUTLIER_Z: f64 = 3.5;

/// Lloyd passes each restart runs before the best one is chosen and run to convergence.
pub const SCREEN_ITER: u64 = 20;

/// Polished mini-batch centroids (see [`KMeansParams::polish`]): Lloyd passes at most, over an
/// even sample of at most this many rows, stopping once a pass moves at most one row in
/// `POLISH_SETTLED` to another topic.
pub const POLISH_PASSES: usize = 100;
pub const POLISH_ROWS: usize = 100_000;
pub const POLISH_SETTLED: usize = 1000;

/// k-means parameters. Build with [`KMeansParams::new`], validate with [`KMeansParams::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansParams {
    k: usize,
    seed: u64,
    runs: usize,
    max_iter: u64,
    tolerance: f64,
    minibatch_above: usize,
    polish: bool,
}

/// Checked parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansValidParams(KMeansParams);

/// Rule violations and fitting failures. The messages name the pipeline key to change.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cluster.k cannot be 0: it must be at least 1")]
    ZeroK,
    #[error("cluster.k = {k} is larger than the number of documents ({docs}): lower cluster.k")]
    TooLargeK { k: usize, docs: usize },
    #[error("automatic k needs at least 3 documents and the corpus has {docs}: set cluster.k")]
    TooFewForAutoK { docs: usize },
    #[error("cluster.k-min ({k_min}) must be at least 2 and at most cluster.k-max ({k_max})")]
    BadKRange { k_min: usize, k_max: usize },
    #[error("cluster.runs cannot be 0")]
    ZeroRuns,
    #[error("cluster.max-iter cannot be 0")]
    ZeroMaxIter,
    #[error("cluster.tolerance must be a positive number")]
    BadTolerance,
    #[error("cluster.silhouette-sample = {0} must be within 100..=20000 (its pairwise distances are held in memory)")]
    SilhouetteSample(usize),
    #[error("cluster.fit-sample = {0} must be at least {1} (and at least the largest k)")]
    FitSample(usize, usize),
    #[error("there are no documents to cluster")]
    NoDocuments,
    #[error("no k in the automatic range could be scored (every silhouette was undefined): set cluster.k")]
    NoKScored,
    #[error("k-means failed")]
    KMeans(#[from] linfa_clustering::KMeansError),
    #[error("mini-batch k-means failed")]
    MiniBatch(#[source] linfa_clustering::KMeansError),
    #[error("the silhouette sample could not be drawn")]
    Silhouette(#[from] crate::evaluate::metrics::MetricsError),
}

impl KMeansParams {
    /// `k` clusters. Defaults: seed 42, 10 runs, 300 iterations, tolerance 1e-4, mini-batch
    /// above 50,000 rows.
    pub fn new(k: usize) -> Self {
        KMeansParams {
            k,
            seed: 42,
            runs: 10,
            max_iter: 300,
            tolerance: 1e-4,
            minibatch_above: 50_000,
            polish: false,
        }
    }
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    pub fn runs(mut self, runs: usize) -> Self {
        self.runs = runs;
        self
    }
    pub fn max_iter(mut self, n: u64) -> Self {
        self.max_iter = n;
        self
    }
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }
    pub fn minibatch_above(mut self, n: usize) -> Self {
        self.minibatch_above = n;
        self
    }
    /// Whether mini-batch centroids go on to Lloyd passes (default no): at most
    /// [`POLISH_PASSES`], over an even sample of at most [`POLISH_ROWS`] rows, until a pass
    /// moves at most one row in [`POLISH_SETTLED`] to another topic. Mini-batch stops where its
    /// running averages stop moving, short of a local optimum; the passes carry the centroids
    /// towards one. Worth it where the centroids decide the topics of far more documents than
    /// they were fitted on (a streaming run's sample).
    pub fn polish(mut self, on: bool) -> Self {
        self.polish = on;
        self
    }
    /// The same parameters with another k.
    pub fn with_k(mut self, k: usize) -> Self {
        self.k = k;
        self
    }
    /// Caps the restarts (used by the k sweep, which refits the winner in full).
    pub fn runs_at_most(mut self, runs: usize) -> Self {
        self.runs = self.runs.min(runs);
        self
    }
    pub fn check(self) -> Result<KMeansValidParams, ClusterError> {
        if self.k == 0 {
            return Err(ClusterError::ZeroK);
        }
        if self.runs == 0 {
            return Err(ClusterError::ZeroRuns);
        }
        if self.tolerance.is_nan() || self.tolerance <= 0.0 {
            return Err(ClusterError::BadTolerance);
        }
        Ok(KMeansValidParams(self))
    }
}

impl KMeansValidParams {
    pub fn k(&self) -> usize {
        self.0.k
    }

    /// Clusters the rows of `x`.
    pub fn fit(&self, x: ArrayView2<f32>) -> Result<Clustering, ClusterError> {
        let p = &self.0;
        let n = x.nrows();
        if n == 0 {
            return Err(ClusterError::NoDocuments);
        }
        if p.k > n {
            return Err(ClusterError::TooLargeK { k: p.k, docs: n });
        }
        let mut rng = Xoshiro256Plus::seed_from_u64(p.seed);
        let centroids = if n > p.minibatch_above {
            let params = KMeans::params_with(p.k, rng, LaneL2)
                .init_method(KMeansInit::KMeansPlusPlus)
                .n_runs(p.runs)
                .max_n_iterations(p.max_iter)
                .tolerance(p.tolerance as f32);
            let centroids = fit_minibatch(params, x, p.seed)?.centroids().to_owned();
            match p.polish {
                false => centroids,
                true if x.nrows() <= POLISH_ROWS => {
                    polish(centroids, x, POLISH_PASSES, POLISH_SETTLED)
                }
                true => {
                    let rows: Vec<usize> =
                        crate::sample::even_indices(x.nrows(), POLISH_ROWS).collect();
                    let rows = x.select(Axis(0), &rows);
                    polish(centroids, rows.view(), POLISH_PASSES, POLISH_SETTLED)
                }
            }
        } else {
            self.fit_full(x, &mut rng)?
        };
        Ok(Clustering::from_centroids(centroids.view(), x))
    }

    /// `runs` restarts of linfa's k-means, each from its own greedy k-means++ start drawn from
    /// one seeded generator. With more than one restart, each runs [`SCREEN_ITER`] Lloyd passes
    /// and only the one with the lowest inertia (the first on ties) goes on to convergence: the
    /// later passes move few documents and rarely change which restart is best, so the restarts
    /// cost a fixed number of passes instead of each running to the end.
    fn fit_full(
        &self,
        x: ArrayView2<f32>,
        rng: &mut Xoshiro256Plus,
    ) -> Result<Array2<f32>, ClusterError> {
        let p = &self.0;
        let data = DatasetBase::from(x);
        let lloyd = |start: Array2<f32>, rng: &Xoshiro256Plus, iters: u64| {
            KMeans::params_with(p.k, rng.clone(), LaneL2)
                .init_method(KMeansInit::Precomputed(start))
                .n_runs(1)
                .max_n_iterations(iters)
                .tolerance(p.tolerance as f32)
                .fit(&data)
        };
        if p.runs == 1 {
            let start = seeding::greedy_kmeans_pp(x, p.k, rng);
            return Ok(lloyd(start, rng, p.max_iter)?.centroids().to_owned());
        }
        let screen = SCREEN_ITER.min(p.max_iter);
        let mut best: Option<(f32, Array2<f32>)> = None;
        for _ in 0..p.runs {
            let start = seeding::greedy_kmeans_pp(x, p.k, rng);
            let model = lloyd(start, rng, screen)?;
            let inertia = model.inertia();
            if best.as_ref().is_none_or(|(b, _)| inertia < *b) {
                best = Some((inertia, model.centroids().to_owned()));
            }
        }
        let (_, centroids) = best.expect("runs is at least 2");
        if p.max_iter <= screen {
            return Ok(centroids);
        }
        Ok(lloyd(centroids, rng, p.max_iter - screen)?
            .centroids()
            .to_owned())
    }
}

/// Mini-batch k-means through linfa's `fit_with`, for corpora too large for full passes.
///
/// Batches of 4,096 rows are drawn from seeded shuffles of the rows. linfa initialises from the
/// first batch (k-means++, best of `runs`) and then moves the centroids by running averages. It
/// stops after three batches in a row move the centroids less than the tolerance, or after
/// `max(100, one epoch)` batches. The running averages weigh each row by `1 / count`, so late
/// batches barely move the centroids and more epochs cost time without changing the topics
/// (measured in the README's scaling section).
fn fit_minibatch(
    params: linfa_clustering::KMeansParams<f32, Xoshiro256Plus, LaneL2>,
    x: ArrayView2<f32>,
    seed: u64,
) -> Result<KMeans<f32, LaneL2>, ClusterError> {
    use rand::seq::SliceRandom;
    let failed = |e: linfa_clustering::KMeansError| ClusterError::MiniBatch(e);
    let params = params.check().map_err(|e| failed(e.into()))?;
    let n = x.nrows();
    let batch = 4096.min(n);
    let budget = 100usize.max(n / batch);
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Xoshiro256Plus::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut model = None;
    let (mut steps, mut streak) = (0usize, 0usize);
    while steps < budget && streak < 3 {
        order.shuffle(&mut rng);
        for idx in order.chunks_exact(batch) {
            let data = DatasetBase::from(x.select(Axis(0), idx));
            match params.fit_with(model.take(), &data) {
                Ok(m) => {
                    model = Some(m);
                    streak += 1;
                }
                Err(IncrKMeansError::NotConverged(m)) => {
                    model = Some(m);
                    streak = 0;
                }
                Err(IncrKMeansError::InvalidParams(e)) => return Err(failed(e.into())),
                Err(IncrKMeansError::LinfaError(e)) => return Err(failed(e.into())),
            }
            steps += 1;
            if steps >= budget || streak >= 3 {
                break;
            }
        }
    }
    model.ok_or(ClusterError::NoDocuments)
}

/// The result of clustering: centroids, and each document's topic and distance to its centroid.
///
/// After [`Clustering::refine`], topics are decided in the TF-IDF space (see [`super::refine`]):
/// `term_centroids` holds their centroids there, `distances` are cosine distances to them, and
/// `centroids` are the means of each topic's reduced vectors (for the map and inertia).
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    centroids: Array2<f32>,
    term_centroids: Option<Array2<f32>>,
    assignments: Vec<usize>,
    distances: Vec<f32>,
    /// Each document's distance to its second nearest topic, under the same rule.
    runner_up: Vec<f32>,
    /// Outlier floors fixed from elsewhere (a saved model's), instead of these documents' own.
    floors: Option<Vec<f64>>,
    sizes: Vec<usize>,
    inertia: f64,
    /// Refinement passes run (0: not refined).
    refine_passes: usize,
}

impl Clustering {
    /// Assigns rows to their nearest centroid, renumbers clusters by size (largest first, ties by
    /// original index) and drops empty clusters.
    pub fn from_centroids(centroids: ArrayView2<f32>, x: ArrayView2<f32>) -> Clustering {
        let (raw, _) = nearest(centroids, x);
        let kept = centroids.select(Axis(0), &by_size(&raw, centroids.nrows()));
        // Re-predict against the kept centroids: the same assignment, with new ids.
        Self::assign(kept.view(), x)
    }

    /// Refines the topics by spherical k-means on `terms` (the TF-IDF rows of the documents whose
    /// reduced vectors are `x`), at most `max_iter` passes; topics are renumbered by size again
    /// and emptied ones dropped.
    pub fn refine(&self, x: ArrayView2<f32>, terms: &CsrMatrix, max_iter: usize) -> Clustering {
        let r = refine::refine(terms, &self.assignments, self.k(), max_iter);
        let kept = r
            .centroids
            .select(Axis(0), &by_size(&r.assignments, self.k()));
        // Re-predict against the kept centroids, so the saved centroids define the assignment.
        let (assignments, sims, seconds) = refine::assign_with_runner_up(terms, kept.view());
        let k = kept.nrows();
        let sizes = count(&assignments, k);
        let mut centroids = Array2::<f32>::zeros((k, x.ncols()));
        for (row, &c) in x.outer_iter().zip(&assignments) {
            let mut out = centroids.row_mut(c);
            out += &row;
        }
        for (mut row, &s) in centroids.outer_iter_mut().zip(&sizes) {
            row /= s.max(1) as f32;
        }
        let mut c = Self::from_term_assignment(centroids, kept, assignments, sims, seconds, x);
        c.refine_passes = r.passes;
        c
    }

    /// Places rows by cosine similarity to saved term-space centroids, keeping their ids (a saved
    /// refined model's `assign`); `centroids` are the model's reduced-space centroids.
    pub fn assign_terms(
        centroids: ArrayView2<f32>,
        term_centroids: ArrayView2<f32>,
        x: ArrayView2<f32>,
        terms: &CsrMatrix,
    ) -> Clustering {
        let (assignments, sims, seconds) = refine::assign_with_runner_up(terms, term_centroids);
        Self::from_term_assignment(
            centroids.to_owned(),
            term_centroids.to_owned(),
            assignments,
            sims,
            seconds,
            x,
        )
    }

    fn from_term_assignment(
        centroids: Array2<f32>,
        term_centroids: Array2<f32>,
        assignments: Vec<usize>,
        sims: Vec<f32>,
        seconds: Vec<f32>,
        x: ArrayView2<f32>,
    ) -> Clustering {
        let sizes = count(&assignments, term_centroids.nrows());
        let euclid: Vec<f32> = x
            .outer_iter()
            .zip(&assignments)
            .map(|(row, &c)| {
                let d = &row - &centroids.row(c);
                d.dot(&d).sqrt()
            })
            .collect();
        Clustering {
            centroids,
            term_centroids: Some(term_centroids),
            assignments,
            distances: sims.iter().map(|&s| (1.0 - s).max(0.0)).collect(),
            runner_up: seconds.iter().map(|&s| (1.0 - s).max(0.0)).collect(),
            floors: None,
            sizes,
            inertia: sum_of_squares(&euclid),
            refine_passes: 0,
        }
    }

    /// Assigns rows to the nearest of fixed centroids, keeping the centroids' ids (used to place
    /// new documents into a saved model's topics; empty topics stay).
    pub fn assign(centroids: ArrayView2<f32>, x: ArrayView2<f32>) -> Clustering {
        let (assignments, distances, runner_up) = nearest_with_runner_up(centroids, x);
        let sizes = count(&assignments, centroids.nrows());
        Clustering {
            centroids: centroids.to_owned(),
            term_centroids: None,
            assignments,
            inertia: sum_of_squares(&distances),
            distances,
            runner_up,
            floors: None,
            sizes,
            refine_passes: 0,
        }
    }

    /// Topics known by their centroids and sizes alone, without their documents (a report
    /// built from sums): no assignments, distances or outliers.
    pub fn summed(
        centroids: Array2<f32>,
        term_centroids: Option<Array2<f32>>,
        sizes: Vec<usize>,
    ) -> Clustering {
        Clustering {
            centroids,
            term_centroids,
            assignments: Vec::new(),
            distances: Vec::new(),
            runner_up: Vec::new(),
            floors: None,
            sizes,
            inertia: f64::NAN,
            refine_passes: 0,
        }
    }

    pub fn k(&self) -> usize {
        self.centroids.nrows()
    }
    /// Centroids in the reduced space (for refined topics, the means of their vectors).
    pub fn centroids(&self) -> &Array2<f32> {
        &self.centroids
    }
    /// Centroids in the TF-IDF space, when the topics were refined there.
    pub fn term_centroids(&self) -> Option<&Array2<f32>> {
        self.term_centroids.as_ref()
    }
    /// Topic of each document.
    pub fn assignments(&self) -> &[usize] {
        &self.assignments
    }
    /// Each document's distance to its topic under the rule that placed it: Euclidean in the
    /// reduced space, or cosine distance (1 - similarity) in the TF-IDF space when refined.
    pub fn distances(&self) -> &[f32] {
        &self.distances
    }
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }
    /// How clearly each document belongs to its topic: `1 - d1 / d2`, with `d1` its distance to
    /// its topic and `d2` to the next nearest one (under the rule that placed it). 0 means
    /// halfway between two topics, 1 means on its topic's centroid; 1 when there is one topic.
    pub fn confidence(&self) -> Vec<f32> {
        self.distances
            .iter()
            .zip(&self.runner_up)
            .map(|(&d1, &d2)| {
                if d2 > 0.0 {
                    (1.0 - d1 / d2).clamp(0.0, 1.0)
                } else {
                    1.0
                }
            })
            .collect()
    }
    /// Each document's closeness to its topic: its cosine similarity to the topic's centroid,
    /// in the term space for refined topics (`1 - distance`), else in the reduced space, where
    /// it follows from the Euclidean distance `d` and the centroid's length: `(1 + |c|² - d²) /
    /// 2|c|` (documents are unit vectors there).
    pub fn closeness(&self) -> Vec<f32> {
        if self.term_centroids.is_some() {
            return self.distances.iter().map(|&d| 1.0 - d).collect();
        }
        let norms: Vec<f32> = self
            .centroids
            .outer_iter()
            .map(|c| c.dot(&c).sqrt())
            .collect();
        self.assignments
            .iter()
            .zip(&self.distances)
            .map(|(&t, &d)| {
                let c = norms[t];
                if c > 0.0 {
                    ((1.0 + c * c - d * d) / (2.0 * c)).clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            })
            .collect()
    }
    /// Documents far from every centroid: closer to their topic than to any other (they are
    /// its members), yet far less close than the topic's typical document, so they share little
    /// with what the topic is about, and less with every other topic. The rule is Iglewicz and
    /// Hoaglin's modified z-score, on the logarithm of the closeness (closeness is bounded
    /// below by 0, its logarithm is not): a document is an outlier when `ln(closeness)` is more
    /// than [`OUTLIER_Z`] robust standard deviations (`1.4826 x` the median absolute
    /// deviation) below the topic's median. Topics of fewer than 8 documents have none.
    /// Outliers stay in their topic: every document keeps one.
    pub fn outliers(&self) -> Vec<bool> {
        match &self.floors {
            Some(f) => self.outliers_below(f),
            None => self.outliers_below(&self.outlier_floors()),
        }
    }

    /// The same clustering, judging outliers by `floors` (a saved model's, on `ln(closeness)`,
    /// one per topic) instead of by its own documents.
    pub fn with_outlier_floors(mut self, floors: Vec<f64>) -> Clustering {
        self.floors = Some(floors);
        self
    }

    /// Each topic's outlier floor on `ln(closeness)` (see [`Clustering::outliers`]); `-inf` for a
    /// topic of fewer than 8 documents. Saved with a model, so that documents assigned later are
    /// judged by the fit's own topics, whatever batch they come in.
    pub fn outlier_floors(&self) -> Vec<f64> {
        let k = self.k();
        let closeness = self.closeness();
        let mut by_topic: Vec<Vec<f64>> = vec![Vec::new(); k];
        for (&t, &c) in self.assignments.iter().zip(&closeness) {
            by_topic[t].push(ln_closeness(c));
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        };
        let floors: Vec<f64> = by_topic
            .into_iter()
            .map(|mut v| {
                if v.len() < 8 {
                    return f64::NEG_INFINITY;
                }
                let m = median(&mut v);
                let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
                let mad = median(&mut dev);
                m - OUTLIER_Z * 1.4826 * mad
            })
            .collect();
        floors
    }

    /// The documents below their topic's floor (`floors[topic]`, on `ln(closeness)`).
    pub fn outliers_below(&self, floors: &[f64]) -> Vec<bool> {
        self.assignments
            .iter()
            .zip(self.closeness())
            .map(|(&t, c)| ln_closeness(c) < floors.get(t).copied().unwrap_or(f64::NEG_INFINITY))
            .collect()
    }
    /// Sum of squared Euclidean distances to the centroids in the reduced space (scikit-learn's
    /// `inertia_`; linfa's is a mean).
    pub fn inertia(&self) -> f64 {
        self.inertia
    }
    /// Passes of the TF-IDF-space refinement that were run (0 when not refined).
    pub fn refine_passes(&self) -> usize {
        self.refine_passes
    }
    /// The clustering with topics merged into `groups` (lists of topic indices, each topic in
    /// exactly one; group `g` becomes topic `g`). A group's centroids are its topics' centroids
    /// weighted by size (term-space ones renormalised). Distances, confidence and outliers stay
    /// those of each document's own (unmerged) topic.
    pub fn merge(&self, groups: &[Vec<usize>]) -> Clustering {
        let mut group_of = vec![0usize; self.k()];
        for (g, members) in groups.iter().enumerate() {
            for &t in members {
                group_of[t] = g;
            }
        }
        let mean = |c: &Array2<f32>, unit: bool| -> Array2<f32> {
            let mut out = Array2::<f32>::zeros((groups.len(), c.ncols()));
            for (g, members) in groups.iter().enumerate() {
                let total: usize = members.iter().map(|&t| self.sizes[t]).sum();
                let mut row = out.row_mut(g);
                for &t in members {
                    row.scaled_add(self.sizes[t] as f32 / total.max(1) as f32, &c.row(t));
                }
                if unit {
                    crate::norm::unit(row);
                }
            }
            out
        };
        let assignments: Vec<usize> = self.assignments.iter().map(|&t| group_of[t]).collect();
        let mut sizes = vec![0usize; groups.len()];
        for (t, &n) in self.sizes.iter().enumerate() {
            sizes[group_of[t]] += n;
        }
        Clustering {
            centroids: mean(&self.centroids, false),
            term_centroids: self.term_centroids.as_ref().map(|c| mean(c, true)),
            sizes,
            assignments,
            distances: self.distances.clone(),
            runner_up: self.runner_up.clone(),
            floors: None,
            inertia: self.inertia,
            refine_passes: self.refine_passes,
        }
    }
    /// Rows of each topic, in document order.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut m = vec![Vec::new(); self.k()];
        for (i, &c) in self.assignments.iter().enumerate() {
            m[c].push(i);
        }
        m
    }
}

/// The scale outliers are judged on.
fn ln_closeness(c: f32) -> f64 {
    (c.max(1e-6) as f64).ln()
}

/// Documents per topic.
fn count(assignments: &[usize], k: usize) -> Vec<usize> {
    let mut sizes = vec![0usize; k];
    assignments.iter().for_each(|&c| sizes[c] += 1);
    sizes
}

/// The topics that have documents, largest first (ties by index): the renumbering order.
fn by_size(assignments: &[usize], k: usize) -> Vec<usize> {
    let sizes = count(assignments, k);
    let mut order: Vec<usize> = (0..k).filter(|&c| sizes[c] > 0).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    order
}

fn sum_of_squares(d: &[f32]) -> f64 {
    d.iter().map(|&d| (d as f64) * (d as f64)).sum()
}

/// Nearest centroid of every row (ties to the lower index) and the Euclidean distance to it.
pub fn nearest(centroids: ArrayView2<f32>, x: ArrayView2<f32>) -> (Vec<usize>, Vec<f32>) {
    let (topics, best, _) = nearest_with_runner_up(centroids, x);
    (topics, best)
}

/// As [`nearest`], with each row's distance to its second nearest centroid as well (its own
/// when there is only one).
pub fn nearest_with_runner_up(
    centroids: ArrayView2<f32>,
    x: ArrayView2<f32>,
) -> (Vec<usize>, Vec<f32>, Vec<f32>) {
    let norms: Array1<f32> = centroids.rows().into_iter().map(|c| c.dot(&c)).collect();
    let (topics, (best, second)): (Vec<usize>, (Vec<f32>, Vec<f32>)) = x
        .axis_chunks_iter(Axis(0), 1024)
        .into_par_iter()
        .flat_map_iter(|block| {
            let dots = block.dot(&centroids.t());
            let norms = &norms;
            dots.outer_iter()
                .zip(block.outer_iter())
                .map(|(d, row)| {
                    let rn = row.dot(&row);
                    let mut best = (0usize, f32::INFINITY);
                    let mut second = f32::INFINITY;
                    for (c, (&dc, &nc)) in d.iter().zip(norms.iter()).enumerate() {
                        let dist = rn + nc - 2.0 * dc;
                        if dist < best.1 {
                            second = best.1;
                            best = (c, dist);
                        } else if dist < second {
                            second = dist;
                        }
                    }
                    if !second.is_finite() {
                        second = best.1;
                    }
                    (best.0, best.1.max(0.0).sqrt(), second.max(0.0).sqrt())
                })
                .collect::<Vec<_>>()
        })
        .map(|(t, b, s)| (t, (b, s)))
        .unzip();
    (topics, best, second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn blobs() -> Array2<f32> {
        let mut rows = Vec::new();
        for i in 0..30 {
            let j = (i as f32 * 0.37).sin() * 0.1;
            rows.extend_from_slice(&[0.0 + j, 0.0 - j]);
            rows.extend_from_slice(&[5.0 + j, 5.0 + j]);
            if i < 10 {
                rows.extend_from_slice(&[10.0 - j, 0.0 + j]);
            }
        }
        Array2::from_shape_vec((rows.len() / 2, 2), rows).unwrap()
    }

    #[test]
    fn same_seed_same_result_and_sizes_sorted() {
        let x = blobs();
        let a = KMeansParams::new(3)
            .seed(7)
            .check()
            .unwrap()
            .fit(x.view())
            .unwrap();
        let b = KMeansParams::new(3)
            .seed(7)
            .check()
            .unwrap()
            .fit(x.view())
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.sizes(), &[30, 30, 10]);
        assert_eq!(a.assignments()[2], 2, "row 2 is in the small blob");
        assert_eq!(
            a.assignments()[4],
            a.assignments()[1],
            "rows 1 and 4 share a blob"
        );
        assert!(a.inertia() < 5.0, "inertia {}", a.inertia());
    }

    /// Points drawn uniformly in a cube: with no clusters to find, k-means needs many passes to
    /// settle.
    fn cube(n: usize, d: usize) -> Array2<f32> {
        use rand::Rng;
        let mut rng = Xoshiro256Plus::seed_from_u64(11);
        Array2::from_shape_fn((n, d), |_| rng.gen::<f32>())
    }

    /// Documents whose nearest mean (of the topics' members) is not their own topic's.
    fn movers(c: &Clustering, x: ArrayView2<f32>) -> usize {
        let mut means = Array2::<f32>::zeros((c.k(), x.ncols()));
        for (row, &t) in x.outer_iter().zip(c.assignments()) {
            let mut m = means.row_mut(t);
            m += &row;
        }
        for (mut m, &s) in means.outer_iter_mut().zip(c.sizes()) {
            m /= s as f32;
        }
        let (nearest_mean, _) = nearest(means.view(), x);
        nearest_mean
            .iter()
            .zip(c.assignments())
            .filter(|(a, b)| a != b)
            .count()
    }

    #[test]
    fn polished_minibatch_centroids_settle_and_do_not_depend_on_threads() {
        let x = cube(6000, 5);
        let fit = |polish: bool| {
            KMeansParams::new(30)
                .seed(5)
                .minibatch_above(1000)
                .polish(polish)
                .check()
                .unwrap()
                .fit(x.view())
                .unwrap()
        };
        let (plain, polished) = (fit(false), fit(true));
        assert!(
            polished.inertia() < plain.inertia(),
            "polished inertia {} against {}",
            polished.inertia(),
            plain.inertia()
        );
        // Fewer than POLISH_ROWS rows: every row is in the passes, which stop when at most one
        // in POLISH_SETTLED moves (or after POLISH_PASSES).
        let (m_plain, m_polished) = (movers(&plain, x.view()), movers(&polished, x.view()));
        assert!(
            m_polished * 10 <= m_plain.max(1),
            "{m_polished} documents still nearer another mean, against {m_plain} unpolished"
        );
        let in_pool = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| fit(true))
        };
        assert_eq!(in_pool(1), in_pool(3));
    }

    #[test]
    fn screened_restarts_still_run_the_best_one_to_convergence() {
        let x = cube(4000, 6);
        let fit = |runs: usize, max_iter: u64| {
            KMeansParams::new(40)
                .seed(3)
                .runs(runs)
                .max_iter(max_iter)
                .check()
                .unwrap()
                .fit(x.view())
                .unwrap()
        };
        let screened_only = movers(&fit(4, SCREEN_ITER), x.view());
        let full = fit(4, 300);
        assert!(
            movers(&full, x.view()) * 10 <= screened_only.max(1),
            "converged: {} movers, after screening only: {screened_only}",
            movers(&full, x.view())
        );
        // The best of four screened restarts ends no worse than a lone restart here.
        assert!(full.inertia() <= fit(1, 300).inertia() * 1.01);
    }

    #[test]
    fn rules_are_checked() {
        assert!(matches!(
            KMeansParams::new(0).check().unwrap_err(),
            ClusterError::ZeroK
        ));
        let x = array![[0.0f32, 1.0], [1.0, 0.0]];
        assert!(matches!(
            KMeansParams::new(3)
                .check()
                .unwrap()
                .fit(x.view())
                .unwrap_err(),
            ClusterError::TooLargeK { k: 3, docs: 2 }
        ));
    }

    #[test]
    fn confidence_and_outliers_follow_the_documented_rules() {
        // Two unit-circle topics around 0 and 90 degrees, twelve documents each, a document
        // halfway between them, and one pointing away from both.
        let deg = |a: f32| {
            let r = a.to_radians();
            [r.cos(), r.sin()]
        };
        let mut rows: Vec<[f32; 2]> = Vec::new();
        for i in 0..12 {
            rows.push(deg(-6.0 + i as f32));
            rows.push(deg(84.0 + i as f32));
        }
        rows.push(deg(45.0));
        rows.push(deg(-135.0));
        let x = Array2::from_shape_vec((rows.len(), 2), rows.concat()).unwrap();
        let centroids = array![[1.0f32, 0.0], [0.0, 1.0]];
        let c = Clustering::assign(centroids.view(), x.view());
        let conf = c.confidence();
        assert!(conf[0] > 0.8, "{}", conf[0]);
        assert!(conf[24] < 0.01, "halfway: {}", conf[24]);
        // Both are far from every centroid, next to tight topics; no topic member is.
        let out = c.outliers();
        assert!(out[24] && out[25], "{out:?}");
        assert!(out[..24].iter().all(|&o| !o), "{out:?}");
        // Closeness is the cosine to the (unit) centroid.
        assert!((c.closeness()[0] - deg(-6.0)[0]).abs() < 1e-5);
    }

    #[test]
    fn empty_clusters_are_dropped() {
        let x = array![[0.0f32, 0.0], [0.1, 0.0], [5.0, 5.0]];
        let centroids = array![[0.05f32, 0.0], [100.0, 100.0], [5.0, 5.0]];
        let c = Clustering::from_centroids(centroids.view(), x.view());
        assert_eq!(c.k(), 2);
        assert_eq!(c.assignments(), &[0, 0, 1]);
        approx::assert_abs_diff_eq!(c.distances()[0], 0.05, epsilon = 1e-5);
    }
}
