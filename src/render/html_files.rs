//! `report.html` and `summary.md`, from an [`Analysis`] and its drawn charts.

use super::chart_files::DrawnChart;
use super::{Analysis, RenderError};
use crate::chart;
use crate::config::Settings;
use crate::describe::hierarchy::TopicTree;
use crate::describe::per_class::PerClass;
use crate::describe::trends;
use crate::evaluate::Metrics;
use crate::html::{
    self, ReportChart, ReportClass, ReportClassTopic, ReportCleaning, ReportData, ReportDoc,
    ReportMap, ReportMapPoint, ReportPerClass, ReportTopic,
};
use crate::ingest::{Corpus, Duplicate};
use crate::progress::thousands;
use std::path::Path;

/// Writes `report.html` and `summary.md` into `dir`.
pub fn write_report(
    settings: &Settings,
    a: &Analysis,
    charts: &[DrawnChart],
    warnings: &[String],
    started: chrono::DateTime<chrono::Utc>,
    dir: &Path,
) -> Result<(), RenderError> {
    let data = report_data(settings, a, charts, warnings, started);
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| RenderError::Io { path, source })
    };
    write("report.html", html::render_html(&data))?;
    write("summary.md", html::render_markdown(&data))?;
    Ok(())
}

/// What the report shows, from the analysis: the run's facts and settings, its topics, the
/// drawn charts, the movers, the metrics, the warnings and the hierarchy's merges.
fn report_data(
    settings: &Settings,
    a: &Analysis,
    charts: &[DrawnChart],
    warnings: &[String],
    started: chrono::DateTime<chrono::Utc>,
) -> ReportData {
    ReportData {
        title: settings.title.clone(),
        corpus: corpus_line(a),
        documents: a.summary.documents,
        periods: a.trends.periods.iter().map(|p| p.label.clone()).collect(),
        k: a.clustering.k(),
        k_rule: k_rule(a),
        run_date: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        settings: settings_rows(settings, a),
        topics: report_topics(a),
        charts: report_charts(charts),
        movers: movers(a),
        trend_measure: trends::MEASURE.into(),
        metrics: a.metrics.as_ref().map(metric_rows),
        warnings: warnings.to_vec(),
        hierarchy: a.tree.as_ref().map(|t| merges(a, t)).unwrap_or_default(),
        cleaning: Some(cleaning(&a.cleaner.report(a.cleaned), &a.corpus.duplicates)),
        map: report_map(a),
        per_class: a.per_class.as_ref().map(|p| report_per_class(a, p)),
    }
}

/// Topics per class for the report: each class's topics with documents, largest share first
/// (ties by id), with their terms within the class.
fn report_per_class(a: &Analysis, p: &PerClass) -> ReportPerClass {
    let topics = &a.summary.topics;
    let classes = p
        .classes
        .iter()
        .map(|c| {
            let mut order: Vec<usize> = (0..topics.len()).filter(|&t| c.counts[t] > 0).collect();
            order.sort_by_key(|&t| (std::cmp::Reverse(c.counts[t]), topics[t].id));
            ReportClass {
                name: c.name.clone(),
                size: c.size,
                topics: order
                    .into_iter()
                    .map(|t| ReportClassTopic {
                        id: topics[t].id,
                        label: topics[t].shown_label(),
                        share: c.share(t),
                        terms: c.terms[t].iter().map(|w| w.text.clone()).collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    ReportPerClass {
        column: p.column.clone(),
        classes,
    }
}

/// The document map for the page: every document's place, topic, outlier flag and title, and
/// each topic's label anchor. `None` when the documents are not here (a report from sums,
/// whose static map shows the model's landmarks, which have no titles).
fn report_map(a: &Analysis) -> Option<ReportMap> {
    if a.map.documents.is_empty() || a.map.topics.is_some() {
        return None;
    }
    let topics = &a.summary.topics;
    let outliers = a.clustering.outliers();
    let points = a
        .map
        .documents
        .iter()
        .zip(a.clustering.assignments())
        .enumerate()
        .map(|(i, (p, &t))| ReportMapPoint {
            x: p[0],
            y: p[1],
            topic_id: topics[t].id,
            outlier: outliers[i],
            title: crate::ingest::display_title(&a.corpus, i).to_string(),
        })
        .collect();
    let anchors = a
        .map
        .centres
        .iter()
        .zip(topics)
        .map(|(c, t)| (t.id, c[0], c[1]))
        .collect();
    Some(ReportMap {
        note: a.map.note.clone(),
        points,
        anchors,
    })
}

/// What the clean stage removed, for the report: the repeated segments listed in `run.json`,
/// every nonzero count, and the first duplicates.
fn cleaning(r: &crate::clean::CleanReport, duplicates: &[Duplicate]) -> ReportCleaning {
    let mut counts = Vec::new();
    if let Some(t) = &r.removed {
        let rows = [
            ("Repeated segments removed", t.removed.repeated),
            (
                "Copyright and licence statements",
                t.removed.rights_statements,
            ),
            ("Mail signatures", t.removed.signatures),
            ("Quoted message headers", t.removed.quote_headers),
            ("URLs", t.links.urls),
            ("E-mail addresses", t.links.emails),
            ("DOIs", t.links.dois),
            ("arXiv identifiers", t.links.arxiv_ids),
            ("HTML tags and spreadsheet formulas", t.markup),
            ("Documents changed", t.documents_changed),
            (
                "Documents left out (nothing else in them)",
                t.documents_left_out,
            ),
            (
                "Duplicate documents (kept; listed in duplicates.csv)",
                t.duplicates,
            ),
        ];
        counts = rows
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(what, n)| (what.to_string(), n))
            .collect();
    }
    ReportCleaning {
        segments: r
            .repeated
            .iter()
            .map(|s| (s.text.clone(), s.documents))
            .collect(),
        segments_found: r.repeated_found,
        min_docs: r.min_docs,
        counts,
        notes: r
            .repetition_backed_off
            .iter()
            .map(|b| format!("Nothing was removed as repeated: {b}."))
            .collect(),
        duplicates: duplicates
            .iter()
            .take(crate::clean::boilerplate::LISTED)
            .map(|d| (d.id.clone(), d.duplicate_of.clone()))
            .collect(),
    }
}

/// What was read: "2 files, 1,234 documents (3 left out)".
fn corpus_line(a: &Analysis) -> String {
    let corpus = &a.corpus;
    format!(
        "{} file{}, {} documents{}",
        corpus.sources.len(),
        if corpus.sources.len() == 1 { "" } else { "s" },
        thousands(a.summary.documents),
        if corpus.skipped.is_empty() {
            String::new()
        } else {
            format!(" ({} left out)", corpus.skipped.len())
        }
    )
}

/// How k was chosen: the range tried and the rule, or fixed.
fn k_rule(a: &Analysis) -> String {
    match &a.k_selection {
        Some(sel) => format!(
            "automatic, {}..{}: {}",
            sel.scores[0].k,
            sel.scores[sel.scores.len() - 1].k,
            sel.rule
        ),
        None => "fixed in the pipeline file".into(),
    }
}

/// The settings the report lists, key and value.
fn settings_rows(settings: &Settings, a: &Analysis) -> Vec<(String, String)> {
    let mut rows = vec![
        ("pipeline".into(), settings.pipeline.display().to_string()),
        ("seed".into(), settings.cluster.seed().to_string()),
        (
            "reduction".into(),
            format!("{}, {} dims", a.reducer.method(), a.reducer.dims()),
        ),
        ("features".into(), thousands(a.tfidf.features().len())),
    ];
    if let Some(on) = a.clustered_on() {
        rows.push(("clustered on".into(), on));
    }
    rows.extend([
        (
            "min-df / max-df applied".into(),
            format!("{} / {}", a.tfidf.df_bounds().0, a.tfidf.df_bounds().1),
        ),
        (
            "k-means restarts".into(),
            settings.cluster.runs_for(a.summary.documents).to_string(),
        ),
        ("period".into(), settings.trends.period.to_string()),
    ]);
    rows.extend(language_rows(&settings.tokenize));
    rows
}

/// The tokenizer's language, when it is not plain English: what `auto` detected, and the user
/// dictionary with its sha256.
fn language_rows(t: &crate::tokenize::TokenizerValidParams) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    match t.detected() {
        Some(d) => rows.push(("language".into(), format!("auto: {d}"))),
        None if t.language() != "english" => rows.push(("language".into(), t.language().into())),
        None => {}
    }
    if let Some(dict) = t.user_dictionary() {
        let words = thousands(dict.words().len());
        let value = format!("{} ({words} words, sha256 {})", dict.file(), dict.sha256());
        rows.push(("user dictionary".into(), value));
    }
    rows
}

/// Every topic with its terms, representatives, colour and (with two periods or more) its
/// share by period.
fn report_topics(a: &Analysis) -> Vec<ReportTopic> {
    let timed_periods = a.trends.periods.len() >= 2;
    a.summary
        .topics
        .iter()
        .enumerate()
        .map(|(index, t)| ReportTopic {
            id: t.id,
            label: t.shown_label(),
            named: t.named,
            size: t.size,
            share: t.share,
            terms: t.terms.iter().map(|w| (w.text.clone(), w.weight)).collect(),
            representatives: t
                .representatives
                .iter()
                .map(|&i| report_doc(&a.corpus, i))
                .collect(),
            shares_by_period: if timed_periods {
                a.trends.shares[index].clone()
            } else {
                Vec::new()
            },
            colour: chart::palette_hex(t.id),
        })
        .collect()
}

/// Document `i` of the corpus as the report shows it: id, title and snippet.
fn report_doc(corpus: &Corpus, i: usize) -> ReportDoc {
    ReportDoc {
        id: corpus.documents[i].id.clone(),
        title: crate::ingest::display_title(corpus, i).into_owned(),
        snippet: crate::ingest::snippet(&corpus.documents[i].text, crate::ingest::SNIPPET_CHARS),
    }
}

/// The charts that were drawn (a skipped chart has no SVG to show).
fn report_charts(charts: &[DrawnChart]) -> Vec<ReportChart> {
    charts
        .iter()
        .filter_map(|c| {
            c.svg.as_ref().map(|svg| ReportChart {
                name: c.name.into(),
                caption: c.caption.clone(),
                svg: svg.clone(),
            })
        })
        .collect()
}

/// The rising and declining topics, with their change as a fraction of share.
fn movers(a: &Analysis) -> Vec<html::Mover> {
    let topics = &a.summary.topics;
    a.trends
        .by_direction()
        .into_iter()
        .map(|m| html::Mover {
            topic_id: topics[m.topic_id].id,
            label: topics[m.topic_id].shown_label(),
            change: m.slope / 100.0,
        })
        .collect()
}

/// The agreement with the label column, by measure.
fn metric_rows(m: &Metrics) -> Vec<(String, f64)> {
    vec![
        ("V-measure".into(), m.v_measure),
        ("ARI".into(), m.ari),
        ("NMI".into(), m.nmi),
        ("homogeneity".into(), m.homogeneity),
        ("completeness".into(), m.completeness),
    ]
}

/// The merges of the topic hierarchy (its inner nodes), each with the topics it joins.
fn merges(a: &Analysis, tree: &TopicTree) -> Vec<html::ReportMerge> {
    let topics = &a.summary.topics;
    let label = |id: usize| {
        topics
            .iter()
            .find(|t| t.id == id)
            .map_or_else(String::new, |t| t.shown_label())
    };
    tree.nodes
        .iter()
        .filter(|n| !n.children.is_empty())
        .map(|n| html::ReportMerge {
            label: n.label.clone(),
            topics: n.topics.iter().map(|&id| (id, label(id))).collect(),
            distance: n.distance,
            size: n.size,
        })
        .collect()
}
