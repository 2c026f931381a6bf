//! Topics per class (`[describe] per-class = "COLUMN"`): how the topics spread over the values
//! of an input column, such as a venue or a track, and what each topic is about within each.
//!
//! Each document counts once, in its class and its topic, so a class's counts add up to its
//! size and its shares (count / class size) to 1: a class's row is its own topic mix, comparable
//! between a large class and a small one. A document without a class (an empty cell, or a paper
//! list, which has no columns) is in the class [`NO_CLASS`].
//!
//! A topic's terms within a class are c-TF-IDF terms (see [`ctfidf`](super::ctfidf)) counted on
//! that class's documents of the topic alone, against the rest of the corpus taken as one more
//! class: the weights reward what sets the topic's documents in this class apart, and the
//! term rules (spread, diversity, one stem once, phrases) are the topics' own. That is one
//! counting pass over the corpus per class.
//!
//! Classes are listed largest first, then by name; topics by index (the writers list them by
//! id).

use super::ctfidf::{self, TermVectors, WeightedTerm};
use super::{term_inputs, term_rules, DescribeValidParams};
use crate::tokenize::TokenizedCorpus;
use crate::vectorize::TfIdf;

/// The class of a document whose class cell is empty, or that has no class column.
pub const NO_CLASS: &str = "(none)";

/// Terms listed for a topic within a class.
pub const CLASS_TERMS: usize = 5;

/// One class: its documents per topic, and each topic's terms within it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassTopics {
    /// The class's value in the column ([`NO_CLASS`] for documents without one).
    pub name: String,
    /// Its documents.
    pub size: usize,
    /// `counts[topic]`: its documents in each topic (by topic index); they add up to `size`.
    pub counts: Vec<usize>,
    /// `terms[topic]`: the topic's best terms within the class (none where it has no document).
    pub terms: Vec<Vec<WeightedTerm>>,
}

impl ClassTopics {
    /// The share of the class's documents in `topic`: the shares of a class add up to 1.
    pub fn share(&self, topic: usize) -> f64 {
        self.counts[topic] as f64 / self.size.max(1) as f64
    }
}

/// The topics of every class of a column.
#[derive(Debug, Clone, PartialEq)]
pub struct PerClass {
    /// The input column the classes come from.
    pub column: String,
    /// Largest first, then by name.
    pub classes: Vec<ClassTopics>,
}

/// Counts each class's documents per topic (`classes[d]` is document `d`'s class, `None` for
/// [`NO_CLASS`]; `assignments[d]` its topic, of `k`). The classes come largest first, then by
/// name, without terms; also returns each document's class index.
pub fn count(
    classes: &[Option<&str>],
    assignments: &[usize],
    k: usize,
) -> (Vec<ClassTopics>, Vec<usize>) {
    let mut index: std::collections::HashMap<&str, usize> = Default::default();
    let mut found: Vec<ClassTopics> = Vec::new();
    let mut of_doc = Vec::with_capacity(classes.len());
    for (c, &t) in classes.iter().zip(assignments) {
        let name = c
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .unwrap_or(NO_CLASS);
        let i = *index.entry(name).or_insert_with(|| {
            found.push(ClassTopics {
                name: name.to_string(),
                size: 0,
                counts: vec![0; k],
                terms: vec![Vec::new(); k],
            });
            found.len() - 1
        });
        found[i].size += 1;
        found[i].counts[t] += 1;
        of_doc.push(i);
    }
    let mut ordered: Vec<(usize, ClassTopics)> = found.into_iter().enumerate().collect();
    ordered.sort_by(|(_, a), (_, b)| b.size.cmp(&a.size).then_with(|| a.name.cmp(&b.name)));
    let mut rank = vec![0; ordered.len()];
    for (r, (i, _)) in ordered.iter().enumerate() {
        rank[*i] = r;
    }
    let found = ordered.into_iter().map(|(_, c)| c).collect();
    (found, of_doc.into_iter().map(|i| rank[i]).collect())
}

/// The topics of each class of `column` (see the module docs): `classes[d]` is document `d`'s
/// class, `assignments[d]` its topic (of `k`); `tc` and `tfidf` are the corpus the topics were
/// fitted on, and `term_vectors` drive the diversity of the terms, as in
/// [`describe`](super::describe).
pub fn per_class(
    column: &str,
    classes: &[Option<&str>],
    (assignments, k): (&[usize], usize),
    (tc, tfidf): (&TokenizedCorpus, &TfIdf),
    params: &DescribeValidParams,
    term_vectors: Option<ndarray::ArrayView2<f32>>,
) -> PerClass {
    let (mut found, of_doc) = count(classes, assignments, k);
    let (vocabulary, row) = term_inputs(tc, tfidf);
    let rules = term_rules(params, CLASS_TERMS);
    let vectors = term_vectors.as_ref().map(|v| TermVectors {
        row: &row,
        vectors: v.view(),
    });
    // The class's documents in their topics; every other document in one more class, `k`.
    let mut cells = vec![k; assignments.len()];
    for (c, class) in found.iter_mut().enumerate() {
        for (d, cell) in cells.iter_mut().enumerate() {
            *cell = if of_doc[d] == c { assignments[d] } else { k };
        }
        let (mut terms, _) = ctfidf::topic_terms(tc, &vocabulary, &cells, k + 1, &rules, vectors);
        terms.truncate(k);
        for (t, list) in terms.iter_mut().enumerate() {
            if class.counts[t] == 0 {
                list.clear();
            }
        }
        class.terms = terms;
    }
    PerClass {
        column: column.to_string(),
        classes: found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::DescribeParams;
    use crate::tokenize::{Analyzer, StopWordList, TokenizerParams};
    use crate::vectorize::TfIdfParams;

    #[test]
    fn counts_add_up_to_each_class_and_shares_to_one() {
        let classes = [
            Some("ICML"),
            Some("NeurIPS"),
            None,
            Some("NeurIPS"),
            Some(" "),
            Some("ICML"),
            Some("NeurIPS"),
            Some("ACL"),
        ];
        let assignments = [0, 1, 2, 1, 0, 2, 0, 2];
        let (found, of_doc) = count(&classes, &assignments, 3);
        let names: Vec<&str> = found.iter().map(|c| c.name.as_str()).collect();
        // Largest first; ties by name ("(none)" sorts before letters).
        assert_eq!(names, ["NeurIPS", NO_CLASS, "ICML", "ACL"]);
        for (c, class) in found.iter().enumerate() {
            let members = of_doc.iter().filter(|&&i| i == c).count();
            assert_eq!(class.size, members, "{}", class.name);
            assert_eq!(class.counts.iter().sum::<usize>(), class.size);
            let shares: f64 = (0..3).map(|t| class.share(t)).sum();
            assert!((shares - 1.0).abs() < 1e-12, "{}: {shares}", class.name);
        }
        assert_eq!(found[0].counts, [1, 2, 0]);
        assert_eq!(
            found[1].counts,
            [1, 0, 1],
            "the blank cell and the missing one"
        );
        // Document d's class index points at its class.
        for (d, c) in classes.iter().enumerate() {
            let name = c
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .unwrap_or(NO_CLASS);
            assert_eq!(found[of_doc[d]].name, name);
        }
    }

    #[test]
    fn the_order_is_the_same_whatever_the_input_order() {
        let classes = [Some("b"), Some("a"), Some("c"), Some("a"), Some("b")];
        let assignments = [0, 1, 1, 0, 1];
        let (found, _) = count(&classes, &assignments, 2);
        let mut rev_c = classes;
        rev_c.reverse();
        let mut rev_a = assignments;
        rev_a.reverse();
        let (again, _) = count(&rev_c, &rev_a, 2);
        assert_eq!(found, again);
        let names: Vec<&str> = found.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    /// Two topics (graphs, proteins) over two venues whose documents of a topic use different
    /// words: each venue's terms of a topic are its own.
    #[test]
    fn terms_within_a_class_come_from_its_documents() {
        let mut texts = Vec::new();
        let mut classes = Vec::new();
        let mut assignments = Vec::new();
        for i in 0..12 {
            let (venue, extra) = if i % 2 == 0 {
                ("chem", "molecule bond")
            } else {
                ("web", "citation social")
            };
            texts.push(format!("graph nodes edges {extra} item{i}"));
            classes.push(Some(venue));
            assignments.push(0);
            texts.push(format!("protein folding sequence {venue}word item{i}"));
            classes.push(Some(venue));
            assignments.push(1);
        }
        let p = TokenizerParams::new()
            .stem(false)
            .stop_words(StopWordList::None)
            .check()
            .unwrap();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let tc = TokenizedCorpus::build_texts(&refs, &Analyzer::new(&p));
        let tfidf = TfIdfParams::new().check().unwrap().fit(&tc).unwrap();
        let params = DescribeParams::new().phrases(false).check().unwrap();
        let run = || {
            per_class(
                "venue",
                &classes,
                (&assignments, 2),
                (&tc, &tfidf),
                &params,
                None,
            )
        };
        let got = run();
        assert_eq!(got, run(), "the same input, the same terms");
        let terms = |c: usize, t: usize| -> Vec<&str> {
            got.classes[c].terms[t]
                .iter()
                .map(|w| w.text.as_str())
                .collect()
        };
        let chem = got.classes.iter().position(|c| c.name == "chem").unwrap();
        let web = 1 - chem;
        assert!(terms(chem, 0).contains(&"molecule"), "{:?}", terms(chem, 0));
        assert!(
            !terms(chem, 0).contains(&"citation"),
            "{:?}",
            terms(chem, 0)
        );
        assert!(terms(web, 0).contains(&"citation"), "{:?}", terms(web, 0));
        assert!(terms(web, 1).contains(&"webword"), "{:?}", terms(web, 1));
        assert!(got
            .classes
            .iter()
            .all(|c| c.terms.iter().all(|t| t.len() <= CLASS_TERMS)));
    }
}
