//! The report's tables (`documents.csv`, `topics.csv`, `terms.csv`, trend tables, `drift.csv`,
//! `k_selection.csv`, `metrics.json`) and `model.json`, from an [`Analysis`].

use super::{Analysis, PresentError};
use crate::export;
use crate::model::{self, ModelMeta, SavedModel, SavedTopic};
use std::path::Path;

/// Writes the CSV tables and `metrics.json` into `dir`.
pub fn write_tables(a: &Analysis, dir: &Path) -> Result<(), PresentError> {
    export::documents_csv(
        &dir.join("documents.csv"),
        &a.corpus,
        &a.clustering,
        &a.summary,
    )?;
    export::topics_csv(&dir.join("topics.csv"), &a.corpus, &a.summary)?;
    export::terms_csv(&dir.join("terms.csv"), &a.summary)?;
    export::topic_trends_csv(&dir.join("topic_trends.csv"), &a.summary, &a.trends)?;
    export::trends_csv(&dir.join("trends.csv"), &a.summary, &a.trends)?;
    if let Some(sel) = &a.k_selection {
        export::k_selection_csv(&dir.join("k_selection.csv"), sel)?;
    }
    if let Some(m) = &a.metrics {
        export::write_json(&dir.join("metrics.json"), m)?;
    }
    if let Some(d) = &a.drift {
        export::drift_csv(&dir.join("drift.csv"), d)?;
    }
    Ok(())
}

/// Writes `model.json` (see [`crate::model`]).
pub fn write_model(meta: ModelMeta<'_>, a: &Analysis, dir: &Path) -> Result<(), PresentError> {
    let topics = a
        .summary
        .topics
        .iter()
        .zip(&a.fingerprints)
        .map(|(t, f)| SavedTopic {
            id: t.id,
            label: t.label.clone(),
            size: t.size,
            share: t.share,
            terms: f.clone(),
        })
        .collect();
    let saved = SavedModel::new(meta, &a.tfidf, &a.reducer, &a.clustering, topics, a.next_id);
    export::write_json_compact(&dir.join(model::FILE), &saved)?;
    Ok(())
}
