//! The clustering a fit gives: each document's topic, its distance to the topic's centroid and
//! to the runner-up, the centroids (and, once refined, the term-space centroids), the sizes,
//! and what follows from them: confidence, outliers, members, merges.
//!
//! It is the one value that leaves the cluster stage, whichever way it was made: k-means
//! ([`super::kmeans`]), refinement in the TF-IDF space ([`super::refine`]), or a saved model's
//! centroids placing new documents (`assign`, streams, Spark). Topics are always numbered by
//! size, largest first, and a topic left empty is dropped, so every reported id has documents.

use ndarray::{Array1, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::refine;
use crate::vectorize::CsrMatrix;

/// The modified z-score below which a document is an outlier of its topic (Iglewicz and
/// Hoaglin's 3.5; see [`Clustering::outliers`]).
pub const OUTLIER_Z: f64 = 3.5;

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
    /// The documents a named topic took by zero-shot (`min-similarity`), before any clustering
    /// (empty when none did).
    zero_shot: Vec<bool>,
    /// Each named topic's topic index, as the guided fit left them (`usize::MAX`: it ended
    /// without documents); empty when no fit named them, or after a refinement or a merge.
    named: Vec<usize>,
}

impl Clustering {
    /// Assigns rows to their nearest centroid, renumbers clusters by size (largest first, ties by
    /// original index) and drops empty clusters.
    pub fn from_centroids(centroids: ArrayView2<f32>, x: ArrayView2<f32>) -> Clustering {
        let (raw, _) = nearest(centroids, x);
        let kept = crate::sample::rows(centroids, &by_size(&raw, centroids.nrows()));
        // Re-predict against the kept centroids: the same assignment, with new ids.
        Self::assign(kept.view(), x)
    }

    /// Topics given by each row's topic (`topics`, indices into `centroids`), which may differ
    /// from its nearest centroid (a zero-shot row of a named topic), renumbered by size; a
    /// centroid without rows is dropped. The first `named` centroids are the named topics'
    /// (see [`Clustering::named`]).
    pub fn from_assignments(
        centroids: ArrayView2<f32>,
        topics: &[usize],
        x: ArrayView2<f32>,
        named: usize,
    ) -> Clustering {
        let order = by_size(topics, centroids.nrows());
        let mut new_id = vec![usize::MAX; centroids.nrows()];
        for (t, &c) in order.iter().enumerate() {
            new_id[c] = t;
        }
        let kept = crate::sample::rows(centroids, &order);
        let own: Vec<Option<usize>> = topics.iter().map(|&t| Some(new_id[t])).collect();
        let mut c = Self::assign_fixed(kept.view(), x, &own);
        c.named = new_id[..named].to_vec();
        c
    }

    /// Rows to the nearest of fixed centroids, ids kept ([`Clustering::assign`]), but a row
    /// with a topic in `fixed` to that topic (a named topic's zero-shot documents): its
    /// distance is to that topic's centroid, its runner-up the nearest other one's.
    pub fn assign_fixed(
        centroids: ArrayView2<f32>,
        x: ArrayView2<f32>,
        fixed: &[Option<usize>],
    ) -> Clustering {
        let mut c = Self::assign(centroids, x);
        let mut changed = false;
        for (i, own) in fixed.iter().enumerate() {
            match *own {
                Some(t) if c.assignments[i] != t => {
                    let d = &x.row(i) - &centroids.row(t);
                    // The nearest centroid is now the runner-up.
                    c.runner_up[i] = c.distances[i];
                    c.distances[i] = d.dot(&d).sqrt();
                    c.assignments[i] = t;
                    changed = true;
                }
                _ => {}
            }
        }
        if changed {
            c.sizes = count(&c.assignments, c.k());
            c.inertia = sum_of_squares(&c.distances);
        }
        c
    }

    /// Refines the topics by spherical k-means on `terms` (the TF-IDF rows of the documents whose
    /// reduced vectors are `x`), at most `max_iter` passes; topics are renumbered by size again
    /// and emptied ones dropped.
    pub fn refine(&self, x: ArrayView2<f32>, terms: &CsrMatrix, max_iter: usize) -> Clustering {
        let r = refine::refine(terms, &self.assignments, self.k(), max_iter);
        let kept = crate::sample::rows(r.centroids.view(), &by_size(&r.assignments, self.k()));
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
            zero_shot: Vec::new(),
            named: Vec::new(),
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
            zero_shot: Vec::new(),
            named: Vec::new(),
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
            zero_shot: Vec::new(),
            named: Vec::new(),
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
    /// Whether each document was taken by a named topic's zero-shot threshold (empty when no
    /// document was).
    pub fn zero_shot(&self) -> &[bool] {
        &self.zero_shot
    }
    /// Each named topic's topic index as the guided fit left them (see the field).
    pub fn named(&self) -> &[usize] {
        &self.named
    }
    /// The same topics, with the documents `taken` marked as placed by zero-shot.
    pub fn with_zero_shot(mut self, taken: Vec<bool>) -> Clustering {
        self.zero_shot = if taken.iter().any(|&t| t) {
            taken
        } else {
            Vec::new()
        };
        self
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
            zero_shot: self.zero_shot.clone(),
            named: Vec::new(),
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
