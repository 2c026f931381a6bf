//! Fixtures shared by the reduction stage's tests (`reducer.rs`, `lsa.rs`,
//! `random_projection.rs`): small matrices with a known shape or spectrum, and thread pools of
//! a given size for the checks that results do not depend on the number of threads.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256Plus;

use crate::vectorize::csr::CsrMatrix;

/// `a` as a CSR matrix (its zeros not stored).
pub(super) fn csr_from_dense(a: &Array2<f32>) -> CsrMatrix {
    let (mut indptr, mut indices, mut data) = (vec![0], vec![], vec![]);
    for row in a.outer_iter() {
        for (j, &v) in row.iter().enumerate() {
            if v != 0.0 {
                indices.push(j as u32);
                data.push(v);
            }
        }
        indptr.push(indices.len());
    }
    CsrMatrix::new(a.ncols(), indptr, indices, data).unwrap()
}

/// The 40 x 30 test matrix of the scikit-learn comparison; in Python:
/// `A[i, j] = 0.2 + ((i*13 + j*29) % 19) / 19 if (i*31 + j*17 + i*j*7) % 23 < 8 else 0`,
/// computed in float64 then cast to float32 (405 entries, 2 empty rows, 1 empty column).
pub(super) fn sklearn_matrix() -> Array2<f32> {
    Array2::from_shape_fn((40, 30), |(i, j)| {
        if (i * 31 + j * 17 + i * j * 7) % 23 < 8 {
            (0.2 + ((i * 13 + j * 29) % 19) as f64 / 19.0) as f32
        } else {
            0.0
        }
    })
}

/// A sparse `n x m` matrix with a decaying spectrum: a few "topics" plus noise.
pub(super) fn topic_matrix(n: usize, m: usize, seed: u64) -> CsrMatrix {
    let mut rng = Xoshiro256Plus::seed_from_u64(seed);
    let a = Array2::from_shape_fn((n, m), |(i, j)| {
        let topic = i % 6;
        let p = if j % 6 == topic { 0.5 } else { 0.05 };
        if rng.gen::<f64>() < p {
            rng.gen_range(0.1f32..1.0) * (1.0 + (topic as f32) * 0.3)
        } else {
            0.0
        }
    });
    csr_from_dense(&a)
}

/// A rayon pool of `threads` threads.
pub(super) fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}
