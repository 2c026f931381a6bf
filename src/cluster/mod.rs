//! Cluster: k-means on the reduced document vectors (linfa-clustering), and automatic k.

pub mod auto_k;
pub mod kmeans;

pub use auto_k::{KScore, KSelection};
pub use kmeans::{nearest, ClusterError, Clustering, KMeansParams, KMeansValidParams};
