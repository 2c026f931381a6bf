//! Named topics' names (`[[topic]]`): each name goes on the topic fitted around it, as its
//! label, and the topic is marked named everywhere it appears.
//!
//! Which topic is a name's is decided here, once, from the topics as the clustering left them:
//! the assignment of names to topics that maximises the total cosine between each name's vector
//! and its topic's centroid (the Hungarian algorithm). The guided fit starts and anchors each
//! named topic at its name, so this is that topic; deciding it from the centroids keeps it
//! right after a refinement or a renumbering too, and never gives two names one topic.

use super::matching::hungarian;
use super::TopicSummary;
use ndarray::ArrayView2;

/// Gives `names[j]` (vector `guides.row(j)`) to the topic whose centroid (`centroids`, one row
/// per topic of `summary`, in its order) the assignment pairs it with. Returns each name's
/// topic index.
pub fn attach(
    summary: &mut TopicSummary,
    centroids: ArrayView2<f32>,
    guides: ArrayView2<f32>,
    names: &[&str],
) -> Vec<usize> {
    let (m, k) = (guides.nrows(), centroids.nrows());
    let size = m.max(k);
    let cosine = |j: usize, t: usize| {
        let (g, c) = (guides.row(j), centroids.row(t));
        let norm = (g.dot(&g) * c.dot(&c)).sqrt();
        if norm > 0.0 {
            f64::from(g.dot(&c) / norm)
        } else {
            0.0
        }
    };
    let cost: Vec<Vec<f64>> = (0..size)
        .map(|j| {
            (0..size)
                .map(|t| {
                    if j < m && t < k {
                        1.0 - cosine(j, t)
                    } else {
                        1.0
                    }
                })
                .collect()
        })
        .collect();
    let pairs = hungarian(&cost);
    let mut topic_of = Vec::with_capacity(m);
    for (j, name) in names.iter().enumerate().take(m) {
        let t = pairs[j];
        if let Some(topic) = summary.topics.get_mut(t) {
            topic.label = (*name).to_string();
            topic.named = true;
        }
        topic_of.push(t);
    }
    topic_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::Topic;
    use ndarray::array;

    fn summary(k: usize) -> TopicSummary {
        TopicSummary {
            topics: (0..k)
                .map(|id| Topic {
                    id,
                    label: format!("auto {id}"),
                    auto_label: format!("auto {id}"),
                    size: 10,
                    share: 1.0 / k as f64,
                    terms: Vec::new(),
                    representatives: Vec::new(),
                    outliers: 0,
                    named: false,
                })
                .collect(),
            classes: None,
            documents: 10 * k,
        }
    }

    #[test]
    fn each_name_gets_a_topic_of_its_own_by_the_best_total_similarity() {
        let centroids = array![[1.0f32, 0.0, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]];
        // Both names are nearest to topic 0; the best total gives "b" topic 0, "a" topic 1.
        let guides = array![[0.95f32, 0.31, 0.0], [1.0, 0.0, 0.0]];
        let mut s = summary(3);
        let of = attach(&mut s, centroids.view(), guides.view(), &["a", "b"]);
        assert_eq!(of, [1, 0]);
        assert_eq!((s.topics[1].label.as_str(), s.topics[1].named), ("a", true));
        assert_eq!((s.topics[0].label.as_str(), s.topics[0].named), ("b", true));
        assert_eq!(
            (s.topics[2].label.as_str(), s.topics[2].named),
            ("auto 2", false)
        );
        assert_eq!(s.topics[2].auto_label, "auto 2");
    }
}
