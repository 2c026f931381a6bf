//! The neighbour graph the map is laid out from: UMAP's fuzzy simplicial set.
//!
//! Each document's distances to its `k` neighbours are turned into memberships
//! `exp(-(d - ρ) / σ)`, where `ρ` is the distance to its nearest neighbour and `σ` is found so
//! the memberships sum to `log2(k)` (McInnes, Healy & Melville 2018, §3). The
//! graph is the fuzzy union of both directions, `a + b - a·b`. The same memberships weight the
//! neighbours a new document is placed between ([`smooth_weights`]).

use super::knn::Neighbours;

/// Steps of the search for `σ`, at most.
const STEPS: usize = 64;
/// The search stops when the memberships sum to `log2(k)` within this share of it (0.1%: the
/// weights then move a placed document by a thousandth of its neighbours' spread).
const TOLERANCE: f32 = 1e-3;
/// Smallest `σ`, relative to the mean neighbour distance (UMAP's `MIN_K_DIST_SCALE`).
const MIN_SIGMA_SCALE: f32 = 1e-3;

/// An undirected weighted edge list, each edge once (`head < tail`), sorted.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub n: usize,
    pub edges: Vec<(u32, u32, f32)>,
}

/// The memberships `exp(-(d - ρ) / σ)` of one document's neighbour distances (ascending).
///
/// `σ` is found by Newton's method on the sum of the memberships, which grows with `σ`, kept
/// inside a bracket that every step narrows (a bisection step whenever Newton's would leave it).
/// Started from the mean gap `d - ρ`, it needs far fewer steps than umap-learn's plain bisection,
/// and every step is `k` exponentials for every placed document.
pub fn smooth_weights(distances: &[f32]) -> Vec<f32> {
    let Some(&rho) = distances.first() else {
        return Vec::new();
    };
    let k = distances.len() as f32;
    let target = k.log2().max(1e-3);
    let mean = distances.iter().sum::<f32>() / k;
    let gaps: Vec<f32> = distances.iter().map(|&d| (d - rho).max(0.0)).collect();
    let mean_gap = gaps.iter().sum::<f32>() / k;
    let (mut lo, mut hi) = (0.0f32, f32::INFINITY);
    let mut sigma = if mean_gap > 0.0 { mean_gap } else { 1.0 };
    for _ in 0..STEPS {
        // The sum of the memberships, and its slope in σ.
        let (mut sum, mut slope) = (0.0f32, 0.0f32);
        for &g in &gaps {
            let w = (-g / sigma).exp();
            sum += w;
            slope += w * g;
        }
        slope /= sigma * sigma;
        if (sum - target).abs() < TOLERANCE * target {
            break;
        }
        if sum > target {
            hi = sigma;
        } else {
            lo = sigma;
        }
        let newton = sigma - (sum - target) / slope;
        sigma = if slope > 0.0 && newton > lo && newton < hi {
            newton
        } else if hi.is_finite() {
            (lo + hi) / 2.0
        } else {
            sigma * 2.0
        };
    }
    let sigma = sigma.max(MIN_SIGMA_SCALE * mean).max(f32::MIN_POSITIVE);
    gaps.iter().map(|&g| (-g / sigma).exp()).collect()
}

/// The fuzzy union of every document's memberships to its neighbours.
pub fn fuzzy_graph(nb: &Neighbours, n: usize) -> Graph {
    let mut directed: Vec<(u32, u32, f32)> = Vec::with_capacity(n * nb.k);
    for i in 0..n {
        let (idx, dist): (Vec<usize>, Vec<f32>) = nb.of(i).unzip();
        for (j, w) in idx.into_iter().zip(smooth_weights(&dist)) {
            if j != i && w > 0.0 {
                let (a, b) = if i < j { (i, j) } else { (j, i) };
                directed.push((a as u32, b as u32, w));
            }
        }
    }
    directed.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)).then(x.2.total_cmp(&y.2)));
    let mut edges: Vec<(u32, u32, f32)> = Vec::with_capacity(directed.len());
    for (a, b, w) in directed {
        match edges.last_mut() {
            // The other direction of the same pair: fuzzy union.
            Some(last) if last.0 == a && last.1 == b => last.2 = last.2 + w - last.2 * w,
            _ => edges.push((a, b, w)),
        }
    }
    Graph { n, edges }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memberships_sum_to_log2_k_and_start_at_one() {
        let d = [0.1f32, 0.2, 0.25, 0.4, 0.5, 0.6, 0.7, 0.9];
        let w = smooth_weights(&d);
        assert!((w[0] - 1.0).abs() < 1e-6);
        let sum: f32 = w.iter().sum();
        assert!((sum - 3.0).abs() <= TOLERANCE * 3.0, "sum {sum}");
        assert!(w.windows(2).all(|p| p[0] >= p[1]));
    }

    #[test]
    fn equal_or_spread_distances_give_finite_memberships() {
        assert_eq!(smooth_weights(&[0.3; 6]), vec![1.0; 6]);
        let w = smooth_weights(&[0.0, 0.01, 0.9, 0.95, 1.0, 1.4]);
        let sum: f32 = w.iter().sum();
        assert!(
            (sum - 6f32.log2()).abs() <= TOLERANCE * 6f32.log2(),
            "sum {sum}"
        );
        assert!(smooth_weights(&[]).is_empty());
    }

    #[test]
    fn both_directions_of_an_edge_are_joined() {
        let nb = Neighbours {
            k: 2,
            index: vec![1, 2, 0, 2, 0, 1],
            distance: vec![0.1, 0.3, 0.1, 0.2, 0.3, 0.2],
        };
        let g = fuzzy_graph(&nb, 3);
        let pairs: Vec<(u32, u32)> = g.edges.iter().map(|e| (e.0, e.1)).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2), (1, 2)]);
        assert!(g.edges.iter().all(|e| e.2 > 0.0 && e.2 <= 1.0));
    }
}
