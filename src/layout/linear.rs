//! The linear layout: the map's fallback and the embedding's starting point.
//!
//! It projects every document onto the two principal axes of the topic centroids (weighted
//! by topic size), found by power iteration on their covariance. Axes fitted on the centroids
//! spread the topics apart, where a PCA of all documents would show one overlapping cloud; the
//! projection is linear, so distances along the axes still mean something.

use ndarray::{Array1, Array2, ArrayView2, Axis};

/// Documents and topic centroids on the centroids' two main axes.
pub struct Projected {
    pub documents: Vec<[f32; 2]>,
    pub centres: Vec<[f32; 2]>,
}

/// Projects documents and centroids onto the centroids' two main axes.
pub fn project(vectors: ArrayView2<f32>, centroids: ArrayView2<f32>, sizes: &[usize]) -> Projected {
    let d = centroids.ncols();
    let c = centroids.mapv(f64::from);
    let w: Array1<f64> = sizes.iter().map(|&s| s as f64).collect();
    let total = w.sum().max(1.0);
    let mean: Array1<f64> = c.t().dot(&w) / total;
    let centred = &c - &mean.view().insert_axis(Axis(0));
    let weighted = &centred * &w.view().insert_axis(Axis(1));
    let cov: Array2<f64> = centred.t().dot(&weighted) / total;
    let a1 = principal_axis(&cov, None);
    let a2 = principal_axis(&cov, Some(&a1));
    let proj = |row: ndarray::ArrayView1<f32>| -> [f32; 2] {
        let (mut x, mut y) = (0.0f64, 0.0f64);
        for j in 0..d {
            let v = row[j] as f64 - mean[j];
            x += v * a1[j];
            y += v * a2[j];
        }
        [x as f32, y as f32]
    };
    Projected {
        documents: vectors.outer_iter().map(proj).collect(),
        centres: centroids.outer_iter().map(proj).collect(),
    }
}

/// The leading eigenvector of `cov` (orthogonal to `not` when given), by power iteration from a
/// fixed start, with the sign fixed so the largest entry is positive.
fn principal_axis(cov: &Array2<f64>, not: Option<&Array1<f64>>) -> Array1<f64> {
    let d = cov.nrows();
    let mut v: Array1<f64> = (0..d).map(|i| 1.0 + (i as f64 * 0.618).fract()).collect();
    let deflate = |v: &mut Array1<f64>| {
        if let Some(u) = not {
            let p = v.dot(u);
            v.scaled_add(-p, u);
        }
    };
    deflate(&mut v);
    for _ in 0..300 {
        let mut next = cov.dot(&v);
        deflate(&mut next);
        let norm = next.dot(&next).sqrt();
        if norm < 1e-300 {
            break;
        }
        next /= norm;
        let diff = (&next - &v).mapv(f64::abs).sum();
        v = next;
        if diff < 1e-12 {
            break;
        }
    }
    crate::norm::unit(v.view_mut());
    let big = v
        .iter()
        .copied()
        .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
    if big < 0.0 {
        v.mapv_inplace(|x| -x);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
    use ndarray::array;

    #[test]
    fn centroids_spread_along_their_main_axis() {
        // Three centroids on a line in 3-D: the first axis is that line.
        let c = array![[0.0f32, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 2.0, 0.0]];
        let docs = array![[1.0f32, 1.0, 0.0], [2.0, 2.0, 5.0]];
        let m = project(docs.view(), c.view(), &[1, 1, 1]);
        assert_abs_diff_eq!(m.centres[0][0], -(2.0f32).sqrt(), epsilon = 1e-4);
        assert_abs_diff_eq!(m.centres[2][0], (2.0f32).sqrt(), epsilon = 1e-4);
        assert_abs_diff_eq!(m.documents[0][0], 0.0, epsilon = 1e-4);
        assert_abs_diff_eq!(m.documents[1][0], (2.0f32).sqrt(), epsilon = 1e-4);
    }
}
