//! Unit-length vectors: the one way every stage scales a vector or the rows of a matrix to
//! length 1 (a zero vector stays zero).
//!
//! Why one place: a document's vector is normalised when the model is fitted and again when
//! `assign`, a stream or Spark places it, and the two must agree to the bit. Two precisions
//! exist, because results depend on them: [`unit`] and [`unit_rows`] take the norm in the
//! values' own type (`v · v` by ndarray's dot), [`unit_rows_f64`] sums the squares of `f32`
//! values in `f64` (the reduced TF-IDF vectors, whose rows k-means and every later step read).
//! Both divide by the norm (not multiply by its inverse), and work row by row, so the bits do
//! not depend on the number of threads.

use ndarray::{ArrayViewMut1, ArrayViewMut2, Axis, NdFloat};
use rayon::prelude::*;

/// Scales `v` to unit length, its norm `sqrt(v · v)` taken in `A`.
pub fn unit<A: NdFloat>(mut v: ArrayViewMut1<A>) {
    let norm = v.dot(&v).sqrt();
    if norm > A::zero() {
        v /= norm;
    }
}

/// Scales every row of `a` to unit length, as [`unit`] (in parallel over rows).
pub fn unit_rows<A: NdFloat + Send + Sync>(mut a: ArrayViewMut2<A>) {
    a.axis_iter_mut(Axis(0)).into_par_iter().for_each(unit);
}

/// Scales every row of `a` to unit length, the squares summed in `f64` in row order and the
/// division done in `f64` (in parallel over rows).
pub fn unit_rows_f64(mut a: ArrayViewMut2<f32>) {
    a.axis_iter_mut(Axis(0))
        .into_par_iter()
        .for_each(|mut row| {
            let norm = row
                .iter()
                .map(|&v| f64::from(v) * f64::from(v))
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 {
                row.mapv_inplace(|v| (f64::from(v) / norm) as f32);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn rows_become_unit_length_and_zero_rows_stay_zero() {
        let mut a = array![[3.0f32, 4.0], [0.0, 0.0], [0.0, -0.5]];
        unit_rows(a.view_mut());
        assert_eq!(a, array![[0.6f32, 0.8], [0.0, 0.0], [0.0, -1.0]]);
        let mut b = array![[3.0f32, 4.0], [0.0, 0.0]];
        unit_rows_f64(b.view_mut());
        assert_eq!(b, array![[0.6f32, 0.8], [0.0, 0.0]]);
        let mut v = array![0.0f64, 2.0];
        unit(v.view_mut());
        assert_eq!(v, array![0.0, 1.0]);
    }

    #[test]
    fn the_two_precisions_can_differ_and_each_is_the_same_on_every_row() {
        // Each precision is a fixed rule: a row's result does not depend on the other rows.
        let row = [0.1f32, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1];
        let mut one = ndarray::Array2::from_shape_vec((1, 10), row.to_vec()).unwrap();
        let mut many = ndarray::Array2::from_shape_fn((64, 10), |(_, j)| row[j]);
        unit_rows(one.view_mut());
        unit_rows(many.view_mut());
        assert!(many.rows().into_iter().all(|r| r == one.row(0)));
        let mut wide = ndarray::Array2::from_shape_fn((64, 10), |(_, j)| row[j]);
        unit_rows_f64(wide.view_mut());
        let norm = wide.row(0).iter().map(|v| v * v).sum::<f32>();
        assert!((norm - 1.0).abs() < 1e-6);
    }
}
