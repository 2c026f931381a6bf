//! Fitting the reduction and applying it: [`ReduceValidParams::fit`] checks the rules that
//! depend on the matrix (empty, too few documents or terms for `dims`, too large to densify),
//! runs the method, and returns the fitted [`Reducer`] with the training embedding;
//! [`Reducer::transform`] projects any matrix with the same terms.
//!
//! Why fit and transform share one code path (`project`, then `finish`): the training
//! embedding is then bit-identical to transforming the training rows, so `assign` on the
//! training documents reproduces the fit whatever the number of threads.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::{
    auto_n_iter, linalg, lsa, Lsa, RandomProjection, ReduceError, ReduceMethod, ReduceValidParams,
};
use crate::vectorize::csr::CsrMatrix;

/// Largest number of values (`n_rows * n_cols`) that method `none` will densify.
pub const MAX_DENSE_VALUES: usize = 2_000_000_000;

impl ReduceValidParams {
    /// Fits the reduction on `x` (documents x terms) and returns it with the embedding of the
    /// rows of `x` (`n_rows x dims`), which is bit-identical to `reducer.transform(x)`.
    ///
    /// LSA is fitted on all rows, or on a seeded random sample of `max_fit_rows` of them when
    /// there are more (the singular values then are the sample's; the explained variance
    /// ratio always describes all rows).
    ///
    /// Errors, never clamps: an empty matrix; `lsa` with `dims >= min(fitted rows, n_cols)`;
    /// `random-projection` with `dims >= n_cols`; `none` beyond [`MAX_DENSE_VALUES`] values.
    /// The caller decides whether to retry with a smaller `dims`.
    pub fn fit(&self, x: &CsrMatrix) -> Result<(Reducer, Array2<f32>), ReduceError> {
        let (n, m) = (x.n_rows(), x.n_cols());
        if n == 0 || m == 0 || x.nnz() == 0 {
            return Err(ReduceError::EmptyMatrix {
                n_rows: n,
                n_cols: m,
                nnz: x.nnz(),
            });
        }
        let mut reducer = match self.method() {
            ReduceMethod::None => {
                check_densify(n, m)?;
                Reducer::Identity {
                    n_features: m,
                    normalize: self.normalize(),
                }
            }
            ReduceMethod::Lsa => {
                let fit_rows = self.max_fit_rows().map_or(n, |cap| cap.min(n));
                let dims = self.capped(fit_rows.min(m), fit_rows, m)?;
                if dims >= fit_rows.min(m) {
                    return Err(ReduceError::DimsTooLarge {
                        dims,
                        n_rows: fit_rows,
                        n_cols: m,
                    });
                }
                let sample;
                let fit_x = if fit_rows < n {
                    sample = x.select_rows(&sample_rows(n, fit_rows, self.seed()));
                    if sample.nnz() == 0 {
                        return Err(ReduceError::EmptyMatrix {
                            n_rows: fit_rows,
                            n_cols: m,
                            nnz: 0,
                        });
                    }
                    &sample
                } else {
                    x
                };
                let n_iter = self.n_iter().unwrap_or_else(|| auto_n_iter(fit_rows));
                Reducer::Lsa(lsa::fit_lsa(
                    fit_x,
                    dims,
                    n_iter,
                    self.n_oversamples(),
                    self.seed(),
                    self.normalize(),
                )?)
            }
            ReduceMethod::RandomProjection => {
                let dims = self.capped(m, n, m)?;
                // dims < n_cols also keeps output dimensions within u32.
                if dims >= m || dims > u32::MAX as usize {
                    return Err(ReduceError::DimsNotBelowFeatures { dims, n_cols: m });
                }
                Reducer::RandomProjection(RandomProjection::generate(
                    m,
                    dims,
                    self.seed(),
                    self.normalize(),
                ))
            }
        };
        let mut embedding = reducer.project(x)?;
        if let Reducer::Lsa(lsa) = &mut reducer {
            // Over all documents, also when the fit used a sample.
            lsa.set_explained_variance(x, embedding.view());
        }
        reducer.finish(&mut embedding);
        Ok((reducer, embedding))
    }
}

/// `k` distinct row indices out of `0..n`, drawn with a seeded `Xoshiro256Plus`, ascending.
fn sample_rows(n: usize, k: usize, seed: u64) -> Vec<usize> {
    use rand::SeedableRng;
    // A stream distinct from the one that draws the Gaussian test matrix.
    let mut rng = rand_xoshiro::Xoshiro256Plus::seed_from_u64(seed ^ 0x5A4D_504C_4520_524F);
    let mut rows = rand::seq::index::sample(&mut rng, n, k).into_vec();
    rows.sort_unstable();
    rows
}

/// Errors if densifying `n x m` values would exceed [`MAX_DENSE_VALUES`].
fn check_densify(n: usize, m: usize) -> Result<(), ReduceError> {
    match n.checked_mul(m) {
        Some(v) if v <= MAX_DENSE_VALUES => Ok(()),
        _ => Err(ReduceError::TooLargeToDensify {
            n_rows: n,
            n_cols: m,
        }),
    }
}

/// A fitted reduction, kept as part of the fitted model so that new documents are projected
/// exactly as the training documents were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reducer {
    /// Method `none`: the TF-IDF rows, densified.
    Identity {
        /// Number of features (= output dimensions).
        n_features: usize,
        /// Whether output rows are L2-normalised.
        normalize: bool,
    },
    /// Method `lsa`.
    Lsa(Lsa),
    /// Method `random-projection`.
    RandomProjection(RandomProjection),
}

impl Reducer {
    /// Projects the rows of `x` (same terms as at fit time) to `n_rows x dims()`, then
    /// L2-normalises them if the reducer was fitted with `normalize` (all-zero rows stay zero).
    /// Row by row, so a document's embedding does not depend on the other rows of `x`.
    pub fn transform(&self, x: &CsrMatrix) -> Result<Array2<f32>, ReduceError> {
        let mut out = self.project(x)?;
        self.finish(&mut out);
        Ok(out)
    }

    /// Each input feature's vector in the reduced space, weighted by the singular values
    /// (`V Σ`, `n_features x dims`): LSA's term vectors, whose cosines say which terms occur
    /// together. `None` for the other methods, whose directions carry no such meaning.
    pub fn term_vectors(&self) -> Option<Array2<f32>> {
        match self {
            Reducer::Lsa(l) => {
                let mut v = l.components().t().to_owned();
                for (mut col, &s) in v.columns_mut().into_iter().zip(l.singular_values()) {
                    col *= s as f32;
                }
                Some(v)
            }
            _ => None,
        }
    }

    /// Number of output dimensions.
    pub fn dims(&self) -> usize {
        match self {
            Reducer::Identity { n_features, .. } => *n_features,
            Reducer::Lsa(l) => l.dims(),
            Reducer::RandomProjection(p) => p.dims(),
        }
    }

    /// Number of input features (terms) the reducer was fitted on.
    pub fn n_features(&self) -> usize {
        match self {
            Reducer::Identity { n_features, .. } => *n_features,
            Reducer::Lsa(l) => l.n_features(),
            Reducer::RandomProjection(p) => p.n_features(),
        }
    }

    /// The method this reducer implements.
    pub fn method(&self) -> ReduceMethod {
        match self {
            Reducer::Identity { .. } => ReduceMethod::None,
            Reducer::Lsa(_) => ReduceMethod::Lsa,
            Reducer::RandomProjection(_) => ReduceMethod::RandomProjection,
        }
    }

    /// Whether output rows are L2-normalised.
    pub fn normalize(&self) -> bool {
        match self {
            Reducer::Identity { normalize, .. } => *normalize,
            Reducer::Lsa(l) => l.normalize(),
            Reducer::RandomProjection(p) => p.normalize(),
        }
    }

    /// The projection without normalisation (shared by fit and transform).
    fn project(&self, x: &CsrMatrix) -> Result<Array2<f32>, ReduceError> {
        if x.n_cols() != self.n_features() {
            return Err(ReduceError::FeatureMismatch {
                expected: self.n_features(),
                found: x.n_cols(),
            });
        }
        let out = match self {
            Reducer::Identity { .. } => {
                check_densify(x.n_rows(), x.n_cols())?;
                x.to_dense()
            }
            Reducer::Lsa(l) => l.project(x),
            Reducer::RandomProjection(p) => p.project(x),
        };
        if !linalg::all_finite(out.view()) {
            return Err(ReduceError::NonFinite);
        }
        Ok(out)
    }

    /// Post-processing shared by fit and transform.
    fn finish(&self, out: &mut Array2<f32>) {
        if self.normalize() {
            crate::norm::unit_rows_f64(out.view_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::testing::{csr_from_dense, pool, sklearn_matrix, topic_matrix};
    use crate::reduce::ReduceParams;
    use approx::assert_abs_diff_eq;
    use ndarray::Axis;

    #[test]
    fn capped_dims_fit_a_small_corpus_and_a_tiny_one_says_what_to_change() {
        // 3 documents x 4 terms: LSA can keep at most 2 dimensions.
        let x = csr_from_dense(&ndarray::array![
            [1.0f32, 0.0, 0.5, 0.0],
            [0.0, 1.0, 0.0, 0.5],
            [0.5, 0.5, 1.0, 1.0]
        ]);
        let p = ReduceParams::new()
            .dims(100)
            .cap_dims(true)
            .check()
            .unwrap();
        let (r, emb) = p.fit(&x).unwrap();
        assert_eq!((r.dims(), emb.ncols()), (2, 2));
        assert!(matches!(
            ReduceParams::new().dims(100).check().unwrap().fit(&x),
            Err(ReduceError::DimsTooLarge { .. })
        ));
        let one = csr_from_dense(&ndarray::array![[1.0f32, 0.5, 0.0]]);
        let e = p.fit(&one).unwrap_err();
        assert!(
            matches!(
                e,
                ReduceError::TooSmall {
                    n_rows: 1,
                    n_cols: 3,
                    ..
                }
            ),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("reduce.method") && !msg.contains("<= 0"),
            "{msg}"
        );
    }

    #[test]
    fn parameter_and_data_errors() {
        assert_eq!(
            ReduceParams::new().dims(0).check(),
            Err(ReduceError::ZeroDims)
        );
        assert_eq!(ReduceError::ZeroDims.to_string(), "reduce.dims cannot be 0");
        assert_eq!(
            ReduceParams::new().max_fit_rows(Some(0)).check(),
            Err(ReduceError::ZeroMaxFitRows)
        );
        // dims is irrelevant for `none`.
        assert!(ReduceParams::new()
            .method(ReduceMethod::None)
            .dims(0)
            .check()
            .is_ok());

        let x = csr_from_dense(&sklearn_matrix());
        let err = ReduceParams::new()
            .dims(30)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap_err();
        assert_eq!(
            err,
            ReduceError::DimsTooLarge {
                dims: 30,
                n_rows: 40,
                n_cols: 30
            }
        );
        assert!(err.to_string().contains("use dims <= 29"), "{err}");
        // With a sample, the rule applies to the sampled rows.
        assert_eq!(
            ReduceParams::new()
                .dims(6)
                .max_fit_rows(Some(6))
                .check()
                .unwrap()
                .fit(&x)
                .unwrap_err(),
            ReduceError::DimsTooLarge {
                dims: 6,
                n_rows: 6,
                n_cols: 30
            }
        );
        let err = ReduceParams::new()
            .method(ReduceMethod::RandomProjection)
            .dims(30)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap_err();
        assert_eq!(
            err,
            ReduceError::DimsNotBelowFeatures {
                dims: 30,
                n_cols: 30
            }
        );

        let p = ReduceParams::new().dims(2).check().unwrap();
        let no_entries = CsrMatrix::new(5, vec![0, 0, 0], vec![], vec![]).unwrap();
        assert_eq!(
            p.fit(&no_entries).unwrap_err(),
            ReduceError::EmptyMatrix {
                n_rows: 2,
                n_cols: 5,
                nnz: 0
            }
        );
        let no_rows = CsrMatrix::new(5, vec![0], vec![], vec![]).unwrap();
        assert!(matches!(
            p.fit(&no_rows),
            Err(ReduceError::EmptyMatrix { n_rows: 0, .. })
        ));

        // 2 rows x 1.5e9 columns would be 3e9 dense values: refused before allocating.
        let wide = CsrMatrix::new(1_500_000_000, vec![0, 1, 1], vec![7], vec![1.0]).unwrap();
        let err = ReduceParams::new()
            .method(ReduceMethod::None)
            .check()
            .unwrap()
            .fit(&wide)
            .unwrap_err();
        assert_eq!(
            err,
            ReduceError::TooLargeToDensify {
                n_rows: 2,
                n_cols: 1_500_000_000
            }
        );
        assert!(err.to_string().contains("use method lsa"));

        // Transform with a different vocabulary size.
        let (reducer, _) = p.fit(&x).unwrap();
        let other = CsrMatrix::new(31, vec![0, 1], vec![3], vec![1.0]).unwrap();
        assert_eq!(
            reducer.transform(&other).unwrap_err(),
            ReduceError::FeatureMismatch {
                expected: 30,
                found: 31
            }
        );
    }

    #[test]
    fn fit_embedding_equals_transform_and_is_normalised() {
        let x = csr_from_dense(&sklearn_matrix());
        for method in [
            ReduceMethod::Lsa,
            ReduceMethod::RandomProjection,
            ReduceMethod::None,
        ] {
            let (reducer, emb) = ReduceParams::new()
                .method(method)
                .dims(6)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            assert_eq!(reducer.method(), method);
            assert_eq!(emb.dim(), (40, reducer.dims()));
            assert_eq!(reducer.transform(&x).unwrap(), emb, "{method}");
            // Subsets are projected row by row: same values as in the full matrix.
            let sub = x.select_rows(&[5, 0, 39]);
            let sub_emb = reducer.transform(&sub).unwrap();
            for (k, &r) in [5usize, 0, 39].iter().enumerate() {
                assert_eq!(sub_emb.row(k), emb.row(r));
            }
            for (i, row) in emb.axis_iter(Axis(0)).enumerate() {
                let norm: f64 = row.iter().map(|&v| f64::from(v).powi(2)).sum();
                if x.row(i).0.is_empty() {
                    assert!(row.iter().all(|&v| v == 0.0), "{method} row {i}");
                } else {
                    assert_abs_diff_eq!(norm, 1.0, epsilon = 1e-5);
                }
            }
        }
    }

    #[test]
    fn identity_densifies() {
        let a = sklearn_matrix();
        let x = csr_from_dense(&a);
        let (reducer, emb) = ReduceParams::new()
            .method(ReduceMethod::None)
            .normalize(false)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        assert_eq!(reducer.dims(), 30);
        assert_eq!(emb, a);
    }

    #[test]
    fn deterministic_for_seed_and_thread_count() {
        let x = topic_matrix(3000, 200, 5);
        for method in [ReduceMethod::Lsa, ReduceMethod::RandomProjection] {
            let p = ReduceParams::new().method(method).dims(10).check().unwrap();
            let runs: Vec<(Reducer, Array2<f32>)> = [1, 2, 3]
                .iter()
                .map(|&t| pool(t).install(|| p.fit(&x).unwrap()))
                .collect();
            for r in &runs[1..] {
                assert_eq!(r.0, runs[0].0, "{method}");
                assert_eq!(r.1, runs[0].1, "{method}");
            }
            let other = ReduceParams::new()
                .method(method)
                .dims(10)
                .seed(43)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            assert_ne!(other.1, runs[0].1, "{method}: the seed must matter");
        }
    }

    #[test]
    fn serde_round_trip_transforms_identically() {
        let x = topic_matrix(200, 80, 9);
        for method in [
            ReduceMethod::Lsa,
            ReduceMethod::RandomProjection,
            ReduceMethod::None,
        ] {
            let (reducer, emb) = ReduceParams::new()
                .method(method)
                .dims(6)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            let json = serde_json::to_string(&reducer).unwrap();
            let back: Reducer = serde_json::from_str(&json).unwrap();
            assert_eq!(back, reducer);
            assert_eq!(back.transform(&x).unwrap(), emb);
        }
        // Corrupted files are errors, not panics.
        let (reducer, _) = ReduceParams::new()
            .dims(3)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let mut v: serde_json::Value = serde_json::to_value(&reducer).unwrap();
        v["lsa"]["components"].as_array_mut().unwrap().pop();
        assert!(serde_json::from_value::<Reducer>(v).is_err());
        let (rp, _) = ReduceParams::new()
            .method(ReduceMethod::RandomProjection)
            .dims(3)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let mut v: serde_json::Value = serde_json::to_value(&rp).unwrap();
        v["random-projection"]["targets"][0] = serde_json::json!(3);
        assert!(serde_json::from_value::<Reducer>(v).is_err());
    }
}
