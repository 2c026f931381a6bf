//! The report's tables, each defined once as a polars `DataFrame` of raw values; the writers
//! ([`super::csv`], [`super::parquet_file`], [`crate::workbook`]) turn the same frame into each format.
//!
//! Text cells hold the text itself: the CSV writer alone adds its formula guard, so Parquet and
//! the workbook keep the exact strings.

use crate::cluster::{Clustering, KSelection};
use crate::describe::matching::DriftRow;
use crate::describe::per_class::PerClass;
use crate::describe::trends::Trends;
use crate::describe::TopicSummary;
use crate::ingest::display_title;
use crate::ingest::Corpus;
use polars::prelude::*;

/// A text column.
pub fn text<S: AsRef<str>>(name: &str, values: impl IntoIterator<Item = S>) -> Column {
    opt_text(name, values.into_iter().map(Some))
}

/// An optional text column (empty cells for `None`), built in place: no `String` per cell.
pub fn opt_text<S: AsRef<str>>(name: &str, values: impl IntoIterator<Item = Option<S>>) -> Column {
    let values = values.into_iter();
    let mut b = StringChunkedBuilder::new(name.into(), values.size_hint().0);
    for v in values {
        b.append_option(v.as_ref().map(|s| s.as_ref()));
    }
    b.finish().into_column()
}

fn frame(columns: Vec<Column>) -> DataFrame {
    let height = columns.first().map_or(0, |c| c.len());
    DataFrame::new(height, columns).expect("the columns of a table have one length")
}

/// `documents`: one row per clustered document, with its place on the document `map` (empty
/// cells where it has none).
pub fn documents(
    corpus: &Corpus,
    clustering: &Clustering,
    summary: &TopicSummary,
    map: &[[f32; 2]],
) -> DataFrame {
    let docs = &corpus.documents;
    let a = clustering.assignments();
    let sources: Vec<String> = corpus
        .sources
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    let mut cols = vec![
        text("doc_id", docs.iter().map(|d| d.id.as_str())),
        text("source", docs.iter().map(|d| sources[d.source].as_str())),
        text("title", (0..docs.len()).map(|i| display_title(corpus, i))),
        Column::new(
            "topic_id".into(),
            a.iter()
                .map(|&t| summary.topics[t].id as u32)
                .collect::<Vec<_>>(),
        ),
        text(
            "topic_label",
            a.iter().map(|&t| summary.topics[t].label.as_str()),
        ),
        Column::new("distance".into(), clustering.distances().to_vec()),
        Column::new("confidence".into(), clustering.confidence()),
        Column::new("outlier".into(), clustering.outliers()),
        map_column("map_x", map, 0, docs.len()),
        map_column("map_y", map, 1, docs.len()),
    ];
    if corpus.has_time {
        cols.push(opt_text(
            "time",
            docs.iter().map(|d| d.time.as_ref().map(|t| t.0.as_str())),
        ));
    }
    if corpus.has_label {
        cols.push(opt_text("label", docs.iter().map(|d| d.label.as_deref())));
    }
    cols.push(text("batch", docs.iter().map(|d| d.batch.as_str())));
    if summary.topics.iter().any(|t| t.named) {
        cols.push(text("placed_by", placed_by(clustering, summary)));
    }
    frame(cols)
}

/// How each document was placed, with named topics: `zero-shot` (at least its named topic's
/// `min-similarity`), `guided` (into a named topic by the clustering around it) or
/// `clustered` (into a topic the data revealed).
fn placed_by<'a>(
    clustering: &'a Clustering,
    summary: &'a TopicSummary,
) -> impl Iterator<Item = &'static str> + 'a {
    let zero_shot = clustering.zero_shot();
    clustering
        .assignments()
        .iter()
        .enumerate()
        .map(
            move |(i, &t)| match (zero_shot.get(i), summary.topics[t].named) {
                (Some(true), _) => "zero-shot",
                (_, true) => "guided",
                _ => "clustered",
            },
        )
}

/// One coordinate of the map, rounded to 4 decimals (a map is read, not measured, and the
/// CSV stays short); null where a document has no finite place.
fn map_column(name: &str, map: &[[f32; 2]], axis: usize, n: usize) -> Column {
    let values: Vec<Option<f32>> = (0..n)
        .map(|i| {
            map.get(i)
                .map(|p| p[axis])
                .filter(|v| v.is_finite())
                .map(|v| (v * 1e4).round() / 1e4)
        })
        .collect();
    Column::new(name.into(), values)
}

/// `topics`: one row per topic.
pub fn topics(corpus: &Corpus, summary: &TopicSummary) -> DataFrame {
    let t = &summary.topics;
    let join_ids = |reps: &[usize]| {
        reps.iter()
            .map(|&i| corpus.documents[i].id.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let join_titles = |reps: &[usize]| {
        reps.iter()
            .map(|&i| display_title(corpus, i))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    frame(vec![
        Column::new(
            "topic_id".into(),
            t.iter().map(|x| x.id as u32).collect::<Vec<_>>(),
        ),
        text("label", t.iter().map(|x| x.label.as_str())),
        text("auto_label", t.iter().map(|x| x.auto_label.as_str())),
        Column::new(
            "named".into(),
            t.iter().map(|x| x.named).collect::<Vec<_>>(),
        ),
        Column::new(
            "size".into(),
            t.iter().map(|x| x.size as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "share".into(),
            t.iter().map(|x| x.share).collect::<Vec<_>>(),
        ),
        Column::new(
            "outliers".into(),
            t.iter().map(|x| x.outliers as u32).collect::<Vec<_>>(),
        ),
        text(
            "top_terms",
            t.iter().map(|x| {
                x.terms
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
        ),
        text(
            "representative_doc_ids",
            t.iter().map(|x| join_ids(&x.representatives)),
        ),
        text(
            "representative_titles",
            t.iter().map(|x| join_titles(&x.representatives)),
        ),
    ])
}

/// `terms`: the ranked terms of every topic.
pub fn terms(summary: &TopicSummary) -> DataFrame {
    let (mut ids, mut ranks, mut terms, mut weights) = (vec![], vec![], vec![], vec![]);
    for t in &summary.topics {
        for (r, w) in t.terms.iter().enumerate() {
            ids.push(t.id as u32);
            ranks.push(r as u32 + 1);
            terms.push(w.text.as_str());
            weights.push(w.weight);
        }
    }
    frame(vec![
        Column::new("topic_id".into(), ids),
        Column::new("rank".into(), ranks),
        text("term", terms),
        Column::new("weight".into(), weights),
    ])
}

/// `duplicates`: the documents whose whole text repeats an earlier one's, with that one's id
/// and where each was read.
pub fn duplicates(corpus: &Corpus) -> DataFrame {
    let d = &corpus.duplicates;
    frame(vec![
        text("id", d.iter().map(|x| x.id.as_str())),
        text("duplicate_of", d.iter().map(|x| x.duplicate_of.as_str())),
        text("source", d.iter().map(|x| x.file.display().to_string())),
        Column::new(
            "row".into(),
            d.iter().map(|x| x.row as i64).collect::<Vec<_>>(),
        ),
    ])
}

/// `k_selection`: the automatic-k sweep.
pub fn k_selection(sel: &KSelection) -> DataFrame {
    frame(vec![
        Column::new(
            "k".into(),
            sel.scores.iter().map(|s| s.k as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "silhouette".into(),
            sel.scores.iter().map(|s| s.silhouette).collect::<Vec<_>>(),
        ),
        Column::new(
            "smoothed".into(),
            sel.scores.iter().map(|s| s.smoothed).collect::<Vec<_>>(),
        ),
        Column::new(
            "rise".into(),
            sel.scores.iter().map(|s| s.rise).collect::<Vec<_>>(),
        ),
        Column::new(
            "inertia".into(),
            sel.scores.iter().map(|s| s.inertia).collect::<Vec<_>>(),
        ),
        Column::new(
            "chosen".into(),
            sel.scores
                .iter()
                .map(|s| s.k == sel.chosen)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "decided_by".into(),
            sel.scores
                .iter()
                .map(|s| (s.k == sel.chosen).then(|| sel.decided_by.name()))
                .collect::<Vec<_>>(),
        ),
    ])
}

/// `topic_trends`: documents per topic and period, and the topic's share of the period.
pub fn topic_trends(summary: &TopicSummary, trends: &Trends) -> DataFrame {
    let (mut period, mut ids, mut labels, mut counts, mut shares) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (j, p) in trends.periods.iter().enumerate() {
        for (index, t) in summary.topics.iter().enumerate() {
            period.push(p.label.as_str());
            ids.push(t.id as u32);
            labels.push(t.label.as_str());
            counts.push(trends.counts[index][j] as u32);
            shares.push(trends.shares[index][j]);
        }
    }
    frame(vec![
        text("period", period),
        Column::new("topic_id".into(), ids),
        text("label", labels),
        Column::new("count".into(), counts),
        Column::new("share".into(), shares),
    ])
}

/// `topics_per_class`: each class's documents per topic (classes largest first, topics by id),
/// the topic's share of the class and its terms within the class. The shares are rounded to
/// the CSV's six decimals so that each class's add up to exactly 1 ([`shares_summing_to_one`]).
pub fn topics_per_class(summary: &TopicSummary, per_class: &PerClass) -> DataFrame {
    let mut order: Vec<usize> = (0..summary.topics.len()).collect();
    order.sort_by_key(|&t| summary.topics[t].id);
    let shares: Vec<Vec<f64>> = per_class
        .classes
        .iter()
        .map(|c| shares_summing_to_one(&c.counts))
        .collect();
    let cells = || {
        per_class
            .classes
            .iter()
            .flat_map(|c| order.iter().map(move |&t| (c, t, &summary.topics[t])))
    };
    frame(vec![
        text("class", cells().map(|(c, _, _)| c.name.as_str())),
        Column::new(
            "topic_id".into(),
            cells().map(|(_, _, x)| x.id as u32).collect::<Vec<_>>(),
        ),
        text("topic_label", cells().map(|(_, _, x)| x.label.as_str())),
        Column::new(
            "named".into(),
            cells().map(|(_, _, x)| x.named).collect::<Vec<_>>(),
        ),
        Column::new(
            "count".into(),
            cells()
                .map(|(c, t, _)| c.counts[t] as u32)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "share".into(),
            shares
                .iter()
                .flat_map(|s| order.iter().map(move |&t| s[t]))
                .collect::<Vec<_>>(),
        ),
        text(
            "terms",
            cells().map(|(c, t, _)| {
                let terms: Vec<&str> = c.terms[t].iter().map(|w| w.text.as_str()).collect();
                terms.join("; ")
            }),
        ),
    ])
}

/// `counts / their sum`, each rounded to 6 decimals (millionths) by the largest remainder
/// (ties to the first), so the rounded shares add up to exactly 1 as a CSV shows them.
pub fn shares_summing_to_one(counts: &[usize]) -> Vec<f64> {
    const UNITS: u128 = 1_000_000;
    let total = counts.iter().sum::<usize>().max(1) as u128;
    let mut units: Vec<u128> = counts.iter().map(|&c| c as u128 * UNITS / total).collect();
    let left = (UNITS as usize).saturating_sub(units.iter().sum::<u128>() as usize);
    let mut by_remainder: Vec<usize> = (0..counts.len()).collect();
    by_remainder.sort_by_key(|&i| std::cmp::Reverse(counts[i] as u128 * UNITS % total));
    if counts.iter().any(|&c| c > 0) {
        for &i in by_remainder.iter().take(left) {
            units[i] += 1;
        }
    }
    units.iter().map(|&u| u as f64 / UNITS as f64).collect()
}

/// The same shares pivoted for a spreadsheet: one row per period (with its document count),
/// one column per topic, headed `<id>: <label>`.
pub fn trends_wide(summary: &TopicSummary, trends: &Trends) -> DataFrame {
    let mut cols = vec![
        text("period", trends.periods.iter().map(|p| p.label.as_str())),
        Column::new(
            "documents".into(),
            trends
                .periods
                .iter()
                .map(|p| p.documents as u32)
                .collect::<Vec<_>>(),
        ),
    ];
    for (index, t) in summary.topics.iter().enumerate() {
        cols.push(Column::new(
            format!("{}: {}", t.id, t.label).into(),
            trends.shares[index].clone(),
        ));
    }
    frame(cols)
}

/// `trends`: topics ranked from most rising to most declining (see
/// [`crate::describe::trends::MEASURE`]).
pub fn trends(summary: &TopicSummary, trends: &Trends) -> DataFrame {
    let t = &trends.trends;
    let unit = if trends.timed {
        "pp_per_year"
    } else {
        "pp_per_batch"
    };
    let direction = |s: f64| {
        if trends.periods.len() < 2 || s.abs() < 0.05 {
            "steady"
        } else if s > 0.0 {
            "rising"
        } else {
            "declining"
        }
    };
    frame(vec![
        Column::new("rank".into(), (1..=t.len() as u32).collect::<Vec<_>>()),
        Column::new(
            "topic_id".into(),
            t.iter()
                .map(|x| summary.topics[x.topic_id].id as u32)
                .collect::<Vec<_>>(),
        ),
        text(
            "label",
            t.iter().map(|x| summary.topics[x.topic_id].label.as_str()),
        ),
        text("direction", t.iter().map(|x| direction(x.slope))),
        Column::new(
            format!("slope_{unit}").into(),
            t.iter().map(|x| x.slope).collect::<Vec<_>>(),
        ),
        Column::new(
            "first_share".into(),
            t.iter().map(|x| x.first_share).collect::<Vec<_>>(),
        ),
        Column::new(
            "last_share".into(),
            t.iter().map(|x| x.last_share).collect::<Vec<_>>(),
        ),
        Column::new("periods".into(), vec![trends.periods.len() as u32; t.len()]),
    ])
}

/// `topic_tree`: the topic hierarchy, one row per node (topics first, then merges in order).
pub fn topic_tree(tree: &crate::describe::hierarchy::TopicTree) -> DataFrame {
    let n = &tree.nodes;
    let join = |v: &[usize]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };
    frame(vec![
        Column::new(
            "node".into(),
            n.iter().map(|x| x.node as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "parent".into(),
            n.iter()
                .map(|x| x.parent.map(|p| p as u32))
                .collect::<Vec<_>>(),
        ),
        text("children", n.iter().map(|x| join(&x.children))),
        Column::new(
            "distance".into(),
            n.iter().map(|x| x.distance).collect::<Vec<_>>(),
        ),
        text("label", n.iter().map(|x| x.label.as_str())),
        Column::new(
            "size".into(),
            n.iter().map(|x| x.size as u32).collect::<Vec<_>>(),
        ),
        text("topics", n.iter().map(|x| join(&x.topics))),
    ])
}

/// `drift`: how this run's topics map onto the previous run's.
pub fn drift(rows: &[DriftRow]) -> DataFrame {
    let opt = |v: Option<usize>| v.map(|x| x as u32);
    frame(vec![
        Column::new(
            "previous_id".into(),
            rows.iter().map(|r| opt(r.previous_id)).collect::<Vec<_>>(),
        ),
        Column::new(
            "new_id".into(),
            rows.iter().map(|r| opt(r.id)).collect::<Vec<_>>(),
        ),
        text("status", rows.iter().map(|r| r.status)),
        text("label", rows.iter().map(|r| r.label.as_str())),
        text(
            "previous_label",
            rows.iter().map(|r| r.previous_label.as_str()),
        ),
        text("name", rows.iter().map(|r| r.name.as_str())),
        Column::new(
            "similarity".into(),
            rows.iter().map(|r| r.similarity).collect::<Vec<_>>(),
        ),
        Column::new(
            "share_change".into(),
            rows.iter().map(|r| r.share_change).collect::<Vec<_>>(),
        ),
    ])
}

/// What `topicmap assign --out arrow --emit-terms` adds to `documents`, for an engine to sum:
/// each row's `period`, its `row` in its input, a `snippet`, its single-word model `features`
/// with their c-TF-IDF weight `units` (see `describe::aggregate::units`), and `skipped` (the
/// reason, on rows appended for the documents left out; empty on assigned rows).
pub fn documents_with_terms(
    documents: DataFrame,
    corpus: &Corpus,
    periods: &[String],
    features: &[Vec<(u32, u32)>],
) -> Result<DataFrame, PolarsError> {
    let docs = &corpus.documents;
    let list = |name: &str, values: Vec<Series>| -> Column {
        let mut ca: ListChunked = values.into_iter().map(Some).collect();
        ca.rename(name.into());
        ca.into_column()
    };
    let mut df = documents;
    let n = df.height();
    let extra = vec![
        text("period", periods),
        Column::new(
            "row".into(),
            docs.iter().map(|d| d.row as i64).collect::<Vec<_>>(),
        ),
        text(
            "snippet",
            docs.iter()
                .map(|d| crate::ingest::snippet(&d.text, crate::ingest::SNIPPET_CHARS)),
        ),
        list(
            "features",
            features
                .iter()
                .map(|f| Series::new("".into(), f.iter().map(|x| x.0).collect::<Vec<u32>>()))
                .collect(),
        ),
        list(
            "units",
            features
                .iter()
                .map(|f| {
                    let u: Vec<u64> = f
                        .iter()
                        .map(|x| crate::describe::aggregate::units(x.1))
                        .collect();
                    Series::new("".into(), u)
                })
                .collect(),
        ),
        opt_text("skipped", (0..n).map(|_| None::<&str>)),
    ];
    for c in extra {
        df.with_column(c)?;
    }
    if corpus.skipped.is_empty() {
        return Ok(df);
    }
    // The skipped documents: their input, row and reason; every other cell empty.
    let m = corpus.skipped.len();
    let columns: Vec<Column> = df
        .columns()
        .iter()
        .map(|c| match c.name().as_str() {
            "source" => text(
                "source",
                corpus.skipped.iter().map(|s| s.file.display().to_string()),
            ),
            "row" => Column::new(
                "row".into(),
                corpus
                    .skipped
                    .iter()
                    .map(|s| s.row as i64)
                    .collect::<Vec<_>>(),
            ),
            "skipped" => text("skipped", corpus.skipped.iter().map(|s| s.reason.as_str())),
            name => Column::full_null(name.into(), m, c.dtype()),
        })
        .collect();
    df.vstack(&DataFrame::new(m, columns)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_51_rounded_shares_add_up_to_one() {
        for counts in [
            vec![1, 1, 1],
            vec![7, 3, 5],
            vec![2, 0, 0, 1, 3, 3, 1],
            vec![0, 0],
        ] {
            let shares = shares_summing_to_one(&counts);
            let total: usize = counts.iter().sum();
            for (&c, &s) in counts.iter().zip(&shares) {
                let exact = c as f64 / total.max(1) as f64;
                assert!((s - exact).abs() <= 1e-6, "{counts:?}: {s} for {exact}");
                assert_eq!((s * 1e6).round() / 1e6, s, "six decimals");
            }
            let sum: f64 = shares.iter().sum();
            let want = if total == 0 { 0.0 } else { 1.0 };
            assert!((sum - want).abs() < 1e-9, "{counts:?}: {sum}");
        }
    }
}
