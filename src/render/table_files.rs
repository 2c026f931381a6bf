//! The report's tables in every format the pipeline asks for (CSV files, Parquet files,
//! `report.xlsx`), `metrics.json` and `model.json`, from an [`Analysis`].

use super::{Analysis, RenderError};
use crate::model::{self, ModelMeta, SavedModel, SavedTopic};
use crate::tables::{self, frames, OutputFormat};
use crate::workbook;
use polars::prelude::DataFrame;
use std::path::Path;

/// The report's tables, built once for every format.
#[derive(Debug)]
pub struct ReportTables {
    /// None when the analysis holds sums only (see [`super::Scope`]).
    pub documents: Option<DataFrame>,
    pub topics: DataFrame,
    pub terms: DataFrame,
    pub topic_trends: DataFrame,
    pub trends: DataFrame,
    pub k_selection: Option<DataFrame>,
    pub drift: Option<DataFrame>,
    pub tree: Option<DataFrame>,
    /// None when no document repeats another's whole text.
    pub duplicates: Option<DataFrame>,
    /// None without `describe.per-class`.
    pub per_class: Option<DataFrame>,
}

impl ReportTables {
    pub fn new(a: &Analysis) -> ReportTables {
        ReportTables {
            documents: a
                .per_document()
                .then(|| frames::documents(&a.corpus, &a.clustering, &a.summary, &a.map.documents)),
            topics: frames::topics(&a.corpus, &a.summary),
            terms: frames::terms(&a.summary),
            topic_trends: frames::topic_trends(&a.summary, &a.trends),
            trends: frames::trends(&a.summary, &a.trends),
            k_selection: a.k_selection.as_ref().map(frames::k_selection),
            drift: a.drift.as_deref().map(frames::drift),
            tree: a.tree.as_ref().map(frames::topic_tree),
            duplicates: (!a.corpus.duplicates.is_empty()).then(|| frames::duplicates(&a.corpus)),
            per_class: a
                .per_class
                .as_ref()
                .map(|p| frames::topics_per_class(&a.summary, p)),
        }
    }
}

/// Writes the CSV and Parquet files `formats` ask for, and `metrics.json`, into `dir`.
pub fn write_files(
    a: &Analysis,
    t: &ReportTables,
    formats: &[OutputFormat],
    dir: &Path,
) -> Result<(), RenderError> {
    if formats.contains(&OutputFormat::Csv) {
        if let Some(d) = &t.documents {
            tables::csv_file(dir, "documents", d)?;
        }
        tables::csv_file(dir, "topics", &t.topics)?;
        tables::csv_file(dir, "terms", &t.terms)?;
        tables::csv_file(dir, "topic_trends", &t.topic_trends)?;
        tables::csv_file(dir, "trends", &t.trends)?;
        if let Some(k) = &t.k_selection {
            tables::csv_file(dir, "k_selection", k)?;
        }
        if let Some(d) = &t.drift {
            tables::csv_file(dir, "drift", d)?;
        }
        if let Some(tree) = &t.tree {
            tables::csv_file(dir, "topic_tree", tree)?;
        }
        if let Some(d) = &t.duplicates {
            tables::csv_file(dir, "duplicates", d)?;
        }
        if let Some(p) = &t.per_class {
            tables::csv_file(dir, "topics_per_class", p)?;
        }
    }
    if formats.contains(&OutputFormat::Parquet) {
        if let Some(d) = &t.documents {
            tables::parquet_file(dir, "documents", d)?;
        }
        tables::parquet_file(dir, "topics", &t.topics)?;
        tables::parquet_file(dir, "terms", &t.terms)?;
        tables::parquet_file(dir, "topic_trends", &t.topic_trends)?;
        if let Some(p) = &t.per_class {
            tables::parquet_file(dir, "topics_per_class", p)?;
        }
    }
    if let Some(m) = &a.metrics {
        tables::write_json(&dir.join("metrics.json"), m)?;
    }
    Ok(())
}

/// Writes `report.xlsx` into `dir`. `about` fills its About sheet; `chart_topics` are the
/// topics its share-over-time chart draws.
pub fn write_workbook(
    a: &Analysis,
    t: &ReportTables,
    about: &workbook::About,
    chart_topics: &[usize],
    max_documents: usize,
    dir: &Path,
) -> Result<(), RenderError> {
    let trends_wide = frames::trends_wide(&a.summary, &a.trends);
    let documents = match (&t.documents, &a.scope) {
        (Some(d), _) => Some(d),
        (None, super::Scope::Summed { documents, .. }) => documents.as_ref().map(|h| &h.first),
        (None, super::Scope::Documents) => None,
    };
    workbook::write_file(
        dir,
        &workbook::WorkbookTables {
            topics: &t.topics,
            documents,
            documents_total: a.documents_listed().unwrap_or(0),
            terms: &t.terms,
            trends_wide: &trends_wide,
            drift: t.drift.as_ref(),
            per_class: t.per_class.as_ref(),
            about,
            chart_topics,
            max_documents,
        },
    )?;
    Ok(())
}

/// Writes `model.json` (see [`crate::model`]).
pub fn write_model(meta: ModelMeta<'_>, a: &Analysis, dir: &Path) -> Result<(), RenderError> {
    if let super::Scope::Summed { model, .. } = &a.scope {
        tables::write_json_compact(&dir.join(model::FILE), model)?;
        return Ok(());
    }
    tables::write_json_compact(&dir.join(model::FILE), &saved_model(meta, a))?;
    Ok(())
}

/// The model of a fit: what `model.json` holds.
pub fn saved_model(meta: ModelMeta<'_>, a: &Analysis) -> SavedModel {
    // A merged report's model keeps the fitted topics, so `assign` places documents as fitted.
    let (summary, clustering) = match &a.fine {
        Some(f) => (&f.summary, &f.clustering),
        None => (&a.summary, &a.clustering),
    };
    let floors = clustering.outlier_floors();
    let topics = summary
        .topics
        .iter()
        .zip(&a.fingerprints)
        .zip(floors)
        .map(|((t, f), floor)| SavedTopic {
            id: t.id,
            label: t.label.clone(),
            auto_label: Some(t.auto_label.clone()),
            size: t.size,
            share: t.share,
            terms: f.clone(),
            outlier_floor: floor.is_finite().then_some(floor),
            named: t.named,
        })
        .collect();
    let mut model = SavedModel::new(meta, &a.tfidf, &a.reducer, clustering, topics, a.next_id);
    model.clean = Some(a.cleaner.clone());
    model.embedding = a.embedding.clone();
    model.map = a
        .map
        .landmarks
        .as_ref()
        .map(|l| l.save(crate::layout::MODEL_LANDMARKS));
    model
}
