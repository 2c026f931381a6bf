//! Cluster: k-means on the reduced document vectors (linfa-clustering), automatic k, and the
//! refinement of the topics in the TF-IDF space.

pub mod auto_k;
pub mod distance;
pub mod kmeans;
pub mod refine;
pub mod seeding;

pub use auto_k::{KScore, KSelection};
pub use kmeans::{nearest, ClusterError, Clustering, KMeansParams, KMeansValidParams};
