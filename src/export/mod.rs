//! Export: the report's tables (`documents.csv`, `topics.csv`, `terms.csv`) and `run.json`.
//!
//! Tables go through polars (see [`csv`] for the spreadsheet rules). `run.json` records how the
//! report was made: resolved settings, inputs with their sha256, counts and stage timings. Apart
//! from the timings and the run date, two runs with the same inputs and seed write identical bytes.

pub mod csv;

use crate::cluster::Clustering;
use crate::describe::TopicSummary;
use crate::ingest::Corpus;
use polars::prelude::*;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Export failures, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}")]
    Table {
        path: PathBuf,
        #[source]
        source: PolarsError,
    },
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

fn werr(path: &Path) -> impl Fn(PolarsError) -> ExportError + '_ {
    move |source| ExportError::Table {
        path: path.to_path_buf(),
        source,
    }
}

/// The text people read for a document: its title, or a snippet of its text.
pub fn display_title(corpus: &Corpus, i: usize) -> Cow<'_, str> {
    let d = &corpus.documents[i];
    match &d.title {
        Some(t) => Cow::Borrowed(t),
        None => Cow::Owned(snippet(&d.text, 80)),
    }
}

/// The longest snippet of a document's text that any output shows (the report's representative
/// documents).
pub const SNIPPET_CHARS: usize = 300;

/// The first `max` chars of `text`, cut at a word boundary, with "…" when cut.
pub fn snippet(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(p) if p > max / 2 => &cut[..p],
        _ => &cut[..],
    };
    format!("{}…", cut.trim_end_matches([' ', ',', ';', ':', '.']))
}

/// Writes `documents.csv`: one row per clustered document.
pub fn documents_csv(
    path: &Path,
    corpus: &Corpus,
    clustering: &Clustering,
    summary: &TopicSummary,
) -> Result<(), ExportError> {
    let docs = &corpus.documents;
    let a = clustering.assignments();
    let sources: Vec<String> = corpus
        .sources
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    let mut cols = vec![
        csv::text_column("doc_id", docs.iter().map(|d| d.id.as_str())),
        csv::text_column("source", docs.iter().map(|d| sources[d.source].as_str())),
        csv::text_column("title", (0..docs.len()).map(|i| display_title(corpus, i))),
        Column::new(
            "topic_id".into(),
            a.iter()
                .map(|&t| summary.topics[t].id as u32)
                .collect::<Vec<_>>(),
        ),
        csv::text_column(
            "topic_label",
            a.iter().map(|&t| summary.topics[t].label.as_str()),
        ),
        Column::new("distance".into(), clustering.distances().to_vec()),
    ];
    if corpus.has_time {
        cols.push(csv::opt_text_column(
            "time",
            docs.iter().map(|d| d.time.as_ref().map(|t| t.0.as_str())),
        ));
    }
    if corpus.has_label {
        cols.push(csv::opt_text_column(
            "label",
            docs.iter().map(|d| d.label.as_deref()),
        ));
    }
    cols.push(csv::text_column(
        "batch",
        docs.iter().map(|d| d.batch.as_str()),
    ));
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes `topics.csv`: one row per topic.
pub fn topics_csv(path: &Path, corpus: &Corpus, summary: &TopicSummary) -> Result<(), ExportError> {
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
    let cols = vec![
        Column::new(
            "topic_id".into(),
            t.iter().map(|x| x.id as u32).collect::<Vec<_>>(),
        ),
        csv::text_column("label", t.iter().map(|x| x.label.as_str())),
        Column::new(
            "size".into(),
            t.iter().map(|x| x.size as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "share".into(),
            t.iter().map(|x| x.share).collect::<Vec<_>>(),
        ),
        csv::text_column(
            "top_terms",
            t.iter().map(|x| {
                x.terms
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
        ),
        csv::text_column(
            "representative_doc_ids",
            t.iter().map(|x| join_ids(&x.representatives)),
        ),
        csv::text_column(
            "representative_titles",
            t.iter().map(|x| join_titles(&x.representatives)),
        ),
    ];
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes `terms.csv`: the ranked terms of every topic.
pub fn terms_csv(path: &Path, summary: &TopicSummary) -> Result<(), ExportError> {
    let (mut ids, mut ranks, mut terms, mut weights) = (vec![], vec![], vec![], vec![]);
    for t in &summary.topics {
        for (r, w) in t.terms.iter().enumerate() {
            ids.push(t.id as u32);
            ranks.push(r as u32 + 1);
            terms.push(w.text.as_str());
            weights.push(w.weight);
        }
    }
    let cols = vec![
        Column::new("topic_id".into(), ids),
        Column::new("rank".into(), ranks),
        csv::text_column("term", terms),
        Column::new("weight".into(), weights),
    ];
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes `k_selection.csv`: the automatic-k sweep.
pub fn k_selection_csv(path: &Path, sel: &crate::cluster::KSelection) -> Result<(), ExportError> {
    let cols = vec![
        Column::new(
            "k".into(),
            sel.scores.iter().map(|s| s.k as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "silhouette".into(),
            sel.scores.iter().map(|s| s.silhouette).collect::<Vec<_>>(),
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
    ];
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes `topic_trends.csv`: documents per topic and period, and the topic's share of the period.
pub fn topic_trends_csv(
    path: &Path,
    summary: &TopicSummary,
    trends: &crate::describe::trends::Trends,
) -> Result<(), ExportError> {
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
    let cols = vec![
        csv::text_column("period", period),
        Column::new("topic_id".into(), ids),
        csv::text_column("label", labels),
        Column::new("count".into(), counts),
        Column::new("share".into(), shares),
    ];
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes `trends.csv`: topics ranked from most rising to most declining (see
/// [`crate::describe::trends::MEASURE`]).
pub fn trends_csv(
    path: &Path,
    summary: &TopicSummary,
    trends: &crate::describe::trends::Trends,
) -> Result<(), ExportError> {
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
    let cols = vec![
        Column::new("rank".into(), (1..=t.len() as u32).collect::<Vec<_>>()),
        Column::new(
            "topic_id".into(),
            t.iter()
                .map(|x| summary.topics[x.topic_id].id as u32)
                .collect::<Vec<_>>(),
        ),
        csv::text_column(
            "label",
            t.iter().map(|x| summary.topics[x.topic_id].label.as_str()),
        ),
        csv::text_column("direction", t.iter().map(|x| direction(x.slope))),
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
    ];
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes `drift.csv`: how this run's topics map onto the previous run's.
pub fn drift_csv(
    path: &Path,
    rows: &[crate::describe::matching::DriftRow],
) -> Result<(), ExportError> {
    let opt = |v: Option<usize>| v.map(|x| x as u32);
    let cols = vec![
        Column::new(
            "previous_id".into(),
            rows.iter().map(|r| opt(r.previous_id)).collect::<Vec<_>>(),
        ),
        Column::new(
            "new_id".into(),
            rows.iter().map(|r| opt(r.id)).collect::<Vec<_>>(),
        ),
        csv::text_column("status", rows.iter().map(|r| r.status)),
        csv::text_column("label", rows.iter().map(|r| r.label.as_str())),
        csv::text_column(
            "previous_label",
            rows.iter().map(|r| r.previous_label.as_str()),
        ),
        Column::new(
            "similarity".into(),
            rows.iter().map(|r| r.similarity).collect::<Vec<_>>(),
        ),
        Column::new(
            "share_change".into(),
            rows.iter().map(|r| r.share_change).collect::<Vec<_>>(),
        ),
    ];
    csv::write_csv(path, cols).map_err(werr(path))
}

/// Writes any serializable value as pretty JSON, streamed.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ExportError> {
    write_json_as(path, value, true)
}

/// Writes a value as compact JSON, streamed: for the model, whose millions of numbers would
/// each take a line of their own in pretty JSON (a larger file, slower to write and to read
/// back on the next run).
pub fn write_json_compact<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ExportError> {
    write_json_as(path, value, false)
}

fn write_json_as<T: serde::Serialize>(
    path: &Path,
    value: &T,
    pretty: bool,
) -> Result<(), ExportError> {
    use std::io::Write;
    let io = |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let json = |source| ExportError::Json {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    if pretty {
        serde_json::to_writer_pretty(&mut out, value).map_err(json)?;
    } else {
        serde_json::to_writer(&mut out, value).map_err(json)?;
    }
    out.write_all(b"\n").map_err(io)?;
    out.into_inner()
        .map_err(|e| io(e.into_error()))?
        .sync_all()
        .map_err(io)
}
