//! Guided topics: k-means around the named topics' vectors (`[[topic]]`), the rest of k found
//! freely.
//!
//! Why not k-means started from the names' vectors alone: a name's vector is not where its
//! documents are (a short phrase against whole abstracts), and Lloyd's iterations carry a
//! topic started there wherever the data pull it, so the name ends up on a mixture; measured on
//! labelled sets, that start gains on some and nothing on others (docs/benchmarks.md, "Named
//! topics"). Three things keep a named topic on its meaning:
//!
//! 1. **Zero-shot** (only with `min-similarity`): a document at least that similar (cosine) to
//!    a named topic's vector belongs to it, before and after every pass.
//! 2. **A start among its documents**: the named topic starts at the mean of the documents most
//!    like its name ([`TOP_SHARE`] of those whose nearest name it is), the free topics from
//!    greedy k-means++ around them.
//! 3. **An anchor**: each pass moves a named topic to the mean of its documents plus
//!    [`ANCHOR`] times its name's vector (both unit length), so it cannot drift off.
//!
//! Lloyd's passes then run as k-means does (to the tolerance, or `max_iter` passes), with every
//! centroid, named or free, kept at unit length as the rows are (the features k-means
//! clusters), so a row's nearest centroid is its most similar one; with free topics, restarts
//! place them as k-means's restarts do. Everything is seeded and summed in row order: the
//! result is the same at any thread count.

use super::clustering::{nearest_with_runner_up, Clustering};
use super::kmeans::SCREEN_ITER;
use super::seeding;
use ndarray::{Array2, ArrayView2, Axis};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;

/// Share of the documents whose nearest name a named topic is that its start is the mean of
/// (the most similar first).
pub const TOP_SHARE: f64 = 0.25;
/// Weight of a named topic's own vector in each pass's update, against its documents' mean:
/// enough to hold a topic on its name, not so much that a name near every document (a
/// category name against short titles) drags its topic there. Chosen on seven labelled sets
/// over three seeds (docs/benchmarks.md, "Named topics").
pub const ANCHOR: f32 = 0.2;

/// The named topics' vectors in the space k-means clusters (unit rows, one per named topic, in
/// the pipeline file's order) and their zero-shot thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct Guides {
    pub vectors: Array2<f32>,
    pub thresholds: Vec<Option<f32>>,
}

impl Guides {
    /// How many topics are named.
    pub fn len(&self) -> usize {
        self.vectors.nrows()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each row's zero-shot topic: the named topic it is most similar to, when at least that
    /// topic's threshold (`None` for every row without thresholds).
    pub fn zero_shot(&self, x: ArrayView2<f32>) -> Vec<Option<usize>> {
        if self.thresholds.iter().all(Option::is_none) {
            return vec![None; x.nrows()];
        }
        let sims = x.dot(&self.vectors.t());
        sims.outer_iter()
            .map(|s| {
                let j = first_max(s.iter().copied());
                self.thresholds[j].filter(|&t| s[j] >= t).map(|_| j)
            })
            .collect()
    }
}

/// Guided k-means of the rows of `x` into `k` topics, the first `guides.len()` started and
/// anchored at the named topics' vectors; `fixed` rows (zero-shot) keep their named topic.
/// With free topics, `runs` restarts place them (greedy k-means++ around the named ones, one
/// seeded generator), each runs [`SCREEN_ITER`] passes and the one that leaves the rows
/// closest to their centroids goes on, as k-means's restarts do ([`super::kmeans`]): one start
/// can leave a group without a topic of its own, and a named topic then takes it in. Topics
/// are renumbered by size, as every fit's are.
pub fn fit(
    x: ArrayView2<f32>,
    k: usize,
    guides: &Guides,
    (seed, max_iter, tolerance, runs): (u64, u64, f64, usize),
) -> Clustering {
    let fixed = guides.zero_shot(x);
    let mut rng = Xoshiro256Plus::seed_from_u64(seed);
    let runs = if k > guides.len() { runs.max(1) } else { 1 };
    let passes = |start: Array2<f32>, n: u64| lloyd(x, start, guides, &fixed, n, tolerance);
    let centroids = if runs == 1 {
        passes(start(x, k, guides, &fixed, &mut rng), max_iter).0
    } else {
        let screen = SCREEN_ITER.min(max_iter);
        let mut best: Option<(f64, Array2<f32>)> = None;
        for _ in 0..runs {
            let (c, cost) = passes(start(x, k, guides, &fixed, &mut rng), screen);
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                best = Some((cost, c));
            }
        }
        let (_, c) = best.expect("runs is at least 2");
        match max_iter > screen {
            true => passes(c, max_iter - screen).0,
            false => c,
        }
    };
    let topics = assign(x, centroids.view(), &fixed).0;
    Clustering::from_assignments(centroids.view(), &topics, x, guides.len())
        .with_zero_shot(fixed.iter().map(Option::is_some).collect())
}

/// Up to `passes` of Lloyd's iterations (assign, then update; stopping when the centroids move
/// less than `tolerance`), and the rows' summed squared distance to their centroids after them.
fn lloyd(
    x: ArrayView2<f32>,
    mut centroids: Array2<f32>,
    guides: &Guides,
    fixed: &[Option<usize>],
    passes: u64,
    tolerance: f64,
) -> (Array2<f32>, f64) {
    for _ in 0..passes.max(1) {
        let (topics, _) = assign(x, centroids.view(), fixed);
        let next = update(x, &topics, &centroids, guides);
        let moved = (&next - &centroids).mapv(|v| v * v).sum();
        centroids = next;
        if (moved as f64) <= tolerance {
            break;
        }
    }
    let (_, distances) = assign(x, centroids.view(), fixed);
    let cost = distances.iter().map(|&d| f64::from(d) * f64::from(d)).sum();
    (centroids, cost)
}

/// The starting centroids: each named topic at the unit mean of its zero-shot rows and of the
/// rows most like its name, the free topics by greedy k-means++ around them.
fn start(
    x: ArrayView2<f32>,
    k: usize,
    guides: &Guides,
    fixed: &[Option<usize>],
    rng: &mut Xoshiro256Plus,
) -> Array2<f32> {
    let m = guides.len();
    let sims = x.dot(&guides.vectors.t());
    let mut by_name: Vec<Vec<(f32, usize)>> = vec![Vec::new(); m];
    for (i, s) in sims.outer_iter().enumerate() {
        let j = first_max(s.iter().copied());
        by_name[j].push((s[j], i));
    }
    let mut named = Array2::<f32>::zeros((m, x.ncols()));
    for (j, mut rows) in by_name.into_iter().enumerate() {
        rows.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let take = ((rows.len() as f64 * TOP_SHARE).ceil() as usize).max(1);
        let mut c = named.row_mut(j);
        let chosen = rows.iter().take(take).map(|&(_, i)| i);
        let zero_shot = (0..x.nrows()).filter(|&i| fixed[i] == Some(j));
        for i in chosen.chain(zero_shot) {
            c += &x.row(i);
        }
        if c.iter().all(|&v| v == 0.0) {
            c.assign(&guides.vectors.row(j));
        }
        crate::norm::unit(c);
    }
    seeding::greedy_kmeans_pp_around(x, named.view(), k, rng)
}

/// Each row's nearest centroid, but a zero-shot row's named topic; and each row's distance to
/// the centroid of its topic.
fn assign(
    x: ArrayView2<f32>,
    centroids: ArrayView2<f32>,
    fixed: &[Option<usize>],
) -> (Vec<usize>, Vec<f32>) {
    let (nearest, best, _) = nearest_with_runner_up(centroids, x);
    let mut distances = best;
    let topics = nearest
        .into_iter()
        .zip(fixed)
        .enumerate()
        .map(|(i, (t, f))| match f {
            Some(j) if *j != t => {
                let d = &x.row(i) - &centroids.row(*j);
                distances[i] = d.dot(&d).sqrt();
                *j
            }
            _ => t,
        })
        .collect();
    (topics, distances)
}

/// The next centroids: each topic's mean (sums in row order) at unit length, a named topic's
/// anchored to its vector; a topic without rows keeps its centroid. Every centroid is a unit
/// vector, as the rows are, so a row's nearest centroid is its most similar one, named or free
/// (with free topics at their plain means, shorter than one, a named topic's unit centroid was
/// farther from every row than a free one as similar, and lost its documents to them).
fn update(
    x: ArrayView2<f32>,
    topics: &[usize],
    centroids: &Array2<f32>,
    guides: &Guides,
) -> Array2<f32> {
    let (k, d) = centroids.dim();
    let mut sums = Array2::<f64>::zeros((k, d));
    let mut counts = vec![0usize; k];
    for (row, &t) in x.axis_iter(Axis(0)).zip(topics) {
        let mut s = sums.row_mut(t);
        s.zip_mut_with(&row, |a, &b| *a += f64::from(b));
        counts[t] += 1;
    }
    let mut next = centroids.clone();
    for (t, mut c) in next.axis_iter_mut(Axis(0)).enumerate() {
        if counts[t] == 0 {
            continue;
        }
        let n = counts[t] as f64;
        c.assign(&sums.row(t).mapv(|v| (v / n) as f32));
        crate::norm::unit(c.view_mut());
        if t < guides.len() {
            c.scaled_add(ANCHOR, &guides.vectors.row(t));
            crate::norm::unit(c);
        }
    }
    next
}

/// The index of the first largest value.
fn first_max(values: impl Iterator<Item = f32>) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, v) in values.enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Unit rows around three directions, `per` each, and a stray.
    fn three_groups(per: usize) -> Array2<f32> {
        let mut rows = Vec::new();
        for i in 0..3 * per {
            let g = i % 3;
            let jitter = ((i * 7919) % 97) as f32 / 400.0;
            let mut v = [jitter, jitter, jitter];
            v[g] += 1.0;
            rows.extend_from_slice(&v);
        }
        let mut x = Array2::from_shape_vec((3 * per, 3), rows).unwrap();
        crate::norm::unit_rows(x.view_mut());
        x
    }

    #[test]
    fn a_named_topic_grows_around_its_name_and_the_rest_are_found() {
        let x = three_groups(20);
        let mut g = array![[0.0f32, 0.9, 0.1]];
        crate::norm::unit_rows(g.view_mut());
        let guides = Guides {
            vectors: g,
            thresholds: vec![None],
        };
        let c = fit(x.view(), 3, &guides, (7, 100, 1e-8, 4));
        assert_eq!(c.k(), 3);
        // Every group is one topic: rows i, i + 3, i + 6 ... share a topic.
        for i in 0..x.nrows() {
            assert_eq!(c.assignments()[i], c.assignments()[i % 3], "row {i}");
        }
        // The named topic (the second group's) stays near its name.
        let named = c.assignments()[1];
        let cos = c.centroids().row(named).dot(&guides.vectors.row(0));
        assert!(cos > 0.9, "{cos}");
        // The same inputs and seed: the same topics.
        assert_eq!(fit(x.view(), 3, &guides, (7, 100, 1e-8, 4)), c);
    }

    /// Overlapping groups (each row its group's axis plus noise in 24 dimensions, unit length:
    /// a group's mean is far shorter than one), one named and three free topics: the named
    /// topic holds most of its group (with the free topics at their plain means it held 23 of
    /// 60).
    #[test]
    fn a_named_topic_holds_its_group_beside_free_topics() {
        let (groups, per, dims) = (4usize, 60usize, 24usize);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 1000) as f32 / 1000.0 - 0.5
        };
        let mut x = Array2::<f32>::zeros((groups * per, dims));
        for (i, mut row) in x.outer_iter_mut().enumerate() {
            row.iter_mut().for_each(|v| *v = noise() * 1.4);
            row[i % groups] += 1.0;
        }
        crate::norm::unit_rows(x.view_mut());
        let mut g = Array2::<f32>::zeros((1, dims));
        g[[0, 2]] = 1.0;
        let guides = Guides {
            vectors: g,
            thresholds: vec![None],
        };
        let c = fit(x.view(), groups, &guides, (3, 100, 1e-8, 5));
        let named = c.named()[0];
        let held = (0..x.nrows())
            .filter(|&i| i % groups == 2 && c.assignments()[i] == named)
            .count();
        let others = (0..x.nrows())
            .filter(|&i| i % groups != 2 && c.assignments()[i] == named)
            .count();
        assert!(held >= per * 3 / 4, "{held} of {per} in the named topic");
        assert!(others <= per / 4, "{others} others in the named topic");
    }

    #[test]
    fn zero_shot_rows_stay_with_their_name_whatever_k_means_says() {
        let x = three_groups(10);
        let mut g = array![[1.0f32, 0.0, 0.0]];
        crate::norm::unit_rows(g.view_mut());
        // A threshold every row of the first group meets, and no other row.
        let guides = Guides {
            vectors: g,
            thresholds: vec![Some(0.95)],
        };
        let fixed = guides.zero_shot(x.view());
        assert_eq!(fixed.iter().filter(|f| f.is_some()).count(), 10);
        let c = fit(x.view(), 2, &guides, (1, 100, 1e-8, 4));
        let first = c.assignments()[0];
        for (i, f) in fixed.iter().enumerate() {
            if f.is_some() {
                assert_eq!(c.assignments()[i], first);
            }
        }
    }
}
