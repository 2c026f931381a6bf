//! k-means with linfa-clustering, seeded and repeatable.
//!
//! Up to `minibatch_above` rows, each of `runs` restarts starts from greedy k-means++ centroids
//! (see [`super::seeding`]; scikit-learn's seeding, better than linfa's plain k-means++) and linfa
//! runs Lloyd's iterations from them. Each restart runs [`SCREEN_ITER`] passes, and the one with
//! the lowest inertia then runs on to convergence (a lone restart runs to convergence at once).
//! Above that, linfa's mini-batch k-means (`fit_with`) runs with its own k-means++ on the first
//! batch, and when asked ([`KMeansParams::polish`]) Lloyd passes of our own ([`super::polish`],
//! with Elkan's bounds) carry its centroids towards a local optimum; a topic left with almost no
//! rows is then started again by splitting the loosest one (`restart_starved`). Both
//! draw from one seeded Xoshiro256Plus generator; linfa's default seeding, k-means||, samples in
//! parallel with per-thread seeds, so results would depend on the thread count. Two facts of
//! linfa 0.8.1 are handled here: `cluster_count()` reflects the last run rather than the best, so
//! sizes come from `predict`; and `inertia()` is a mean, so the sklearn-style sum is computed from
//! the distances. Topics are renumbered by size (topic 0 is the largest), and a cluster that ends
//! up empty is dropped, so every topic id that is reported has documents.

use linfa::prelude::*;
use linfa_clustering::{IncrKMeansError, KMeans, KMeansInit};
use ndarray::{Array2, ArrayView2};
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;

use super::clustering::Clustering;
use super::distance::LaneL2;
use super::polish::polish;
use super::seeding;

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
    Silhouette(#[from] super::silhouette::SilhouetteError),
    #[error(transparent)]
    Named(#[from] super::named::NamedError),
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
            // The rows Lloyd passes run over: an even sample when polishing, else every row.
            let sampled = (p.polish && x.nrows() > POLISH_ROWS).then(|| {
                let rows: Vec<usize> =
                    crate::sample::even_indices(x.nrows(), POLISH_ROWS).collect();
                crate::sample::rows(x, &rows)
            });
            let rows = match &sampled {
                Some(r) => r.view(),
                None => x.view(),
            };
            let centroids = match p.polish {
                false => centroids,
                true => polish(centroids, rows, POLISH_PASSES, POLISH_SETTLED),
            };
            restart_starved(centroids, rows, p.seed)
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

/// A mini-batch topic with fewer rows than this share of the largest topic's is started again
/// (scikit-learn's `MiniBatchKMeans` reassigns such centroids at the same ratio, 0.01).
const STARVED_SHARE: f64 = 0.01;

/// Times the starved topics are started again before they are left as they are.
const RESTARTS: usize = 3;

/// Mini-batch centroids with every starved topic ([`STARVED_SHARE`]) started again. linfa seeds
/// mini-batch k-means with plain k-means++ on its first batch, where a few rows far from all
/// others (a 10M arXiv run's fit held abstracts of unrelated sentences) are likely picks; such
/// a row then keeps a topic of its own, one of k, with one document in 200,000, and a label
/// made of its words. A new centroid on a single row fares no better (tried there: rows drawn
/// uniformly kept 1 and 3 rows of 100,000 after the Lloyd passes; in a few hundred dimensions
/// a row's neighbours lie nearer their topic's mean than to it). Instead each starved topic's
/// centroid goes to the loosest topic (largest sum of squared distances, each split once a
/// round), which is cut in two along its principal direction, as bisecting k-means does
/// (Boley's principal direction divisive partitioning): the two centroids sit just either side
/// of its mean, so its rows are shared between them. Lloyd passes ([`polish`], over `rows`)
/// then settle every centroid, and the starved topics' rows join their nearest topic. A fit
/// without a starved topic is returned as it came, so the check costs one pass of nearest
/// centroids over `rows`.
fn restart_starved(mut centroids: Array2<f32>, rows: ArrayView2<f32>, seed: u64) -> Array2<f32> {
    let k = centroids.nrows();
    let mut rng = Xoshiro256Plus::seed_from_u64(seed ^ 0x5741_5256_4544_0001);
    for _ in 0..RESTARTS {
        let (topics, distances) = super::nearest(centroids.view(), rows);
        let (mut sizes, mut spread) = (vec![0usize; k], vec![0f64; k]);
        for (&t, &d) in topics.iter().zip(&distances) {
            sizes[t] += 1;
            spread[t] += f64::from(d) * f64::from(d);
        }
        let floor = STARVED_SHARE * sizes.iter().copied().max().unwrap_or(0) as f64;
        let starved: Vec<usize> = (0..k).filter(|&t| (sizes[t] as f64) < floor).collect();
        if starved.is_empty() {
            break;
        }
        let mut loosest: Vec<usize> = (0..k).filter(|&t| (sizes[t] as f64) >= floor).collect();
        // Loosest first (ties: the lower topic).
        loosest.sort_by(|&a, &b| spread[b].total_cmp(&spread[a]).then(a.cmp(&b)));
        for (&s, &t) in starved.iter().zip(&loosest) {
            let members: Vec<usize> = (0..rows.nrows()).filter(|&i| topics[i] == t).collect();
            let (a, b) = bisect(rows, &members, centroids.row(t), &mut rng);
            centroids.row_mut(t).assign(&a);
            centroids.row_mut(s).assign(&b);
        }
        centroids = polish(centroids, rows, POLISH_PASSES, POLISH_SETTLED);
    }
    centroids
}

/// Two centroids either side of `centre` along the principal direction of the rows `members`
/// of `x` (power iteration from a random member's direction), a tenth of their root mean
/// square distance from it.
fn bisect(
    x: ArrayView2<f32>,
    members: &[usize],
    centre: ndarray::ArrayView1<f32>,
    rng: &mut Xoshiro256Plus,
) -> (ndarray::Array1<f32>, ndarray::Array1<f32>) {
    use rand::Rng;
    let centred = &crate::sample::rows(x, members) - &centre;
    let rms = (centred
        .iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        / members.len().max(1) as f64)
        .sqrt() as f32;
    let mut u = centred.row(rng.gen_range(0..members.len())).to_owned();
    for _ in 0..8 {
        let n = u.dot(&u).sqrt();
        if n == 0.0 {
            break;
        }
        u /= n;
        u = centred.t().dot(&centred.dot(&u));
    }
    let n = u.dot(&u).sqrt();
    if n > 0.0 {
        u *= 0.1 * rms / n;
    }
    (&centre + &u, &centre - &u)
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
            let data = DatasetBase::from(crate::sample::rows(x, idx));
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
        let (nearest_mean, _) = crate::cluster::nearest(means.view(), x);
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

    /// Four blobs of 300 rows and three rows far from everything: mini-batch k-means++ seeds
    /// on the far rows, which keep a topic each.
    fn blobs_and_strays() -> Array2<f32> {
        let mut rows = Vec::new();
        for i in 0..300 {
            let (a, b) = ((i as f32 * 0.37).sin() * 0.5, (i as f32 * 0.73).cos() * 0.5);
            for (x, y) in [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (10.0, 10.0)] {
                rows.extend_from_slice(&[x + a, y + b]);
            }
        }
        rows.extend_from_slice(&[1000.0, 1000.0, -1000.0, 1000.0, 1000.0, -1000.0]);
        Array2::from_shape_vec((rows.len() / 2, 2), rows).unwrap()
    }

    #[test]
    fn minibatch_topics_of_a_few_strays_are_started_again() {
        let x = blobs_and_strays();
        for polish in [false, true] {
            let fit = KMeansParams::new(4)
                .seed(1)
                .minibatch_above(100)
                .polish(polish)
                .check()
                .unwrap()
                .fit(x.view())
                .unwrap();
            assert_eq!(fit.k(), 4);
            // Each blob is one topic; each stray joins one of them.
            assert!(
                fit.sizes().iter().all(|&s| (300..=303).contains(&s)),
                "{:?}",
                fit.sizes()
            );
            for b in 0..4 {
                let t = fit.assignments()[b];
                assert!(
                    (0..300).all(|i| fit.assignments()[i * 4 + b] == t),
                    "blob {b} split"
                );
            }
        }
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
}
