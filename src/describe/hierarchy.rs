//! The topic hierarchy: which topics are close kin, merged step by step into one tree.
//!
//! Each topic is its vector of c-TF-IDF weights over the vocabulary (see [`super::ctfidf`]),
//! scaled to unit length. Agglomerative clustering with Ward's linkage (as BERTopic's
//! hierarchical topics) merges, at each step, the two groups whose merge adds least to the
//! within-group spread, updated by the Lance-Williams formula (ties to the earlier groups, so
//! the tree is the same on every run of the same fit). Ward's merges stay balanced where
//! average linkage chains one topic after another onto a growing group, which matters when the
//! tree is cut into a few groups. A node's distance is Ward's (Euclidean between unit vectors
//! for two topics: `sqrt(2 (1 - cosine))`). A merged group's label is the c-TF-IDF label of its
//! documents taken together. Leaves keep their topic ids; merge nodes are numbered from the
//! first id no topic has had (`next_id`), in merge order. Cutting the tree at N groups gives a
//! coarser set of topics without refitting (`[describe] merge-to`).

use super::ctfidf::{ClassTable, WeightedTerm};
use super::{Topic, TopicSummary};

/// One node: a topic (a leaf) or a merge of two nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    pub node: usize,
    pub parent: Option<usize>,
    /// The two merged nodes (empty for a leaf).
    pub children: Vec<usize>,
    /// Cosine distance at which the children merged (0 for a leaf).
    pub distance: f64,
    pub label: String,
    /// Documents under the node.
    pub size: usize,
    /// Topic ids of the leaves under the node, ascending.
    pub topics: Vec<usize>,
}

/// The whole tree, leaves first (in topic order), then merges in the order they happened; the
/// last node is the root.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicTree {
    pub nodes: Vec<TreeNode>,
}

/// Builds the tree of `summary`'s topics from its c-TF-IDF tables. `first_merge_id` numbers
/// the merge nodes; `label_terms` and `max_share` label them as topics are labelled. `None`
/// without tables or with fewer than two topics.
pub fn build(
    summary: &TopicSummary,
    first_merge_id: usize,
    label_terms: usize,
    max_share: f64,
) -> Option<TopicTree> {
    let classes = summary.classes.as_ref()?;
    let k = summary.topics.len();
    if k < 2 || classes.units.len() != k {
        return None;
    }
    let mut nodes = leaves(summary);
    let mut ward = Ward::new(classes);
    let mut next = first_merge_id;
    while ward.open.len() > 1 {
        let (d, i, j) = ward.closest();
        let ((bi, bj), leaves) = ward.merge(i, j, d, nodes.len());
        for child in [bi, bj] {
            nodes[child].parent = Some(next);
        }
        let label = group_label(classes, &leaves, label_terms, max_share);
        let mut topics: Vec<usize> = leaves.iter().map(|&l| summary.topics[l].id).collect();
        topics.sort_unstable();
        nodes.push(TreeNode {
            node: next,
            parent: None,
            children: vec![nodes[bi].node, nodes[bj].node],
            distance: d,
            label,
            size: leaves.iter().map(|&l| summary.topics[l].size).sum(),
            topics,
        });
        next += 1;
    }
    Some(TopicTree { nodes })
}

/// The leaves of the tree: one node per topic, in topic order.
fn leaves(summary: &TopicSummary) -> Vec<TreeNode> {
    summary
        .topics
        .iter()
        .map(|t| TreeNode {
            node: t.id,
            parent: None,
            children: Vec::new(),
            distance: 0.0,
            label: t.label.clone(),
            size: t.size,
            topics: vec![t.id],
        })
        .collect()
}

/// The label of a merged group (topics by index): the c-TF-IDF label of its documents taken
/// together.
fn group_label(
    classes: &ClassTable,
    leaves: &[usize],
    label_terms: usize,
    max_share: f64,
) -> String {
    let units = summed(classes, leaves);
    classes
        .best_words(&units, label_terms, max_share)
        .iter()
        .map(|(w, _)| w.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The groups still open in Ward's clustering and the distances between them.
struct Ward {
    /// Ward distances between open groups, by their place in `open` (updated as groups merge).
    dist: Vec<Vec<f64>>,
    /// Open groups: (node index, leaf indices).
    open: Vec<(usize, Vec<usize>)>,
}

impl Ward {
    /// Every topic its own group, at the Euclidean distance between the topics' unit c-TF-IDF
    /// vectors.
    fn new(classes: &ClassTable) -> Ward {
        let unit = |w: Vec<f64>| -> Vec<f64> {
            let n = w.iter().map(|x| x * x).sum::<f64>().sqrt();
            w.into_iter()
                .map(|x| if n > 0.0 { x / n } else { 0.0 })
                .collect()
        };
        let vectors: Vec<Vec<f64>> = classes
            .units
            .iter()
            .map(|u| unit(classes.weights(u)))
            .collect();
        let euclid = |a: usize, b: usize| {
            let dot: f64 = vectors[a].iter().zip(&vectors[b]).map(|(x, y)| x * y).sum();
            (2.0 * (1.0 - dot)).max(0.0).sqrt()
        };
        let k = vectors.len();
        Ward {
            dist: (0..k)
                .map(|a| (0..k).map(|b| euclid(a, b)).collect())
                .collect(),
            open: (0..k).map(|i| (i, vec![i])).collect(),
        }
    }

    /// The two closest open groups `(distance, i, j)`, `i < j`; ties to the earlier pair.
    fn closest(&self) -> (f64, usize, usize) {
        let n = self.open.len();
        let mut best: Option<(f64, usize, usize)> = None;
        for (i, row) in self.dist.iter().enumerate().take(n) {
            for (j, &d) in row.iter().enumerate().take(n).skip(i + 1) {
                if best.is_none_or(|(bd, _, _)| d < bd - 1e-12) {
                    best = Some((d, i, j));
                }
            }
        }
        best.expect("two open groups")
    }

    /// Merges open groups `i < j` (at distance `d`) into one group, last, for the new node at
    /// `index`; returns the node indices of the two merged groups and the merged leaves.
    fn merge(&mut self, i: usize, j: usize, d: f64, index: usize) -> ((usize, usize), Vec<usize>) {
        // Lance-Williams update for Ward: the merged group's distance to every other group.
        let (ni, nj) = (self.open[i].1.len() as f64, self.open[j].1.len() as f64);
        let dist = &mut self.dist;
        let merged: Vec<f64> = (0..self.open.len())
            .map(|m| {
                let nm = self.open[m].1.len() as f64;
                let v = ((ni + nm) * dist[i][m].powi(2) + (nj + nm) * dist[j][m].powi(2)
                    - nm * d.powi(2))
                    / (ni + nj + nm);
                v.max(0.0).sqrt()
            })
            .collect();
        // The merged group takes the end; i and j leave (j first: it is the later one).
        for (row, &to_merged) in dist.iter_mut().zip(&merged) {
            row.push(to_merged);
        }
        let mut new_row = merged;
        new_row.push(0.0);
        dist.push(new_row);
        for idx in [j, i] {
            dist.remove(idx);
            for row in dist.iter_mut() {
                row.remove(idx);
            }
        }
        let (bj, leaves_j) = self.open.remove(j);
        let (bi, leaves_i) = self.open.remove(i);
        let mut leaves = leaves_i;
        leaves.extend(leaves_j);
        self.open.push((index, leaves.clone()));
        debug_assert_eq!(self.dist.len(), self.open.len());
        ((bi, bj), leaves)
    }
}

/// The weight units of several topics (by index) taken together.
pub fn summed(classes: &ClassTable, topics: &[usize]) -> Vec<u64> {
    let mut units = vec![0u64; classes.idf.len()];
    for &t in topics {
        units
            .iter_mut()
            .zip(&classes.units[t])
            .for_each(|(a, b)| *a += b);
    }
    units
}

/// `summary` with its topics merged into `groups` (topic indices, as [`TopicTree::cut`]
/// gives them by id): a group of one keeps its topic as it is; a larger group takes its
/// smallest topic id, the label and top terms of its documents taken together (single words,
/// from the c-TF-IDF tables), its members' representatives, closest first. `distances` are the
/// documents' distances (for ordering representatives).
pub fn merge_summary(
    summary: &TopicSummary,
    groups: &[Vec<usize>],
    distances: &[f32],
    top_terms: usize,
    label_terms: usize,
    max_share: f64,
    representatives: usize,
) -> TopicSummary {
    let classes = summary.classes.as_ref();
    let topics = groups
        .iter()
        .map(|members| {
            if let [one] = members[..] {
                return summary.topics[one].clone();
            }
            let ts: Vec<&Topic> = members.iter().map(|&t| &summary.topics[t]).collect();
            let size: usize = ts.iter().map(|t| t.size).sum();
            let (terms, label) = match classes {
                Some(c) => {
                    let units = summed(c, members);
                    let words = c.best_words(&units, top_terms, max_share);
                    let slot_of = |w: &str| c.surfaces.iter().position(|s| s == w);
                    let terms: Vec<WeightedTerm> = words
                        .iter()
                        .map(|(w, weight)| {
                            let s = slot_of(w).unwrap_or(0);
                            WeightedTerm {
                                text: w.clone(),
                                weight: *weight,
                                stems: vec![c.terms[s]],
                                words: 1,
                                corpus_share: c.share[s],
                                lift: 0.0,
                            }
                        })
                        .collect();
                    let label = words
                        .iter()
                        .take(label_terms)
                        .map(|(w, _)| w.as_str())
                        .collect::<Vec<_>>()
                        .join(", ");
                    (terms, label)
                }
                None => (Vec::new(), ts[0].label.clone()),
            };
            let mut reps: Vec<usize> = ts
                .iter()
                .flat_map(|t| t.representatives.iter().copied())
                .collect();
            reps.sort_by(|&a, &b| distances[a].total_cmp(&distances[b]).then(a.cmp(&b)));
            reps.truncate(representatives);
            Topic {
                id: ts.iter().map(|t| t.id).min().unwrap_or(0),
                auto_label: label.clone(),
                label,
                size,
                share: size as f64 / summary.documents.max(1) as f64,
                terms,
                representatives: reps,
                outliers: ts.iter().map(|t| t.outliers).sum(),
                named: false,
            }
        })
        .collect();
    let classes = classes.map(|c| ClassTable {
        units: groups.iter().map(|g| summed(c, g)).collect(),
        ..c.clone()
    });
    TopicSummary {
        topics,
        classes,
        documents: summary.documents,
    }
}

impl TopicTree {
    /// The groups of topics (by topic id, each ascending; groups ordered by their smallest id)
    /// when the tree is cut into at most `n` groups: the last merges are undone.
    pub fn cut(&self, n: usize) -> Vec<Vec<usize>> {
        let leaves = self.nodes.iter().filter(|x| x.children.is_empty()).count();
        let merges = leaves.saturating_sub(n.max(1));
        // The groups after the first `merges` merges: nodes with no parent among them.
        let kept: Vec<&TreeNode> = self.nodes[..leaves + merges].iter().collect();
        let ids: std::collections::HashSet<usize> = kept.iter().map(|x| x.node).collect();
        let mut groups: Vec<Vec<usize>> = kept
            .iter()
            .filter(|x| x.parent.is_none_or(|p| !ids.contains(&p)))
            .map(|x| x.topics.clone())
            .collect();
        groups.sort_by_key(|g| g[0]);
        groups
    }

    /// The node of each group of [`TopicTree::cut`]: the node whose leaves are the group.
    pub fn node_of(&self, group: &[usize]) -> Option<&TreeNode> {
        self.nodes.iter().find(|x| x.topics == group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::Topic;

    fn summary() -> TopicSummary {
        // Four topics over five words: 0 and 1 share "graph", 2 and 3 share "protein".
        let units = vec![
            vec![3000, 0, 1000, 0, 0],
            vec![3000, 0, 0, 1000, 0],
            vec![0, 3000, 0, 0, 1000],
            vec![0, 3000, 0, 500, 500],
        ];
        let topic = |id: usize, label: &str| Topic {
            id,
            label: label.into(),
            auto_label: label.into(),
            size: 10 + id,
            share: 0.25,
            terms: Vec::new(),
            representatives: Vec::new(),
            outliers: 0,
            named: false,
        };
        TopicSummary {
            topics: vec![
                topic(0, "graph, nodes"),
                topic(3, "graph, edges"),
                topic(1, "protein, folding"),
                topic(2, "protein, sequence"),
            ],
            classes: Some(ClassTable {
                terms: (0..5).collect(),
                surfaces: ["graph", "protein", "nodes", "edges", "folding"]
                    .map(String::from)
                    .to_vec(),
                share: vec![0.1; 5],
                idf: vec![1.0; 5],
                canon: (0..5).collect(),
                units,
                damping: true,
            }),
            documents: 46,
        }
    }

    #[test]
    fn kin_topics_merge_first_and_the_root_holds_them_all() {
        let tree = build(&summary(), 10, 2, 0.2).unwrap();
        assert_eq!(tree.nodes.len(), 7, "4 leaves and 3 merges");
        let merges: Vec<&TreeNode> = tree
            .nodes
            .iter()
            .filter(|n| !n.children.is_empty())
            .collect();
        assert_eq!(merges[0].topics.len() + merges[1].topics.len(), 4);
        let graphs = merges
            .iter()
            .find(|n| n.topics == [0, 3])
            .expect("graphs merge");
        assert!(graphs.label.starts_with("graph"), "{}", graphs.label);
        assert_eq!(graphs.size, 10 + 13);
        assert!(merges.iter().any(|n| n.topics == [1, 2]));
        let root = tree.nodes.last().unwrap();
        assert_eq!((root.topics.len(), root.parent), (4, None));
        assert!(root.distance >= merges[0].distance && root.distance >= merges[1].distance);
        assert_eq!(root.node, 12, "merge nodes are numbered from 10");
        assert!(tree.nodes[..4].iter().all(|leaf| leaf.parent.is_some()));
    }

    #[test]
    fn cutting_undoes_the_last_merges() {
        let tree = build(&summary(), 10, 2, 0.2).unwrap();
        assert_eq!(tree.cut(2), [vec![0, 3], vec![1, 2]]);
        assert_eq!(tree.cut(4), [vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(tree.cut(1), [vec![0, 1, 2, 3]]);
        assert_eq!(tree.node_of(&[0, 3]).unwrap().children.len(), 2);
    }
}
