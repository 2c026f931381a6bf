//! Cluster: k-means on the reduced document vectors (linfa-clustering), automatic k, and the
//! refinement of the topics in the TF-IDF space.
//!
//! [`ClusterParams`] is the stage as a whole: how k is chosen, the k-means settings, and when
//! the topics are refined; [`ClusterParams::check`] yields the [`ClusterValidParams`] whose
//! [`fit`](ClusterValidParams::fit) runs it, so the rules that depend on the
//! corpus (restarts by corpus size, refinement only below the mini-batch threshold) live here,
//! next to the code they govern.

pub mod auto_k;
pub mod clustering;
pub mod distance;
pub mod guided;
pub mod kmeans;
pub mod named;
pub mod polish;
pub mod refine;
pub mod seeding;
pub mod silhouette;

pub use auto_k::{KScore, KSelection};
pub use clustering::{nearest, Clustering};
pub use kmeans::{ClusterError, KMeansParams, KMeansValidParams};
pub use named::{NamedError, NamedTopic};

use crate::vectorize::CsrMatrix;
use ndarray::ArrayView2;
use serde::Serialize;

/// Above this many documents the default number of k-means restarts drops from 10 to 3.
pub const FEW_RUNS_ABOVE: usize = 10_000;

/// The automatic k range when the pipeline names none.
pub const DEFAULT_K_RANGE: (usize, usize) = (2, 20);

/// The seed when the pipeline names none (the reduction takes it too).
pub const DEFAULT_SEED: u64 = 42;

/// How k is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "mode")]
pub enum KChoice {
    Fixed {
        k: usize,
    },
    /// Every k in `k_min..=k_max` is tried and scored (see [`auto_k`] for the rule).
    Auto {
        k_min: usize,
        k_max: usize,
    },
}

impl KChoice {
    /// The largest k the choice may produce (what the reduction is sized for).
    pub fn max_k(&self) -> usize {
        match *self {
            KChoice::Fixed { k } => k,
            KChoice::Auto { k_max, .. } => k_max,
        }
    }
}

/// The smallest `fit-sample`: fewer documents cannot stand for a large corpus.
pub const MIN_FIT_SAMPLE: usize = 1_000;

/// The cluster stage's parameters, a builder (linfa style: defaults in [`ClusterParams::new`],
/// rules in [`ClusterParams::check`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterParams {
    k: KChoice,
    seed: u64,
    runs: Option<usize>,
    max_iter: u64,
    tolerance: f64,
    minibatch_above: usize,
    silhouette_sample: usize,
    refine_iter: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit_sample: Option<usize>,
    /// The named topics (`[[topic]]`), counted in k.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    named: Vec<NamedTopic>,
    /// The zero-shot threshold of the named topics without one of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    min_similarity: Option<f32>,
    /// Whether k-means clusters a sentence model's vectors (what zero-shot compares).
    #[serde(skip)]
    sentence_vectors: bool,
}

/// Checked cluster parameters, ready to [`fit`](ClusterValidParams::fit). Serialized into
/// `run.json` as the pipeline's `cluster` settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ClusterValidParams(ClusterParams);

impl Default for ClusterParams {
    fn default() -> Self {
        Self::new()
    }
}

impl ClusterParams {
    /// Defaults: k automatic over 2..=20, seed 42, automatic restarts (10, or 3 above 10,000
    /// documents), 300 iterations, tolerance 1e-4, mini-batch above 50,000 documents, a
    /// silhouette sample of 5,000, 5 refinement passes.
    pub fn new() -> Self {
        ClusterParams {
            k: KChoice::Auto {
                k_min: DEFAULT_K_RANGE.0,
                k_max: DEFAULT_K_RANGE.1,
            },
            seed: DEFAULT_SEED,
            runs: None,
            max_iter: 300,
            tolerance: 1e-4,
            minibatch_above: 50_000,
            silhouette_sample: 5_000,
            refine_iter: 5,
            fit_sample: None,
            named: Vec::new(),
            min_similarity: None,
            sentence_vectors: false,
        }
    }

    /// How k is chosen (default automatic over 2..=20).
    pub fn k(mut self, k: KChoice) -> Self {
        self.k = k;
        self
    }
    /// The seed of k-means++, the silhouette sample and the fit sample (default 42).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// k-means++ restarts; `None` (default) = 10, or 3 above [`FEW_RUNS_ABOVE`] documents.
    pub fn runs(mut self, runs: Option<usize>) -> Self {
        self.runs = runs;
        self
    }
    /// k-means iterations at most (default 300).
    pub fn max_iter(mut self, max_iter: u64) -> Self {
        self.max_iter = max_iter;
        self
    }
    /// k-means convergence tolerance (default 1e-4).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }
    /// Mini-batch k-means above this many documents (default 50,000).
    pub fn minibatch_above(mut self, n: usize) -> Self {
        self.minibatch_above = n;
        self
    }
    /// Silhouette sample for automatic k and the reported silhouette (default 5,000).
    pub fn silhouette_sample(mut self, n: usize) -> Self {
        self.silhouette_sample = n;
        self
    }
    /// At most this many spherical k-means passes on the TF-IDF vectors refine the topics
    /// (default 5; 0 = none).
    pub fn refine_iter(mut self, passes: usize) -> Self {
        self.refine_iter = passes;
        self
    }
    /// A streaming run: fit on a seeded sample of this many documents, then assign every
    /// document in chunks (see `pipeline::stream`). `None` (default): fit on all of them, in
    /// memory.
    pub fn fit_sample(mut self, n: Option<usize>) -> Self {
        self.fit_sample = n;
        self
    }

    /// The named topics (default none), the global zero-shot threshold (default none), and
    /// whether k-means clusters a sentence model's vectors (zero-shot needs them).
    pub fn named(
        mut self,
        topics: Vec<NamedTopic>,
        min_similarity: Option<f32>,
        sentence_vectors: bool,
    ) -> Self {
        self.named = topics;
        self.min_similarity = min_similarity;
        self.sentence_vectors = sentence_vectors;
        self
    }

    /// Checks every rule that does not depend on the corpus.
    pub fn check(self) -> Result<ClusterValidParams, ClusterError> {
        match self.k {
            KChoice::Fixed { k: 0 } => return Err(ClusterError::ZeroK),
            KChoice::Auto { k_min, k_max } if k_min < 2 || k_max < k_min => {
                return Err(ClusterError::BadKRange { k_min, k_max })
            }
            _ => {}
        }
        if self.runs == Some(0) {
            return Err(ClusterError::ZeroRuns);
        }
        if self.max_iter == 0 {
            return Err(ClusterError::ZeroMaxIter);
        }
        if !(self.tolerance > 0.0 && self.tolerance.is_finite()) {
            return Err(ClusterError::BadTolerance);
        }
        if let Some(n) = self.fit_sample {
            if n < MIN_FIT_SAMPLE || n < self.k.max_k() {
                return Err(ClusterError::FitSample(
                    n,
                    MIN_FIT_SAMPLE.max(self.k.max_k()),
                ));
            }
        }
        let range = silhouette::SAMPLE_RANGE;
        if !range.contains(&self.silhouette_sample) {
            return Err(ClusterError::SilhouetteSample(self.silhouette_sample));
        }
        let k_key = match self.k {
            KChoice::Fixed { .. } => "cluster.k",
            KChoice::Auto { .. } => "cluster.k-max",
        };
        named::check(
            &self.named,
            (self.k.max_k(), k_key),
            self.sentence_vectors,
            self.min_similarity,
        )?;
        Ok(ClusterValidParams(self))
    }
}

impl ClusterValidParams {
    /// How k is chosen.
    pub fn k(&self) -> KChoice {
        self.0.k
    }
    /// The seed of k-means++, the silhouette sample and the fit sample.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
    /// The k-means restarts for `n` documents: `runs`, else 10, or 3 above 10,000 documents.
    /// Restarts cost linear time, and on large corpora they stop paying (see the README's
    /// quality section).
    pub fn runs_for(&self, n: usize) -> usize {
        self.0
            .runs
            .unwrap_or(if n > FEW_RUNS_ABOVE { 3 } else { 10 })
    }
    /// k-means iterations at most.
    pub fn max_iter(&self) -> u64 {
        self.0.max_iter
    }
    /// k-means convergence tolerance.
    pub fn tolerance(&self) -> f64 {
        self.0.tolerance
    }
    /// Mini-batch k-means above this many documents.
    pub fn minibatch_above(&self) -> usize {
        self.0.minibatch_above
    }
    /// Silhouette sample for automatic k and the reported silhouette.
    pub fn silhouette_sample(&self) -> usize {
        self.0.silhouette_sample
    }
    /// At most this many refinement passes on the TF-IDF vectors.
    pub fn refine_iter(&self) -> usize {
        self.0.refine_iter
    }
    /// The fit sample of a streaming run (`None`: fit on every document, in memory).
    pub fn fit_sample(&self) -> Option<usize> {
        self.0.fit_sample
    }
    /// The named topics (`[[topic]]`).
    pub fn named(&self) -> &[NamedTopic] {
        &self.0.named
    }
    /// Each named topic's zero-shot threshold: its own, else the global one.
    pub fn thresholds(&self) -> Vec<Option<f32>> {
        let global = self.0.min_similarity;
        self.0
            .named
            .iter()
            .map(|t| t.min_similarity.or(global))
            .collect()
    }

    /// Clusters `x` (the reduced vectors): chooses k when it is automatic, runs k-means, and
    /// refines the topics on `terms` (the same documents' TF-IDF rows) when `refine_iter > 0`
    /// and the corpus is at most `minibatch_above` documents. Refinement passes touch every
    /// TF-IDF entry k times each; above the mini-batch threshold they cost more than they give,
    /// so large corpora keep the mini-batch topics (figures in the README). `on_step` hears what
    /// the stage is doing, for the progress bar.
    ///
    /// `previous_k` is the fitted k of the run this one follows, which an automatic k keeps
    /// while it scores close to the best (see [`auto_k`]). With `guides` (the named topics'
    /// vectors), k counts them, an automatic k is at least their number, and the topics are
    /// fitted around them ([`guided`]).
    pub fn fit(
        &self,
        x: ArrayView2<f32>,
        terms: &CsrMatrix,
        (previous_k, guides): (Option<usize>, Option<&guided::Guides>),
        mut on_step: impl FnMut(&str),
    ) -> Result<(Clustering, Option<KSelection>), ClusterError> {
        let p = &self.0;
        let n = x.nrows();
        let base = KMeansParams::new(1)
            .seed(p.seed)
            .runs(self.runs_for(n))
            .max_iter(p.max_iter)
            .tolerance(p.tolerance)
            .minibatch_above(p.minibatch_above);
        let (k, selection) = match p.k {
            KChoice::Fixed { k } => (k, None),
            KChoice::Auto { k_min, k_max } => {
                let named = guides.map_or(0, guided::Guides::len);
                let sel = auto_k::sweep(
                    x,
                    &base,
                    (k_min.max(named), k_max),
                    p.silhouette_sample,
                    p.seed,
                    previous_k,
                    |k| on_step(&format!("trying k = {k}")),
                )?;
                (sel.chosen, Some(sel))
            }
        };
        let clustering = match guides.filter(|g| !g.is_empty()) {
            Some(g) => {
                on_step("fitting the topics around the named ones");
                guided::fit(x, k, g, (p.seed, p.max_iter, p.tolerance, self.runs_for(n)))
            }
            // A streaming run's sample decides the topics of every document: its centroids
            // are polished (the k sweep's are not, as it refits the winner).
            None => base
                .with_k(k)
                .polish(p.fit_sample.is_some())
                .check()?
                .fit(x)?,
        };
        if p.refine_iter > 0 && n <= p.minibatch_above {
            on_step("refining topics on the TF-IDF vectors");
            return Ok((clustering.refine(x, terms, p.refine_iter), selection));
        }
        Ok((clustering, selection))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_default_by_corpus_size() {
        let c = ClusterParams::new().check().unwrap();
        assert_eq!(c.runs_for(10_000), 10);
        assert_eq!(c.runs_for(10_001), 3);
        let c = ClusterParams::new().runs(Some(7)).check().unwrap();
        assert_eq!(c.runs_for(99_999), 7);
    }

    #[test]
    fn every_rule_is_checked() {
        let with =
            |f: fn(ClusterParams) -> ClusterParams| f(ClusterParams::new()).check().unwrap_err();
        use ClusterError as E;
        assert!(matches!(with(|p| p.k(KChoice::Fixed { k: 0 })), E::ZeroK));
        assert!(matches!(
            with(|p| p.k(KChoice::Auto { k_min: 5, k_max: 3 })),
            E::BadKRange { k_min: 5, k_max: 3 }
        ));
        assert!(matches!(with(|p| p.runs(Some(0))), E::ZeroRuns));
        assert!(matches!(with(|p| p.max_iter(0)), E::ZeroMaxIter));
        assert!(matches!(with(|p| p.tolerance(f64::NAN)), E::BadTolerance));
        assert!(matches!(
            with(|p| p.silhouette_sample(50)),
            E::SilhouetteSample(50)
        ));
        assert!(matches!(
            with(|p| p.fit_sample(Some(999))),
            E::FitSample(999, 1_000)
        ));
        assert!(ClusterParams::new().check().is_ok());
    }
}
