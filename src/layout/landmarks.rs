//! Landmarks: embedded documents that new documents are placed between (the map's transform).
//!
//! A document not laid out by the embedding (outside the fit's sample, in a streamed chunk or
//! an `assign` batch) is put at the membership-weighted mean of its `k` most similar landmarks
//! of its own topic, the memberships being those the graph gives neighbours
//! ([`smooth_weights`]). So a document lands among the documents it resembles, inside its
//! topic's region. The model keeps a seeded, evenly spread subset of the landmarks with their
//! vectors quantized to 8 bits (cosine ranks hardly move; 100 bytes a landmark in 100
//! dimensions instead of 400).

use super::graph::smooth_weights;
use super::knn::{members, nearest_in};
use crate::norm::unit_rows;
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

/// Embedded documents with their unit vectors, map coordinates and topics.
#[derive(Debug, Clone, PartialEq)]
pub struct Landmarks {
    /// Unit rows, one per landmark.
    pub vectors: Array2<f32>,
    pub coords: Vec<[f32; 2]>,
    /// Topic index of each (the clustering's order).
    pub topics: Vec<usize>,
    /// Landmarks a document is placed between.
    pub k: usize,
}

/// Landmarks as model.json keeps them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedLandmarks {
    pub k: usize,
    pub topics: Vec<u32>,
    pub coords: Vec<[f32; 2]>,
    /// Each landmark's vector scaled so its largest entry is ±127, rounded.
    pub vectors: Vec<Vec<i8>>,
}

impl Landmarks {
    /// Map coordinates for each row of `vectors` (scaled to unit length here), placed among the
    /// landmarks of its topic `topic_of[i]` (among all of them when its topic has none).
    pub fn place(&self, vectors: ArrayView2<f32>, topic_of: &[usize]) -> Vec<[f32; 2]> {
        let rows: Vec<usize> = (0..vectors.nrows()).collect();
        self.place_rows(vectors, &rows, topic_of)
    }

    /// [`Landmarks::place`] for the rows `rows` of `vectors` only (`topic_of[j]` is the topic of
    /// `rows[j]`), in the order of `rows`. Only the rows placed are copied, each topic's where it
    /// runs (the topics run on every core).
    pub fn place_rows(
        &self,
        vectors: ArrayView2<f32>,
        rows: &[usize],
        topic_of: &[usize],
    ) -> Vec<[f32; 2]> {
        let topics = self
            .topics
            .iter()
            .chain(topic_of)
            .max()
            .map_or(0, |t| t + 1);
        let pools = members(&self.topics, topics);
        let queries = members(topic_of, topics);
        let all: Vec<usize> = (0..self.coords.len()).collect();
        // The topics shared among the threads (each topic's rows copied where it runs), and
        // each topic's rows among them too.
        let placed: Vec<Vec<[f32; 2]>> = queries
            .par_iter()
            .enumerate()
            .map(|(t, qs)| {
                if qs.is_empty() || all.is_empty() {
                    return Vec::new();
                }
                let pool = if pools[t].is_empty() { &all } else { &pools[t] };
                let picked: Vec<usize> = qs.iter().map(|&j| rows[j]).collect();
                let mut q = crate::sample::rows(vectors, &picked);
                unit_rows(q.view_mut());
                let p = crate::sample::rows(self.vectors.view(), pool);
                nearest_in(q.view(), p.view(), self.k, |found| {
                    self.weighted_mean(found, pool)
                })
            })
            .collect();
        let mut out = vec![[f32::NAN; 2]; rows.len()];
        for (qs, placed) in queries.iter().zip(placed) {
            for (&j, xy) in qs.iter().zip(placed) {
                out[j] = xy;
            }
        }
        out
    }

    /// The membership-weighted mean of the landmarks `found` (pool row, similarity).
    fn weighted_mean(&self, found: &[(usize, f32)], pool: &[usize]) -> [f32; 2] {
        let d: Vec<f32> = found.iter().map(|&(_, s)| (1.0 - s).max(0.0)).collect();
        let w = smooth_weights(&d);
        let (mut x, mut y, mut total) = (0.0f64, 0.0f64, 0.0f64);
        for (&(j, _), &w) in found.iter().zip(&w) {
            let c = self.coords[pool[j]];
            x += w as f64 * c[0] as f64;
            y += w as f64 * c[1] as f64;
            total += w as f64;
        }
        [(x / total) as f32, (y / total) as f32]
    }

    /// At most `cap` of the landmarks, evenly spread over them, quantized for model.json.
    pub fn save(&self, cap: usize) -> SavedLandmarks {
        let n = self.coords.len();
        let keep: Vec<usize> = crate::sample::even_indices(n, cap).collect();
        SavedLandmarks {
            k: self.k,
            topics: keep.iter().map(|&i| self.topics[i] as u32).collect(),
            coords: keep.iter().map(|&i| self.coords[i]).collect(),
            vectors: keep
                .iter()
                .map(|&i| {
                    let r = self.vectors.row(i);
                    let big = r
                        .iter()
                        .fold(0.0f32, |m, v| m.max(v.abs()))
                        .max(f32::MIN_POSITIVE);
                    r.iter().map(|v| (v / big * 127.0).round() as i8).collect()
                })
                .collect(),
        }
    }
}

impl SavedLandmarks {
    /// The landmarks back as unit vectors.
    pub fn load(&self) -> Landmarks {
        let d = self.vectors.first().map_or(0, Vec::len);
        let mut vectors = Array2::from_shape_fn((self.vectors.len(), d), |(i, j)| {
            self.vectors[i].get(j).copied().unwrap_or(0) as f32
        });
        unit_rows(vectors.view_mut());
        Landmarks {
            vectors,
            coords: self.coords.clone(),
            topics: self.topics.iter().map(|&t| t as usize).collect(),
            k: self.k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn landmarks() -> Landmarks {
        let mut vectors = array![
            [1.0f32, 0.0, 0.0],
            [0.9, 0.1, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.9, 0.1]
        ];
        unit_rows(vectors.view_mut());
        Landmarks {
            vectors,
            coords: vec![[0.0, 0.0], [1.0, 0.0], [10.0, 10.0], [11.0, 10.0]],
            topics: vec![0, 0, 1, 1],
            k: 2,
        }
    }

    #[test]
    fn a_document_lands_among_its_topics_landmarks() {
        let l = landmarks();
        let mut q = array![[1.0f32, 0.05, 0.0], [0.0, 1.0, 0.05]];
        unit_rows(q.view_mut());
        let p = l.place(q.view(), &[0, 1]);
        assert!(
            p[0][0] >= 0.0 && p[0][0] <= 1.0 && p[0][1].abs() < 1e-6,
            "{p:?}"
        );
        assert!(p[1][0] >= 10.0 && p[1][0] <= 11.0 && (p[1][1] - 10.0).abs() < 1e-6);
    }

    #[test]
    fn saved_landmarks_place_as_the_originals() {
        let l = landmarks();
        let back = l.save(10).load();
        let mut q = array![[0.95f32, 0.05, 0.0], [0.1, 1.0, 0.0]];
        unit_rows(q.view_mut());
        let a = l.place(q.view(), &[0, 1]);
        let b = back.place(q.view(), &[0, 1]);
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x[0] - y[0]).abs() < 0.05 && (x[1] - y[1]).abs() < 0.05,
                "{a:?} {b:?}"
            );
        }
        assert_eq!(l.save(2).coords, vec![[0.0, 0.0], [10.0, 10.0]]);
    }
}
