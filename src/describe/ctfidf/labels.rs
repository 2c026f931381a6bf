//! Label choice from the tables alone: the best words of a class that is not a fitted topic.
//!
//! A merged topic or a node of the topic hierarchy is several topics taken together: its
//! weight units are their sums, and it is labelled from the [`ClassTable`] without going back
//! to the documents (so without phrases). As for a topic's label, words found in at most a
//! given share of all documents come first: a word in a fifth of all abstracts names no topic.

use super::weights::ClassTable;
use crate::tokenize::han;
use rustc_hash::FxHashSet;

impl ClassTable {
    /// The best `n` words of a class by weight, no two one term, those found in at most
    /// `max_share` of all documents first.
    pub fn best_words(&self, units: &[u64], n: usize, max_share: f64) -> Vec<(String, f64)> {
        let w = self.weights(units);
        let mut order: Vec<usize> = (0..w.len()).filter(|&s| w[s] > 0.0).collect();
        order.sort_by(|&a, &b| {
            (self.share[b] <= max_share)
                .cmp(&(self.share[a] <= max_share))
                .then(w[b].total_cmp(&w[a]))
                .then(a.cmp(&b))
        });
        let mut used = FxHashSet::default();
        // A lone Han character that is no word of its own (络 of 网络) labels nothing.
        let reads = |s: usize| {
            let text = &self.surfaces[s];
            !han::is_lone_han(text) || han::is_dictionary_word(text)
        };
        order
            .into_iter()
            .filter(|&s| reads(s) && used.insert(self.canon[s]))
            .take(n)
            .map(|s| (self.surfaces[s].clone(), w[s]))
            .collect()
    }
}
