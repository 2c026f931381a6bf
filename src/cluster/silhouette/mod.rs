//! Mean silhouette coefficient (Euclidean distance) of a labeling, as
//! `sklearn.metrics.silhouette_score`, and sklearn's `inertia_` (sum of squared distances to
//! the assigned centres).
//!
//! It lives in `cluster/` because automatic k scores every k of its sweep with it; the evaluate
//! stage, which runs later, reports it for the chosen topics too.
//!
//! Why it is done this way:
//! - The silhouette is quadratic in the number of points, so large inputs are scored on a seeded
//!   random sample of rows, as sklearn's `sample_size` does: the score is the silhouette of the
//!   sub-sample alone. Without an explicit size at most [`DEFAULT_MAX_SAMPLE`] rows are used.
//! - An automatic-k sweep scores many labelings of the same points, so [`SilhouetteSample::new`]
//!   computes the sample's pairwise distances once and [`SilhouetteSample::score`] only sums
//!   them per cluster, in O(s^2) with no allocation per pair.
//! - The distances are symmetric, so only the strict lower triangle is stored (f32, packed by
//!   rows): s(s-1)/2 values, 800 MB at the cap of 20,000 rows instead of 1.6 GB.
//! - Distances use |x|^2 + |y|^2 - 2 x.y on the sample upcast to f64, as sklearn does for f32
//!   input (f64 keeps the cancellation error far below f32 resolution), with the dot products
//!   from tiled GEMMs (ndarray/matrixmultiply, which picks SIMD kernels at run time); the result
//!   is clamped at 0 before the square root and stored as f32. Cluster sums of distances are
//!   accumulated in f64.
//! - Scoring: for each row, the distances to earlier rows (its own packed slice) are gathered
//!   cluster by cluster (no read-modify-write chains), and those to later rows are added for a
//!   block of consecutive rows at once (they are adjacent in every later packed row).
//! - Work is split over rows with rayon, and every row's sums are taken in an order that does
//!   not depend on the split, so results are bit-identical whatever the number of threads.

use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array2, ArrayView2};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;
use rayon::prelude::*;
use std::ops::Range;

use thiserror::Error;

/// Rows sampled when `sample_size` is `None` and `x` has more rows than this; also the largest
/// accepted explicit `sample_size` (the packed distance matrix then takes 800 MB).
pub const DEFAULT_MAX_SAMPLE: usize = 20_000;

/// The sample sizes a pipeline may ask for (`cluster.silhouette-sample`).
pub const SAMPLE_RANGE: std::ops::RangeInclusive<usize> = 100..=DEFAULT_MAX_SAMPLE;

/// Rows per tile of the distance computation in [`SilhouetteSample::new`] (a 128 x 128 f64
/// Gram block is 128 KB).
const TILE: usize = 128;

/// Budget (in f64 values) of the per-thread cluster-sum buffer of [`SilhouetteSample::score`];
/// it sets how many rows are scored together (their distances to a later row are adjacent in
/// memory). The block size does not change the result.
const SCORE_BUFFER: usize = 16_384;

/// Errors of the silhouette and the inertia, one variant per rule (scikit-learn's rules and
/// messages).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SilhouetteError {
    /// The point matrix must have at least one row.
    #[error("x must have at least one row")]
    NoRows,
    /// The point matrix must have at least one column.
    #[error("x must have at least one column")]
    NoColumns,
    /// `sample_size` must be at least 1.
    #[error("sample_size cannot be 0")]
    ZeroSampleSize,
    /// The silhouette sample is capped because its distance matrix grows quadratically.
    #[error(
        "sample_size cannot exceed {max} (got {got}); the pairwise distance matrix grows with \
         the square of the sample size"
    )]
    SampleTooLarge {
        /// The requested sample size.
        got: usize,
        /// The largest allowed sample size.
        max: usize,
    },
    /// Points must be finite (sklearn rejects NaN and infinity too).
    #[error("x must contain only finite values (row {row} does not)")]
    NonFinite {
        /// Index (in `x`) of the first offending row.
        row: usize,
    },
    /// There must be exactly one label per row of `x`.
    #[error("labels must have one entry per row of x (got {labels} labels for {rows} rows)")]
    LabelsLength {
        /// Number of labels given.
        labels: usize,
        /// Number of rows of `x`.
        rows: usize,
    },
    /// sklearn's rule for the silhouette: 2 <= distinct labels <= samples - 1.
    #[error(
        "number of distinct labels in the sample is {labels}; valid values are 2 to \
         n_samples - 1 (inclusive) with n_samples = {samples}"
    )]
    InvalidLabelCount {
        /// Distinct labels among the sampled rows.
        labels: usize,
        /// Number of sampled rows.
        samples: usize,
    },
    /// Points and centroids must have the same number of columns.
    #[error("x and centroids must have the same number of columns (got {x} and {centroids})")]
    DimensionMismatch {
        /// Columns of `x`.
        x: usize,
        /// Columns of the centroids.
        centroids: usize,
    },
    /// Every label must index a row of the centroid matrix.
    #[error(
        "label {label} of row {row} is not a centroid index (there are {centroids} centroids)"
    )]
    LabelOutOfRange {
        /// Row of `x` whose label is out of range.
        row: usize,
        /// The offending label.
        label: usize,
        /// Number of centroids.
        centroids: usize,
    },
}

/// A (sampled) set of points with their pairwise Euclidean distances, ready to score labelings
/// with the mean silhouette coefficient.
#[derive(Debug, Clone)]
pub struct SilhouetteSample {
    /// Rows of `x` in the sample, increasing.
    indices: Vec<usize>,
    /// Number of rows of the `x` the sample was drawn from.
    n_rows: usize,
    /// Strict lower triangle of the distance matrix, packed by rows: row `i` holds the
    /// distances to rows `0..i` and starts at `i * (i - 1) / 2`.
    dist: Vec<f32>,
}

/// Start of packed row `i` of the strict lower triangle.
#[inline]
fn row_start(i: usize) -> usize {
    i * i.saturating_sub(1) / 2
}

/// Sum of `row[p]` over the positions `idx`, in f64 with four interleaved accumulators (a fixed
/// order, so the result is reproducible).
#[inline]
fn gather_sum(row: &[f32], idx: &[u32]) -> f64 {
    let mut acc = [0.0f64; 4];
    let mut chunks = idx.chunks_exact(4);
    for q in &mut chunks {
        for l in 0..4 {
            acc[l] += f64::from(row[q[l] as usize]);
        }
    }
    let tail: f64 = chunks
        .remainder()
        .iter()
        .map(|&p| f64::from(row[p as usize]))
        .sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

impl SilhouetteSample {
    /// Draws the sample and computes its pairwise distances.
    ///
    /// `x`: one point per row. `sample_size`: number of rows to score; `None` means all rows,
    /// except that when `x` has more than [`DEFAULT_MAX_SAMPLE`] (20,000) rows a sample of
    /// 20,000 is still drawn, to bound time and memory. A size of at least `x.nrows()` takes
    /// every row (sklearn slices a permutation the same way). The sample is drawn with
    /// `Xoshiro256Plus::seed_from_u64(seed)`; the same inputs and seed give the same sample.
    ///
    /// # Errors
    /// [`SilhouetteError::NoRows`], [`SilhouetteError::NoColumns`], [`SilhouetteError::ZeroSampleSize`],
    /// [`SilhouetteError::SampleTooLarge`] (explicit size above 20,000) and
    /// [`SilhouetteError::NonFinite`] (a sampled row holds NaN or infinity).
    pub fn new(
        x: ArrayView2<f32>,
        sample_size: Option<usize>,
        seed: u64,
    ) -> Result<Self, SilhouetteError> {
        let (n_rows, dims) = x.dim();
        if n_rows == 0 {
            return Err(SilhouetteError::NoRows);
        }
        if dims == 0 {
            return Err(SilhouetteError::NoColumns);
        }
        let indices = draw_sample(n_rows, sample_size, seed)?;
        check_finite(x, &indices)?;
        let points = upcast_rows(x, &indices);
        let dist = packed_distances(&points);
        Ok(Self {
            indices,
            n_rows,
            dist,
        })
    }

    /// Mean silhouette coefficient of `labels` over the sampled rows.
    ///
    /// `labels` holds a cluster id for every row of the `x` given to [`Self::new`]
    /// (`labels.len() == x.nrows()`); only the sampled rows' labels are used, with any `usize`
    /// values. As in sklearn, a point alone in its cluster scores 0, and a point whose intra- and
    /// nearest-cluster mean distances are both 0 scores 0.
    ///
    /// # Errors
    /// [`SilhouetteError::LabelsLength`] when the length is wrong, and
    /// [`SilhouetteError::InvalidLabelCount`] unless 2 <= distinct labels in the sample <= s - 1
    /// (sklearn's rule).
    pub fn score(&self, labels: &[usize]) -> Result<f64, SilhouetteError> {
        self.score_with(labels, None)
    }

    /// [`Self::score`] with an explicit number of rows scored together (tests vary it; the
    /// result does not depend on it). `None` picks it from the buffer budget.
    ///
    /// The sampled rows' labels are grouped by cluster; then each block of rows gets its
    /// distance sums to every cluster and, from them, each row's silhouette; the score is
    /// their mean.
    fn score_with(
        &self,
        labels: &[usize],
        block_rows: Option<usize>,
    ) -> Result<f64, SilhouetteError> {
        if labels.len() != self.n_rows {
            return Err(SilhouetteError::LabelsLength {
                labels: labels.len(),
                rows: self.n_rows,
            });
        }
        let s = self.indices.len();
        let sampled: Vec<usize> = self.indices.iter().map(|&r| labels[r]).collect();
        let clusters = Clusters::of(&sampled)?;
        let k = clusters.k();
        let block_rows = block_rows
            .unwrap_or((SCORE_BUFFER / k).clamp(8, 256))
            .max(1);
        let mut sil = vec![0.0f64; s];
        sil.par_chunks_mut(block_rows).enumerate().for_each_init(
            || ClusterSums::new(k, block_rows),
            |sums, (block, out)| {
                let rows = block * block_rows..block * block_rows + out.len();
                self.sum_by_cluster(&clusters, rows.clone(), sums);
                for (r, o) in out.iter_mut().enumerate() {
                    let own = clusters.label[rows.start + r];
                    *o = clusters.silhouette(own, |c| sums.get(c, r));
                }
            },
        );
        Ok(sil.iter().sum::<f64>() / s as f64)
    }

    /// Fills `sums` with the distance sums from each row of `rows` (consecutive sample
    /// positions) to each cluster.
    fn sum_by_cluster(&self, clusters: &Clusters, rows: Range<usize>, sums: &mut ClusterSums) {
        let dist = &self.dist;
        let (i0, i1) = (rows.start, rows.end);
        // cut[c]: members of cluster c before the current row.
        for (c, ct) in sums.cut.iter_mut().enumerate() {
            *ct = clusters.members(c).partition_point(|&p| (p as usize) < i0);
        }
        // Columns j < i: gathered from the row's own packed slice, cluster by cluster.
        for i in rows {
            let r = i - i0;
            let row = &dist[row_start(i)..row_start(i) + i];
            for c in 0..clusters.k() {
                let group = &clusters.members(c)[..sums.cut[c]];
                sums.sums[c * sums.stride + r] = gather_sum(row, group);
            }
            sums.cut[clusters.label[i]] += 1;
        }
        // Columns j > i: entry i of packed row j, for all block rows i < j at once.
        for j in i0 + 1..self.indices.len() {
            let end = j.min(i1);
            let row = &dist[row_start(j) + i0..row_start(j) + end];
            let c = clusters.label[j] * sums.stride;
            for (acc, &d) in sums.sums[c..c + (end - i0)].iter_mut().zip(row) {
                *acc += f64::from(d);
            }
        }
    }

    /// Number of sampled rows.
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// Always `false`: a sample has at least one row.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Rows of `x` in the sample, in increasing order.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
}

/// The sampled rows of an `n_rows`-row matrix, in increasing order: every row when the sample
/// size (`sample_size`, or [`DEFAULT_MAX_SAMPLE`]) is at least `n_rows`, else a seeded draw
/// without replacement.
fn draw_sample(
    n_rows: usize,
    sample_size: Option<usize>,
    seed: u64,
) -> Result<Vec<usize>, SilhouetteError> {
    let wanted = match sample_size {
        Some(0) => return Err(SilhouetteError::ZeroSampleSize),
        Some(s) if s > DEFAULT_MAX_SAMPLE => {
            return Err(SilhouetteError::SampleTooLarge {
                got: s,
                max: DEFAULT_MAX_SAMPLE,
            })
        }
        Some(s) => s,
        None => DEFAULT_MAX_SAMPLE,
    };
    Ok(if wanted >= n_rows {
        (0..n_rows).collect()
    } else {
        let mut rng = Xoshiro256Plus::seed_from_u64(seed);
        let mut v = rand::seq::index::sample(&mut rng, n_rows, wanted).into_vec();
        v.sort_unstable();
        v
    })
}

/// Refuses a sampled row holding NaN or infinity.
fn check_finite(x: ArrayView2<f32>, indices: &[usize]) -> Result<(), SilhouetteError> {
    match indices
        .iter()
        .find(|&&r| x.row(r).iter().any(|v| !v.is_finite()))
    {
        Some(&row) => Err(SilhouetteError::NonFinite { row }),
        None => Ok(()),
    }
}

/// The sampled rows, upcast to f64 (as sklearn does for f32 input).
fn upcast_rows(x: ArrayView2<f32>, indices: &[usize]) -> Array2<f64> {
    Array2::from_shape_fn((indices.len(), x.ncols()), |(t, c)| {
        f64::from(x[[indices[t], c]])
    })
}

/// The strict lower triangle of the pairwise distances of `points`, packed by rows.
///
/// Tile pairs (row tile, earlier column tile): one f64 GEMM of TILE x dims by dims x TILE
/// each, then |x|^2 + |y|^2 - 2 x.y clamped at 0. The tiling is fixed, so every distance is
/// computed the same way whatever the number of threads.
fn packed_distances(points: &Array2<f64>) -> Vec<f32> {
    let s = points.nrows();
    let norms: Vec<f64> = points.rows().into_iter().map(|p| p.dot(&p)).collect();
    let mut dist = vec![0.0f32; row_start(s)];
    let mut rows = packed_rows_mut(&mut dist, s);
    rows.par_chunks_mut(TILE).enumerate().for_each_init(
        || Array2::<f64>::zeros((TILE, TILE)),
        |gram, (bi, outs)| distance_tile_row(points, &norms, bi * TILE, outs, gram),
    );
    dist
}

/// `dist` cut into its `s` packed rows: row `i` holds the distances to rows `0..i`.
fn packed_rows_mut(dist: &mut [f32], s: usize) -> Vec<&mut [f32]> {
    let mut rows: Vec<&mut [f32]> = Vec::with_capacity(s);
    let mut rest = dist;
    for i in 0..s {
        let (head, tail) = rest.split_at_mut(i);
        rows.push(head);
        rest = tail;
    }
    rows
}

/// The distances of the rows from `i0` on (`outs`, one packed row each, at most [`TILE`]) to
/// every earlier row, one tile of earlier rows at a time, with `gram` as the tile's buffer.
fn distance_tile_row(
    points: &Array2<f64>,
    norms: &[f64],
    i0: usize,
    outs: &mut [&mut [f32]],
    gram: &mut Array2<f64>,
) {
    let s = points.nrows();
    let ni = outs.len();
    let a = points.slice(s![i0..i0 + ni, ..]);
    for j0 in (0..=i0).step_by(TILE) {
        let nj = TILE.min(s - j0);
        let b = points.slice(s![j0..j0 + nj, ..]);
        let mut g = gram.slice_mut(s![..ni, ..nj]);
        general_mat_mul(1.0, &a, &b.t(), 0.0, &mut g);
        for (r, out) in outs.iter_mut().enumerate() {
            let i = i0 + r;
            let j_end = (j0 + nj).min(i);
            for j in j0..j_end {
                let d2 = norms[i] + norms[j] - 2.0 * g[[r, j - j0]];
                out[j] = d2.max(0.0).sqrt() as f32;
            }
        }
    }
}

/// A labeling of the sample: dense cluster ids (in increasing label order) and each cluster's
/// members.
struct Clusters {
    /// Dense cluster id of each sample position.
    label: Vec<usize>,
    /// Members of each cluster.
    sizes: Vec<usize>,
    /// Sample positions grouped by cluster, increasing within each cluster: cluster c is
    /// `members[starts[c]..starts[c + 1]]`.
    starts: Vec<usize>,
    members: Vec<u32>,
}

impl Clusters {
    /// Groups the sample positions by their labels `sampled`.
    ///
    /// # Errors
    /// [`SilhouetteError::InvalidLabelCount`] unless 2 <= distinct labels <= positions - 1.
    fn of(sampled: &[usize]) -> Result<Clusters, SilhouetteError> {
        let s = sampled.len();
        let mut uniq = sampled.to_vec();
        uniq.sort_unstable();
        uniq.dedup();
        let k = uniq.len();
        if k < 2 || k >= s {
            return Err(SilhouetteError::InvalidLabelCount {
                labels: k,
                samples: s,
            });
        }
        let label: Vec<usize> = sampled
            .iter()
            .map(|l| uniq.binary_search(l).unwrap_or(0))
            .collect();
        let mut sizes = vec![0usize; k];
        for &c in &label {
            sizes[c] += 1;
        }
        let mut starts = vec![0usize; k + 1];
        for c in 0..k {
            starts[c + 1] = starts[c] + sizes[c];
        }
        let mut members = vec![0u32; s];
        let mut fill = starts.clone();
        for (pos, &c) in label.iter().enumerate() {
            members[fill[c]] = pos as u32;
            fill[c] += 1;
        }
        Ok(Clusters {
            label,
            sizes,
            starts,
            members,
        })
    }

    /// Number of clusters.
    fn k(&self) -> usize {
        self.sizes.len()
    }

    /// The sample positions of cluster `c`, increasing.
    fn members(&self, c: usize) -> &[u32] {
        &self.members[self.starts[c]..self.starts[c + 1]]
    }

    /// The silhouette of a point of cluster `own` whose distance sum to each cluster `c` is
    /// `sum(c)`: (b - a) / max(a, b) with a the mean distance within its cluster and b the
    /// smallest mean distance to another; 0 alone in its cluster or when a = b = 0.
    fn silhouette(&self, own: usize, sum: impl Fn(usize) -> f64) -> f64 {
        if self.sizes[own] <= 1 {
            return 0.0;
        }
        let a = sum(own) / (self.sizes[own] - 1) as f64;
        let b = (0..self.k())
            .filter(|&c| c != own)
            .map(|c| sum(c) / self.sizes[c] as f64)
            .fold(f64::INFINITY, f64::min);
        let m = a.max(b);
        if m > 0.0 {
            (b - a) / m
        } else {
            0.0
        }
    }
}

/// A thread's buffers for scoring a block of rows: the distance sums from each row to each
/// cluster, and a cursor per cluster.
struct ClusterSums {
    /// `sums[c * stride + r]`: distance sum from the block's row `r` to cluster `c`.
    sums: Vec<f64>,
    /// Rows per block.
    stride: usize,
    /// `cut[c]`: members of cluster `c` before the row being summed.
    cut: Vec<usize>,
}

impl ClusterSums {
    fn new(k: usize, block_rows: usize) -> ClusterSums {
        ClusterSums {
            sums: vec![0.0f64; k * block_rows],
            stride: block_rows,
            cut: vec![0usize; k],
        }
    }

    /// The distance sum from the block's row `r` to cluster `c`.
    #[inline]
    fn get(&self, c: usize, r: usize) -> f64 {
        self.sums[c * self.stride + r]
    }
}

/// sklearn-style inertia: the sum over rows of the squared Euclidean distance from `x[i]` to
/// `centroids[labels[i]]` (sklearn's `inertia_` is this sum when `labels` are the closest
/// centres; linfa's `inertia()` is a mean instead). Accumulated in f64 in fixed-size chunks of
/// rows, so the result does not depend on the number of threads.
///
/// # Errors
/// [`SilhouetteError::LabelsLength`], [`SilhouetteError::DimensionMismatch`] and
/// [`SilhouetteError::LabelOutOfRange`].
pub fn inertia(
    x: ArrayView2<f32>,
    labels: &[usize],
    centroids: ArrayView2<f32>,
) -> Result<f64, SilhouetteError> {
    const CHUNK: usize = 4096;
    if labels.len() != x.nrows() {
        return Err(SilhouetteError::LabelsLength {
            labels: labels.len(),
            rows: x.nrows(),
        });
    }
    if x.ncols() != centroids.ncols() {
        return Err(SilhouetteError::DimensionMismatch {
            x: x.ncols(),
            centroids: centroids.ncols(),
        });
    }
    let k = centroids.nrows();
    if let Some(row) = labels.iter().position(|&l| l >= k) {
        return Err(SilhouetteError::LabelOutOfRange {
            row,
            label: labels[row],
            centroids: k,
        });
    }
    let partial: Vec<f64> = labels
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(chunk, labs)| {
            let mut sum = 0.0f64;
            for (r, &l) in labs.iter().enumerate() {
                let p = x.row(chunk * CHUNK + r);
                let c = centroids.row(l);
                sum += p
                    .iter()
                    .zip(c.iter())
                    .map(|(a, b)| {
                        let d = f64::from(*a) - f64::from(*b);
                        d * d
                    })
                    .sum::<f64>();
            }
            sum
        })
        .collect();
    Ok(partial.iter().sum())
}

#[cfg(test)]
mod tests;
