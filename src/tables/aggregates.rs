//! Aggregates as Parquet tables in one folder: what `topicmap assign --aggregates` and a
//! streaming run write, what the Spark driver (`distributed/spark/topicmap_spark.py`) writes
//! with the same schema from its `groupBy`s, and what `topicmap report` reads.
//!
//! | file | columns |
//! |---|---|
//! | `counts.parquet` | period, topic_id, documents, outliers |
//! | `terms.parquet` | topic_id, feature, units, documents |
//! | `representatives.parquet` | topic_id, doc_id, title, snippet, distance |
//! | `labels.parquet` | label, topic_id, documents |
//! | `sources.parquet` | source, documents |
//! | `skipped.parquet` | file, row, reason |
//! | `aggregates.json` | format, version, model_sha256, representatives |
//!
//! Integers are signed 64-bit (what Spark's sums give), `distance` is a 32-bit float (what
//! `assign` computes). Rows may come in any order and the same key may repeat (partial sums):
//! reading adds them up, so the tables of several machines can simply be concatenated.

use super::ExportError;
use crate::describe::aggregate::{Aggregates, Representative};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// The folder's description file.
pub const META: &str = "aggregates.json";
pub const FORMAT: &str = "topicmap-aggregates";
pub const VERSION: u32 = 1;

/// `aggregates.json`: which model the sums were made with.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    pub format: String,
    pub version: u32,
    /// sha256 of the `model.json` the documents were assigned with.
    pub model_sha256: String,
    /// Representatives kept per topic.
    pub representatives: usize,
}

/// Aggregates that cannot be read, naming the file and, where it applies, the column and row.
#[derive(Debug, thiserror::Error)]
pub enum AggregatesError {
    #[error("cannot read aggregates file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: PolarsError,
    },
    #[error("cannot read {path}")]
    Meta {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a topicmap aggregates description")]
    MetaJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is not a topicmap aggregates description: {problem}")]
    BadMeta { path: PathBuf, problem: String },
    #[error("aggregates file {path}: column {column:?}: {problem}")]
    Column {
        path: PathBuf,
        column: String,
        problem: String,
    },
    #[error("aggregates file {path} row {row}: {problem}")]
    Row {
        path: PathBuf,
        row: usize,
        problem: String,
    },
    #[error("the aggregates in {dir} were made with another model (sha256 {found}, this model's is {expected}): assign with this model, or report with that one")]
    OtherModel {
        dir: PathBuf,
        found: String,
        expected: String,
    },
}

/// Writes `agg` into `dir` (which exists) with `meta`: one Parquet table per kind of sum (see
/// the module's table), then the description file.
pub fn write(dir: &Path, agg: &Aggregates, meta: &Meta) -> Result<(), ExportError> {
    for (name, df) in [
        ("counts", counts_frame(agg)),
        ("terms", terms_frame(agg)),
        ("representatives", representatives_frame(agg)),
        ("labels", labels_frame(agg)),
        ("sources", sources_frame(agg)),
        ("skipped", skipped_frame(agg)),
    ] {
        super::parquet_file(dir, name, &df)?;
    }
    super::write_json(&dir.join(META), meta)
}

/// The model's id of topic `t` (by index), as the tables store it.
fn topic_id(agg: &Aggregates, t: usize) -> i64 {
    agg.ids[t] as i64
}

/// `counts`: documents and outliers per period and topic (topics with documents only).
fn counts_frame(agg: &Aggregates) -> DataFrame {
    let (mut period, mut topic, mut docs, mut outliers) = (vec![], vec![], vec![], vec![]);
    for (p, c) in &agg.counts {
        for (t, x) in c.iter().enumerate().filter(|(_, x)| x[0] > 0) {
            period.push(p.as_str());
            topic.push(topic_id(agg, t));
            docs.push(x[0] as i64);
            outliers.push(x[1] as i64);
        }
    }
    frame(vec![
        Column::new("period".into(), period),
        Column::new("topic_id".into(), topic),
        Column::new("documents".into(), docs),
        Column::new("outliers".into(), outliers),
    ])
}

/// `terms`: weight units and documents per topic and feature (features found in the topic only).
fn terms_frame(agg: &Aggregates) -> DataFrame {
    let (mut topic, mut feature, mut units, mut docs) = (vec![], vec![], vec![], vec![]);
    for t in 0..agg.k() {
        for f in 0..agg.n_features {
            if agg.docs[t][f] > 0 {
                topic.push(topic_id(agg, t));
                feature.push(f as i64);
                units.push(agg.units[t][f] as i64);
                docs.push(agg.docs[t][f] as i64);
            }
        }
    }
    frame(vec![
        Column::new("topic_id".into(), topic),
        Column::new("feature".into(), feature),
        Column::new("units".into(), units),
        Column::new("documents".into(), docs),
    ])
}

/// `representatives`: the documents kept per topic, topic by topic.
fn representatives_frame(agg: &Aggregates) -> DataFrame {
    let reps: Vec<(usize, &Representative)> = agg
        .representatives
        .iter()
        .enumerate()
        .flat_map(|(t, r)| r.iter().map(move |r| (t, r)))
        .collect();
    frame(vec![
        Column::new(
            "topic_id".into(),
            reps.iter()
                .map(|(t, _)| topic_id(agg, *t))
                .collect::<Vec<_>>(),
        ),
        super::frames::text("doc_id", reps.iter().map(|(_, r)| r.doc_id.as_str())),
        super::frames::text("title", reps.iter().map(|(_, r)| r.title.as_str())),
        super::frames::text("snippet", reps.iter().map(|(_, r)| r.snippet.as_str())),
        Column::new(
            "distance".into(),
            reps.iter().map(|(_, r)| r.distance).collect::<Vec<f32>>(),
        ),
    ])
}

/// `labels`: documents per ground-truth label and topic (non-zero cells only).
fn labels_frame(agg: &Aggregates) -> DataFrame {
    let (mut label, mut topic, mut docs) = (vec![], vec![], vec![]);
    for (l, c) in &agg.labels {
        for (t, &n) in c.iter().enumerate().filter(|(_, n)| **n > 0) {
            label.push(l.as_str());
            topic.push(topic_id(agg, t));
            docs.push(n as i64);
        }
    }
    frame(vec![
        Column::new("label".into(), label),
        Column::new("topic_id".into(), topic),
        Column::new("documents".into(), docs),
    ])
}

/// `sources`: documents per input file.
fn sources_frame(agg: &Aggregates) -> DataFrame {
    frame(vec![
        super::frames::text("source", agg.sources.keys()),
        Column::new(
            "documents".into(),
            agg.sources.values().map(|&n| n as i64).collect::<Vec<_>>(),
        ),
    ])
}

/// `skipped`: the rows left out, with their file and reason.
fn skipped_frame(agg: &Aggregates) -> DataFrame {
    frame(vec![
        super::frames::text("file", agg.skipped.iter().map(|s| s.0.as_str())),
        Column::new(
            "row".into(),
            agg.skipped.iter().map(|s| s.1 as i64).collect::<Vec<_>>(),
        ),
        super::frames::text("reason", agg.skipped.iter().map(|s| s.2.as_str())),
    ])
}

fn frame(columns: Vec<Column>) -> DataFrame {
    let height = columns.first().map_or(0, |c| c.len());
    DataFrame::new(height, columns).expect("columns of one length")
}

/// A model's topic index by topic id.
type TopicIndex = std::collections::HashMap<usize, usize>;

/// Reads the aggregates in `dir` for a model with topics `ids` (by index) and `n_features`
/// features whose `model.json` has sha256 `model_sha256`: the description is checked first
/// (format, version, model), then each table's rows are added to the sums.
pub fn read(
    dir: &Path,
    ids: &[usize],
    n_features: usize,
    model_sha256: &str,
) -> Result<Aggregates, AggregatesError> {
    let meta = read_meta(dir, model_sha256)?;
    let mut agg = Aggregates::new(ids.to_vec(), n_features, meta.representatives);
    let index: TopicIndex = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    add_counts(&Table::open(dir, "counts")?, &index, &mut agg)?;
    add_terms(&Table::open(dir, "terms")?, &index, &mut agg)?;
    add_representatives(&Table::open(dir, "representatives")?, &index, &mut agg)?;
    add_labels(&Table::open(dir, "labels")?, &index, &mut agg)?;
    add_sources(&Table::open(dir, "sources")?, &mut agg)?;
    add_skipped(&Table::open(dir, "skipped")?, &mut agg)?;
    agg.skipped.sort();
    Ok(agg)
}

/// Reads `aggregates.json` and checks that it describes aggregates of this format and version,
/// made with the model whose `model.json` has sha256 `model_sha256`.
fn read_meta(dir: &Path, model_sha256: &str) -> Result<Meta, AggregatesError> {
    let meta_path = dir.join(META);
    let text = std::fs::read_to_string(&meta_path).map_err(|source| AggregatesError::Meta {
        path: meta_path.clone(),
        source,
    })?;
    let meta: Meta = serde_json::from_str(&text).map_err(|source| AggregatesError::MetaJson {
        path: meta_path.clone(),
        source,
    })?;
    if meta.format != FORMAT || meta.version != VERSION {
        return Err(AggregatesError::BadMeta {
            path: meta_path,
            problem: format!(
                "format {:?} version {}, expected {FORMAT:?} version {VERSION}",
                meta.format, meta.version
            ),
        });
    }
    if meta.model_sha256 != model_sha256 {
        return Err(AggregatesError::OtherModel {
            dir: dir.to_path_buf(),
            found: meta.model_sha256,
            expected: model_sha256.to_string(),
        });
    }
    Ok(meta)
}

/// Adds the `counts` table's documents and outliers per period and topic.
fn add_counts(t: &Table, index: &TopicIndex, agg: &mut Aggregates) -> Result<(), AggregatesError> {
    let (period, topic) = (t.text("period")?, t.int("topic_id")?);
    let (docs, outliers) = (t.int("documents")?, t.int("outliers")?);
    let k = agg.k();
    for r in 0..t.height {
        let c = t.topic(index, topic[r], r)?;
        let row = agg
            .counts
            .entry(period[r].clone())
            .or_insert_with(|| vec![[0, 0]; k]);
        row[c][0] += t.count(docs[r], r)?;
        row[c][1] += t.count(outliers[r], r)?;
    }
    Ok(())
}

/// Adds the `terms` table's units and documents per topic and feature (a feature the model does
/// not have is an error).
fn add_terms(t: &Table, index: &TopicIndex, agg: &mut Aggregates) -> Result<(), AggregatesError> {
    let (topic, feature) = (t.int("topic_id")?, t.int("feature")?);
    let (units, docs) = (t.int("units")?, t.int("documents")?);
    let n_features = agg.n_features;
    for r in 0..t.height {
        let c = t.topic(index, topic[r], r)?;
        let f = t.count(feature[r], r)? as usize;
        if f >= n_features {
            return Err(t.row_error(r, format!("feature {f}: the model has {n_features}")));
        }
        agg.units[c][f] += t.count(units[r], r)?;
        agg.docs[c][f] += t.count(docs[r], r)?;
    }
    Ok(())
}

/// Offers each row of the `representatives` table to its topic (the closest are kept).
fn add_representatives(
    t: &Table,
    index: &TopicIndex,
    agg: &mut Aggregates,
) -> Result<(), AggregatesError> {
    let topic = t.int("topic_id")?;
    let (doc_id, title, snippet) = (t.text("doc_id")?, t.text("title")?, t.text("snippet")?);
    let distance = t.float("distance")?;
    for r in 0..t.height {
        let c = t.topic(index, topic[r], r)?;
        agg.offer(
            c,
            Representative {
                doc_id: doc_id[r].clone(),
                title: title[r].clone(),
                snippet: snippet[r].clone(),
                distance: distance[r],
            },
        );
    }
    Ok(())
}

/// Adds the `labels` table's documents per label and topic.
fn add_labels(t: &Table, index: &TopicIndex, agg: &mut Aggregates) -> Result<(), AggregatesError> {
    let (label, topic, docs) = (t.text("label")?, t.int("topic_id")?, t.int("documents")?);
    let k = agg.k();
    for r in 0..t.height {
        let c = t.topic(index, topic[r], r)?;
        agg.labels
            .entry(label[r].clone())
            .or_insert_with(|| vec![0; k])[c] += t.count(docs[r], r)?;
    }
    Ok(())
}

/// Adds the `sources` table's documents per input file.
fn add_sources(t: &Table, agg: &mut Aggregates) -> Result<(), AggregatesError> {
    let (source, docs) = (t.text("source")?, t.int("documents")?);
    for r in 0..t.height {
        *agg.sources.entry(source[r].clone()).or_insert(0) += t.count(docs[r], r)?;
    }
    Ok(())
}

/// Appends the `skipped` table's rows (sorted by the caller once all are in).
fn add_skipped(t: &Table, agg: &mut Aggregates) -> Result<(), AggregatesError> {
    let (file, row, reason) = (t.text("file")?, t.int("row")?, t.text("reason")?);
    for r in 0..t.height {
        let n = t.count(row[r], r)?;
        agg.skipped.push((file[r].clone(), n, reason[r].clone()));
    }
    Ok(())
}

/// One aggregates table, read.
struct Table {
    path: PathBuf,
    df: DataFrame,
    height: usize,
}

impl Table {
    fn open(dir: &Path, name: &str) -> Result<Table, AggregatesError> {
        let path = dir.join(format!("{name}.parquet"));
        let read = || -> Result<DataFrame, PolarsError> {
            let file = std::fs::File::open(&path)?;
            ParquetReader::new(file).finish()
        };
        let df = read().map_err(|source| AggregatesError::Read {
            path: path.clone(),
            source,
        })?;
        Ok(Table {
            height: df.height(),
            path,
            df,
        })
    }

    fn column(&self, name: &str, to: &DataType) -> Result<Series, AggregatesError> {
        let err = |problem: String| AggregatesError::Column {
            path: self.path.clone(),
            column: name.to_string(),
            problem,
        };
        let col = self.df.column(name).map_err(|_| {
            err(format!(
                "missing (columns: {})",
                self.df
                    .get_column_names()
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let s = col
            .cast(to)
            .map_err(|e| err(format!("not {to}: {e}")))?
            .as_materialized_series()
            .clone();
        if let Some(r) = (0..s.len()).find(|&r| s.get(r).is_ok_and(|v| v.is_null())) {
            return Err(self.row_error(r, format!("{name} is empty")));
        }
        Ok(s)
    }

    fn int(&self, name: &str) -> Result<Vec<i64>, AggregatesError> {
        let s = self.column(name, &DataType::Int64)?;
        Ok(s.i64().expect("cast").into_no_null_iter().collect())
    }

    fn float(&self, name: &str) -> Result<Vec<f32>, AggregatesError> {
        let s = self.column(name, &DataType::Float32)?;
        Ok(s.f32().expect("cast").into_no_null_iter().collect())
    }

    fn text(&self, name: &str) -> Result<Vec<String>, AggregatesError> {
        let s = self.column(name, &DataType::String)?;
        let ca = s.str().expect("cast");
        Ok((0..ca.len())
            .map(|i| ca.get(i).unwrap_or_default().to_string())
            .collect())
    }

    fn row_error(&self, r: usize, problem: String) -> AggregatesError {
        AggregatesError::Row {
            path: self.path.clone(),
            row: r + 1,
            problem,
        }
    }

    fn count(&self, v: i64, r: usize) -> Result<u64, AggregatesError> {
        u64::try_from(v).map_err(|_| self.row_error(r, format!("negative count {v}")))
    }

    fn topic(&self, index: &TopicIndex, id: i64, r: usize) -> Result<usize, AggregatesError> {
        usize::try_from(id)
            .ok()
            .and_then(|id| index.get(&id).copied())
            .ok_or_else(|| self.row_error(r, format!("topic {id} is not a topic of the model")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_description_keeps_the_json_error_as_its_source() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(META), "{\"format\": ").unwrap();
        let e = read(dir.path(), &[0, 1], 3, "abc").unwrap_err();
        assert!(matches!(e, AggregatesError::MetaJson { .. }), "{e}");
        assert!(
            e.to_string()
                .ends_with("is not a topicmap aggregates description"),
            "{e}"
        );
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.is::<serde_json::Error>());
        assert!(source.to_string().contains("line 1"), "{source}");
    }
}
