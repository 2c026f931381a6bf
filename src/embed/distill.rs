//! Distilled static embeddings: one vector per TF-IDF feature, made once from the sentence
//! model, and a document's vector as the TF-IDF-weighted mean of its features' vectors.
//!
//! Why: the transformer costs milliseconds per document, which a million abstracts, a stream's
//! chunks or a Spark executor cannot pay. As model2vec does, each vocabulary term (its surface
//! form) goes through the transformer alone, the term vectors are reduced by PCA, and a
//! document is embedded by a sparse product with its TF-IDF row: TF-IDF speed, no model folder
//! needed after the fit (the table is saved in `model.json`). The TF-IDF weights play the part
//! of model2vec's Zipf weighting. What it keeps of the transformer's quality is measured in
//! docs/benchmarks.md.

use super::EmbedError;
use crate::vectorize::CsrMatrix;
use ndarray::{Array1, Array2, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// Default dimensions kept by the PCA.
pub const DEFAULT_DIMS: usize = 128;

/// Term vectors, row `f` for TF-IDF feature `f`, unit length (zero for a term the PCA leaves
/// nothing of).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticTable {
    pub dims: usize,
    /// `n_features x dims`, row-major, as base64 of little-endian `f32`.
    #[serde(with = "f32_base64")]
    pub vectors: Vec<f32>,
}

impl StaticTable {
    /// The table from the sentence vectors of the features' surface forms (`raw`, one row per
    /// feature): centred, projected on the top `dims` principal axes (signs fixed so the
    /// largest-magnitude loading is positive), each row scaled to unit length.
    pub fn from_term_vectors(raw: ArrayView2<f32>, dims: usize) -> Result<StaticTable, EmbedError> {
        let (n, d) = raw.dim();
        let dims = dims.min(d).min(n.max(1));
        let raw = raw.mapv(f64::from);
        let mean: Array1<f64> = raw.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(d));
        let centred = &raw - &mean;
        let cov = centred.t().dot(&centred);
        let axes = principal_axes(cov, dims)?;
        let mut table = centred.dot(&axes).mapv(|v| v as f32);
        crate::norm::unit_rows(table.view_mut());
        Ok(StaticTable {
            dims,
            vectors: table.into_raw_vec_and_offset().0,
        })
    }

    /// How many features the table has a vector for.
    pub fn n_features(&self) -> usize {
        self.vectors.len() / self.dims.max(1)
    }

    /// Each TF-IDF row's weighted sum of its features' vectors, L2-normalised (a row without a
    /// feature stays zero).
    pub fn transform(&self, x: &CsrMatrix) -> Array2<f32> {
        use rayon::prelude::*;
        let d = self.dims;
        let mut out = Array2::<f32>::zeros((x.n_rows(), d));
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each(|(i, mut row)| {
                let (cols, vals) = x.row(i);
                let values = row
                    .as_slice_mut()
                    .expect("rows of a standard array are contiguous");
                for (&c, &w) in cols.iter().zip(vals) {
                    let v = &self.vectors[c as usize * d..(c as usize + 1) * d];
                    values.iter_mut().zip(v).for_each(|(o, t)| *o += w * t);
                }
                crate::norm::unit(row);
            });
        out
    }
}

/// The top `dims` eigenvectors of the symmetric `cov` as columns, each signed so its
/// largest-magnitude entry is positive.
fn principal_axes(cov: Array2<f64>, dims: usize) -> Result<Array2<f64>, EmbedError> {
    use linfa_linalg::eigh::Eigh;
    if !cov.iter().all(|v| v.is_finite()) {
        return Err(EmbedError::Encode("term vectors are not finite".into()));
    }
    let (values, vectors) = cov
        .eigh()
        .map_err(|e| EmbedError::Encode(format!("PCA of the term vectors: {e}")))?;
    // Descending, ties in eigh's (deterministic) order.
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[j].total_cmp(&values[i]));
    let vectors = vectors.select(Axis(1), &order);
    let mut axes = vectors.slice(ndarray::s![.., ..dims]).to_owned();
    for mut col in axes.columns_mut() {
        let big = col
            .iter()
            .copied()
            .fold(0.0f64, |m, v| if v.abs() > m.abs() { v } else { m });
        if big < 0.0 {
            col.mapv_inplace(|v| -v);
        }
    }
    Ok(axes)
}

/// `Vec<f32>` as base64 of its little-endian bytes (a quarter of the JSON numbers' size).
mod f32_base64 {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)?;
        if bytes.len() % 4 != 0 {
            return Err(serde::de::Error::custom("not a whole number of f32"));
        }
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn a_document_is_the_weighted_mean_of_its_terms() {
        // Three terms along three directions: PCA keeps two axes of their spread.
        let raw = array![
            [1.0f32, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 1.0, 0.0]
        ];
        let table = StaticTable::from_term_vectors(raw.view(), 2).unwrap();
        assert_eq!((table.dims, table.n_features()), (2, 4));
        let x = CsrMatrix::new(4, vec![0, 1, 3, 3], vec![0, 0, 1], vec![1.0, 0.5, 0.5])
            .expect("a valid matrix");
        let v = table.transform(&x);
        let t = |f: usize| ndarray::ArrayView1::from(&table.vectors[f * 2..f * 2 + 2]).to_owned();
        approx::assert_abs_diff_eq!(v.row(0), t(0).view(), epsilon = 1e-6);
        let mixed = &t(0) + &t(1);
        let mixed = &mixed / mixed.dot(&mixed).sqrt();
        approx::assert_abs_diff_eq!(v.row(1), mixed.view(), epsilon = 1e-6);
        assert!(v.row(2).iter().all(|&x| x == 0.0), "no feature, no vector");
        // The table survives model.json.
        let json = serde_json::to_string(&table).unwrap();
        assert_eq!(serde_json::from_str::<StaticTable>(&json).unwrap(), table);
    }
}
