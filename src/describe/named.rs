//! Named topics' names (`[[topic]]`): each name goes on the topic fitted around it, as its
//! label, and the topic is marked named everywhere it appears.
//!
//! Which topic is a name's: the one the guided fit grew around it, when the clustering still
//! says (`Clustering::named`); after a refinement in the TF-IDF space, which re-forms the
//! topics, the assignment of names to topics that maximises the total cosine between each
//! name's vector and its topic's centroid (the Hungarian algorithm), which never gives two
//! names one topic.

use super::matching::hungarian;
use super::TopicSummary;
use ndarray::ArrayView2;

/// Gives `names[j]` its topic: `fitted[j]` (the guided fit's, `usize::MAX` when that topic
/// ended without documents) when there is one per name, else the topic whose centroid
/// (`centroids`, one row per topic of `summary`, in its order) the best assignment pairs with
/// the name's vector `guides.row(j)`. Returns each name's topic index (`None`: lost).
pub fn attach(
    summary: &mut TopicSummary,
    (centroids, guides): (ArrayView2<f32>, ArrayView2<f32>),
    names: &[&str],
    fitted: &[usize],
) -> Vec<Option<usize>> {
    let topic_of: Vec<Option<usize>> = match fitted.len() == names.len() {
        true => fitted
            .iter()
            .map(|&t| (t != usize::MAX).then_some(t))
            .collect(),
        false => best_pairs(centroids, guides)
            .into_iter()
            .map(Some)
            .collect(),
    };
    for (name, t) in names.iter().zip(&topic_of) {
        if let Some(topic) = t.and_then(|t| summary.topics.get_mut(t)) {
            topic.label = (*name).to_string();
            topic.named = true;
        }
    }
    topic_of
}

/// The topic of each name (`guides` rows) that maximises the total cosine to the centroids.
fn best_pairs(centroids: ArrayView2<f32>, guides: ArrayView2<f32>) -> Vec<usize> {
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
    let mut pairs = hungarian(&cost);
    pairs.truncate(m);
    pairs
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
        let of = attach(&mut s, (centroids.view(), guides.view()), &["a", "b"], &[]);
        assert_eq!(of, [Some(1), Some(0)]);
        assert_eq!((s.topics[1].label.as_str(), s.topics[1].named), ("a", true));
        assert_eq!((s.topics[0].label.as_str(), s.topics[0].named), ("b", true));
        assert_eq!(
            (s.topics[2].label.as_str(), s.topics[2].named),
            ("auto 2", false)
        );
        assert_eq!(s.topics[2].auto_label, "auto 2");
        // The guided fit's own pairing wins when it has one per name; a lost topic is none.
        let mut s = summary(3);
        let of = attach(
            &mut s,
            (centroids.view(), guides.view()),
            &["a", "b"],
            &[2, usize::MAX],
        );
        assert_eq!(of, [Some(2), None]);
        assert_eq!(
            (s.topics[2].label.as_str(), s.topics[0].named),
            ("a", false)
        );
    }
}
