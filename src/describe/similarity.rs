//! How alike the topics are: the cosine similarity of every pair of topic centroids, for the
//! similarity heatmap and the report.

use ndarray::ArrayView2;

/// Cosine similarity of every pair of centroids.
pub fn centroid_similarity(centroids: ArrayView2<f32>) -> Vec<Vec<f64>> {
    let c = centroids.mapv(f64::from);
    let norms: Vec<f64> = c.outer_iter().map(|r| r.dot(&r).sqrt()).collect();
    let dots = c.dot(&c.t());
    (0..c.nrows())
        .map(|i| {
            (0..c.nrows())
                .map(|j| {
                    let n = norms[i] * norms[j];
                    if n > 0.0 {
                        dots[[i, j]] / n
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
    use ndarray::array;

    #[test]
    fn cosine_of_centroids() {
        let c = array![[1.0f32, 0.0], [1.0, 1.0], [0.0, 0.0]];
        let s = centroid_similarity(c.view());
        assert_abs_diff_eq!(s[0][0], 1.0, epsilon = 1e-12);
        assert_abs_diff_eq!(s[0][1], 1.0 / 2f64.sqrt(), epsilon = 1e-12);
        assert_eq!(s[2][0], 0.0);
    }
}
