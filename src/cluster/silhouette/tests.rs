//! The silhouette and the inertia against scikit-learn's values and rules, and the sample's
//! scores against a plain computation.

use super::*;
use approx::assert_abs_diff_eq;
use ndarray::Array2;
use rand::Rng;

/// Nine 2-d points: three tight groups and two far points.
fn nine_points() -> Array2<f32> {
    let pts: [[f32; 2]; 9] = [
        [0.0, 0.0],
        [0.0, 1.0],
        [1.0, 0.0],
        [5.0, 5.0],
        [5.0, 6.0],
        [6.0, 5.5],
        [10.0, 0.0],
        [0.0, 10.5],
        [0.5, 9.5],
    ];
    Array2::from_shape_fn((9, 2), |(i, j)| pts[i][j])
}

/// X2[i][j] = f32(sin(1.3 i + 0.7 j) + 3 (i % 4)), 60 x 5.
fn formula_points() -> Array2<f32> {
    Array2::from_shape_fn((60, 5), |(i, j)| {
        ((1.3 * i as f64 + 0.7 * j as f64).sin() + 3.0 * (i % 4) as f64) as f32
    })
}

/// Textbook silhouette on the rows `rows` of `x`, straight from the definition.
fn naive(x: &Array2<f32>, rows: &[usize], labels: &[usize]) -> f64 {
    let dist = |a: usize, b: usize| -> f64 {
        x.row(a)
            .iter()
            .zip(x.row(b).iter())
            .map(|(p, q)| (f64::from(*p) - f64::from(*q)).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let mut total = 0.0;
    for &i in rows {
        let mut per: std::collections::BTreeMap<usize, (f64, usize)> = Default::default();
        for &j in rows {
            if j != i {
                let e = per.entry(labels[j]).or_insert((0.0, 0));
                e.0 += dist(i, j);
                e.1 += 1;
            }
        }
        let Some(&(own_sum, own_n)) = per.get(&labels[i]) else {
            continue; // singleton: 0
        };
        let a = own_sum / own_n as f64;
        let b = per
            .iter()
            .filter(|(c, _)| **c != labels[i])
            .map(|(_, (s, n))| s / *n as f64)
            .fold(f64::INFINITY, f64::min);
        if a.max(b) > 0.0 {
            total += (b - a) / a.max(b);
        }
    }
    total / rows.len() as f64
}

#[test]
fn full_sample_matches_sklearn() {
    // python3 -c "import numpy as np; from sklearn.metrics import silhouette_score;
    //   X=np.array([[0,0],[0,1],[1,0],[5,5],[5,6],[6,5.5],[10,0],[0,10.5],[0.5,9.5]]);
    //   print(silhouette_score(X,[0,0,0,1,1,1,2,3,3]), silhouette_score(X,[7,7,3,3,3,9,9,9,7]))"
    let x = nine_points();
    let sample = SilhouetteSample::new(x.view(), None, 0).expect("valid");
    assert_eq!(sample.len(), 9);
    // Cluster 2 is a singleton (scores 0).
    let s1 = sample.score(&[0, 0, 0, 1, 1, 1, 2, 3, 3]).expect("valid");
    assert_abs_diff_eq!(s1, 0.7444281311156519, epsilon = 1e-6);
    // A poor labeling with arbitrary ids, on the same precomputed distances.
    let s2 = sample.score(&[7, 7, 3, 3, 3, 9, 9, 9, 7]).expect("valid");
    assert_abs_diff_eq!(s2, -0.13953078452125278, epsilon = 1e-6);
}

#[test]
fn more_points_than_a_block_match_sklearn() {
    // python3 -c "import numpy as np; from sklearn.metrics import silhouette_score;
    //   X=np.array([[np.float32(np.sin(1.3*i+0.7*j)+3.0*(i%4)) for j in range(5)]
    //   for i in range(60)]).astype(np.float64);
    //   print(silhouette_score(X,[i%4 for i in range(60)]),
    //   silhouette_score(X,[(i*7)%5 for i in range(60)]))"
    let x = formula_points();
    let sample = SilhouetteSample::new(x.view(), Some(60), 1).expect("valid");
    let good: Vec<usize> = (0..60).map(|i| i % 4).collect();
    let bad: Vec<usize> = (0..60).map(|i| (i * 7) % 5).collect();
    assert_abs_diff_eq!(
        sample.score(&good).expect("valid"),
        0.6717031605731911,
        epsilon = 1e-6
    );
    assert_abs_diff_eq!(
        sample.score(&bad).expect("valid"),
        -0.09856484246111187,
        epsilon = 1e-6
    );
}

#[test]
fn coincident_points_score_zero_like_sklearn() {
    // sklearn: silhouette_score([[0,0],[0,0],[0,0],[0,0],[1,0]], [0,0,1,1,2]) == 0.0
    // (a = b = 0 gives 0/0, which sklearn maps to 0; the singleton scores 0).
    let x = Array2::from_shape_vec((5, 2), vec![0., 0., 0., 0., 0., 0., 0., 0., 1., 0.])
        .expect("shape");
    let sample = SilhouetteSample::new(x.view(), None, 0).expect("valid");
    let s = sample.score(&[0, 0, 1, 1, 2]).expect("valid");
    assert!(s.is_finite());
    assert_abs_diff_eq!(s, 0.0, epsilon = 1e-12);
}

#[test]
fn label_rules() {
    let x = nine_points();
    let sample = SilhouetteSample::new(x.view(), None, 0).expect("valid");
    assert_eq!(
        sample.score(&[4; 9]),
        Err(SilhouetteError::InvalidLabelCount {
            labels: 1,
            samples: 9
        })
    );
    let all: Vec<usize> = (0..9).collect();
    assert_eq!(
        sample.score(&all),
        Err(SilhouetteError::InvalidLabelCount {
            labels: 9,
            samples: 9
        })
    );
    // s - 1 distinct labels is allowed.
    assert!(sample.score(&[0, 0, 1, 2, 3, 4, 5, 6, 7]).is_ok());
    assert_eq!(
        sample.score(&[0, 1]),
        Err(SilhouetteError::LabelsLength { labels: 2, rows: 9 })
    );
}

#[test]
fn construction_rules() {
    let x = nine_points();
    let empty = Array2::<f32>::zeros((0, 3));
    assert_eq!(
        SilhouetteSample::new(empty.view(), None, 0).err(),
        Some(SilhouetteError::NoRows)
    );
    let flat = Array2::<f32>::zeros((4, 0));
    assert_eq!(
        SilhouetteSample::new(flat.view(), None, 0).err(),
        Some(SilhouetteError::NoColumns)
    );
    assert_eq!(
        SilhouetteSample::new(x.view(), Some(0), 0).err(),
        Some(SilhouetteError::ZeroSampleSize)
    );
    assert_eq!(
        SilhouetteSample::new(x.view(), Some(20_001), 0).err(),
        Some(SilhouetteError::SampleTooLarge {
            got: 20_001,
            max: 20_000
        })
    );
    let mut bad = x.clone();
    bad[[6, 1]] = f32::NAN;
    assert_eq!(
        SilhouetteSample::new(bad.view(), None, 0).err(),
        Some(SilhouetteError::NonFinite { row: 6 })
    );
    // A sample size of at least the row count takes every row.
    let all = SilhouetteSample::new(x.view(), Some(100), 3).expect("valid");
    assert_eq!(all.indices(), &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn default_sample_is_capped() {
    let x = Array2::<f32>::from_shape_fn((20_050, 1), |(i, _)| i as f32);
    let sample = SilhouetteSample::new(x.view(), None, 5).expect("valid");
    assert_eq!(sample.len(), DEFAULT_MAX_SAMPLE);
    assert!(sample.indices().windows(2).all(|w| w[0] < w[1]));
    assert!(sample.indices().iter().all(|&r| r < 20_050));
}

#[test]
fn sampled_score_is_deterministic_and_scores_the_subsample() {
    let mut rng = Xoshiro256Plus::seed_from_u64(11);
    let x =
        Array2::<f32>::from_shape_fn((700, 6), |(i, _)| (i % 5) as f32 * 2.0 + rng.gen::<f32>());
    let labels: Vec<usize> = (0..700)
        .map(|i| (i % 5) * 1000 + usize::from(i % 97 == 0))
        .collect();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| {
            let s = SilhouetteSample::new(x.view(), Some(150), 42).expect("valid");
            let v = s.score(&labels).expect("valid");
            (s.indices().to_vec(), v)
        })
    };
    let (idx1, v1) = run(1);
    let (idx2, v2) = run(2);
    let (idx3, v3) = run(2);
    assert_eq!(idx1.len(), 150);
    assert_eq!(idx1, idx2);
    assert_eq!(idx2, idx3);
    assert_eq!(v1.to_bits(), v2.to_bits());
    assert_eq!(v2.to_bits(), v3.to_bits());
    // The value is the silhouette of the sampled rows alone.
    assert_abs_diff_eq!(v1, naive(&x, &idx1, &labels), epsilon = 1e-6);
    // The number of rows scored together does not change a bit.
    let s = SilhouetteSample::new(x.view(), Some(150), 42).expect("valid");
    for block in [1, 7, 8, 64, 149, 150, 1000] {
        let v = s.score_with(&labels, Some(block)).expect("valid");
        assert_eq!(v.to_bits(), v1.to_bits(), "block {block}");
    }
    // Another seed draws another sample.
    let other = SilhouetteSample::new(x.view(), Some(150), 43).expect("valid");
    assert_ne!(other.indices(), &idx1[..]);
}

#[test]
fn inertia_is_a_sum_of_squared_distances() {
    // By hand: (0.5^2 + 0.5^2) + 0 + (1^2 + 2^2) = 5.5
    let x = Array2::from_shape_vec((4, 2), vec![0., 0., 1., 0., 4., 4., 5., 6.]).expect("shape");
    let c = Array2::from_shape_vec((2, 2), vec![0.5, 0., 4., 4.]).expect("shape");
    let got = inertia(x.view(), &[0, 0, 1, 1], c.view()).expect("valid");
    assert_abs_diff_eq!(got, 5.5, epsilon = 1e-12);
    assert_eq!(
        inertia(x.view(), &[0, 0, 2, 1], c.view()),
        Err(SilhouetteError::LabelOutOfRange {
            row: 2,
            label: 2,
            centroids: 2
        })
    );
    assert_eq!(
        inertia(x.view(), &[0, 0], c.view()),
        Err(SilhouetteError::LabelsLength { labels: 2, rows: 4 })
    );
    let c3 = Array2::<f32>::zeros((2, 3));
    assert_eq!(
        inertia(x.view(), &[0, 0, 1, 1], c3.view()),
        Err(SilhouetteError::DimensionMismatch { x: 2, centroids: 3 })
    );
}
