//! The charts of a report (PNG + SVG), from an [`Analysis`]: fills the chart module's plain
//! input types and keeps each drawn SVG for the HTML report.

use super::{Analysis, RenderError};
use crate::chart::{self, ChartStyle};
use crate::cluster::KSelection;
use crate::describe::hierarchy::TopicTree;
use crate::describe::per_class::PerClass;
use std::path::Path;

/// A chart that was drawn (its SVG text, for the report) or skipped (with a note).
#[derive(Debug, Clone)]
pub struct DrawnChart {
    pub name: &'static str,
    pub caption: String,
    pub svg: Option<String>,
    pub notes: Vec<String>,
}

impl DrawnChart {
    /// What the report needs of a chart: its SVG text (read back) and any notes.
    fn new(name: &'static str, caption: String, oc: chart::ChartOutcome) -> DrawnChart {
        let (svg, notes) = match oc {
            chart::ChartOutcome::Written { svg, warnings, .. } => {
                (std::fs::read_to_string(svg).ok(), warnings)
            }
            chart::ChartOutcome::Skipped { reason } => {
                (None, vec![format!("chart {name} skipped: {reason}")])
            }
        };
        DrawnChart {
            name,
            caption,
            svg,
            notes,
        }
    }
}

/// Draws every chart into `dir`; `top` topics get their own line in the share-over-time chart.
/// The report lists them in this order: the trends (share over time, movers), the topics
/// (sizes, terms), the document map, similarity, the tree and the choice of k.
pub fn draw_charts(
    style: &ChartStyle,
    top: usize,
    a: &Analysis,
    dir: &Path,
) -> Result<Vec<DrawnChart>, RenderError> {
    std::fs::create_dir_all(dir).map_err(|source| RenderError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    // The document map (a dot per document) takes longest: it is drawn on another thread while
    // the other charts are drawn here. A report from sums draws the model's landmarks instead
    // (see `layout::landmarks_only`).
    let (map, first) = rayon::join(
        || (a.per_document() || a.map.topics.is_some()).then(|| document_map(style, a, dir)),
        || -> Result<Vec<DrawnChart>, RenderError> {
            // Trend charts first: they tell the story.
            Ok(vec![
                share_over_time(style, top, a, dir)?,
                trend_movers(style, a, dir)?,
                topic_sizes(style, a, dir)?,
                top_terms(style, a, dir)?,
            ])
        },
    );
    let mut drawn = first?;
    if let Some(map) = map {
        drawn.push(map?);
    }
    drawn.push(topic_similarity(style, a, dir)?);
    if let Some(p) = &a.per_class {
        drawn.push(topics_per_class(style, a, p, dir)?);
    }
    if let Some(tree) = &a.tree {
        drawn.push(topic_tree(style, tree, dir)?);
    }
    if let Some(sel) = &a.k_selection {
        drawn.push(k_selection(style, sel, dir)?);
    }
    Ok(drawn)
}

/// The share of each period's documents in the `top` topics that moved most (one line each),
/// and in all the others together (one line, "other").
fn share_over_time(
    style: &ChartStyle,
    top: usize,
    a: &Analysis,
    dir: &Path,
) -> Result<DrawnChart, RenderError> {
    let topics = &a.summary.topics;
    let periods: Vec<String> = a.trends.periods.iter().map(|p| p.label.clone()).collect();
    let positions: Vec<f64> = a.trends.periods.iter().map(|p| p.x).collect();
    let top = top.min(topics.len());
    let moving = a.trends.most_moving(top);
    let mut series: Vec<chart::TopicSeries> = moving
        .iter()
        .map(|&t| chart::TopicSeries {
            topic_id: topics[t].id,
            label: topics[t].shown_label(),
            values: a.trends.shares[t].clone(),
        })
        .collect();
    if topics.len() > top {
        let other: Vec<f64> = (0..periods.len())
            .map(|j| {
                (0..topics.len())
                    .filter(|t| !moving.contains(t))
                    .map(|t| a.trends.shares[t][j])
                    .sum()
            })
            .collect();
        series.push(chart::TopicSeries {
            topic_id: usize::MAX,
            label: "other".into(),
            values: other,
        });
    }
    Ok(DrawnChart::new(
        "topic_share_over_time",
        format!("Share of each period's documents in the {top} topics that moved most."),
        chart::topic_share_over_time(dir, style, &periods, &positions, &series)?,
    ))
}

/// The fastest rising and declining topics (up to five each way), by their change in share.
fn trend_movers(style: &ChartStyle, a: &Analysis, dir: &Path) -> Result<DrawnChart, RenderError> {
    let topics = &a.summary.topics;
    let movers: Vec<chart::Mover> = a
        .trends
        .extremes(5.min(topics.len() / 2).max(1))
        .into_iter()
        .map(|m| chart::Mover {
            topic_id: topics[m.topic_id].id,
            label: topics[m.topic_id].shown_label(),
            change: m.slope,
        })
        .collect();
    let unit = if a.trends.timed {
        "per year"
    } else {
        "per batch"
    };
    Ok(DrawnChart::new(
        "trend_movers",
        format!("Fastest rising and declining topics: change in share, percentage points {unit}."),
        chart::movers(
            dir,
            style,
            &movers,
            &format!("change in share (percentage points {unit})"),
        )?,
    ))
}

/// Documents per topic.
fn topic_sizes(style: &ChartStyle, a: &Analysis, dir: &Path) -> Result<DrawnChart, RenderError> {
    let bars: Vec<chart::TopicBar> = a
        .summary
        .topics
        .iter()
        .map(|t| chart::TopicBar {
            topic_id: t.id,
            label: t.shown_label(),
            size: t.size,
            share: t.share,
        })
        .collect();
    Ok(DrawnChart::new(
        "topic_sizes",
        "Documents per topic.".into(),
        chart::topic_sizes(dir, style, &bars)?,
    ))
}

/// Each topic's top terms with their class-based TF-IDF weights.
fn top_terms(style: &ChartStyle, a: &Analysis, dir: &Path) -> Result<DrawnChart, RenderError> {
    let terms: Vec<chart::TopicTerms> = a
        .summary
        .topics
        .iter()
        .map(|t| chart::TopicTerms {
            topic_id: t.id,
            label: t.shown_label(),
            terms: t.terms.iter().map(|w| (w.text.clone(), w.weight)).collect(),
        })
        .collect();
    Ok(DrawnChart::new(
        "top_terms",
        "The words that set each topic apart (class-based TF-IDF).".into(),
        chart::top_terms(dir, style, &terms)?,
    ))
}

/// Every document at its place on the map, coloured by topic (outliers muted), each topic's
/// label on its region; for a report from sums, the model's landmarks (none muted).
fn document_map(style: &ChartStyle, a: &Analysis, dir: &Path) -> Result<DrawnChart, RenderError> {
    let topics = &a.summary.topics;
    let (assigned, outliers) = match &a.map.topics {
        Some(t) => (t.as_slice(), vec![false; t.len()]),
        None => (a.clustering.assignments(), a.clustering.outliers()),
    };
    let points: Vec<chart::MapPoint> = a
        .map
        .documents
        .iter()
        .zip(assigned)
        .zip(&outliers)
        .map(|((p, &t), &muted)| chart::MapPoint {
            x: p[0],
            y: p[1],
            topic_id: topics[t].id,
            muted,
        })
        .collect();
    let centres: Vec<chart::MapTopic> = a
        .map
        .centres
        .iter()
        .enumerate()
        .map(|(t, p)| chart::MapTopic {
            topic_id: topics[t].id,
            label: topics[t].shown_label(),
            x: p[0],
            y: p[1],
        })
        .collect();
    Ok(DrawnChart::new(
        "document_map",
        format!(
            "{} on the map, coloured by topic: documents that share words sit together. {}",
            if a.map.topics.is_some() {
                "A sample of the documents"
            } else {
                "Every document"
            },
            a.map.note
        ),
        chart::document_map(dir, style, &points, &centres, &a.map.note)?,
    ))
}

/// The cosine similarity of every pair of topic centroids, as a heatmap.
fn topic_similarity(
    style: &ChartStyle,
    a: &Analysis,
    dir: &Path,
) -> Result<DrawnChart, RenderError> {
    let topics = &a.summary.topics;
    let labels: Vec<String> = topics.iter().map(|t| t.shown_label()).collect();
    let ids: Vec<usize> = topics.iter().map(|t| t.id).collect();
    Ok(DrawnChart::new(
        "topic_similarity",
        "Cosine similarity of topic centroids: related topics light up.".into(),
        chart::similarity_heatmap(dir, style, &labels, &ids, &a.similarity)?,
    ))
}

/// Each class's documents per topic (`describe.per-class`), as a heatmap of shares; topics by
/// id, classes largest first.
fn topics_per_class(
    style: &ChartStyle,
    a: &Analysis,
    p: &PerClass,
    dir: &Path,
) -> Result<DrawnChart, RenderError> {
    let topics = &a.summary.topics;
    let mut order: Vec<usize> = (0..topics.len()).collect();
    order.sort_by_key(|&t| topics[t].id);
    let labels: Vec<String> = order.iter().map(|&t| topics[t].shown_label()).collect();
    let ids: Vec<usize> = order.iter().map(|&t| topics[t].id).collect();
    let classes: Vec<chart::ClassColumn> = p
        .classes
        .iter()
        .map(|c| chart::ClassColumn {
            name: c.name.clone(),
            size: c.size,
            counts: order.iter().map(|&t| c.counts[t]).collect(),
        })
        .collect();
    let shown = classes.len().min(chart::MAX_CLASSES);
    Ok(DrawnChart::new(
        "topics_per_class",
        format!(
            "Topics per class of {:?}: each column is a class's topic mix (the {shown} largest of {} classes; topics_per_class.csv has them all).",
            p.column,
            classes.len()
        ),
        chart::topics_per_class(dir, style, &labels, &ids, &classes)?,
    ))
}

/// The topic hierarchy as a tree.
fn topic_tree(style: &ChartStyle, tree: &TopicTree, dir: &Path) -> Result<DrawnChart, RenderError> {
    let nodes: Vec<chart::TreeNode> = tree
        .nodes
        .iter()
        .map(|n| chart::TreeNode {
            id: n.node,
            label: n.label.clone(),
            children: n.children.clone(),
            distance: n.distance,
        })
        .collect();
    Ok(DrawnChart::new(
        "topic_tree",
        "The topic hierarchy: topics joined where their class-based TF-IDF weights are alike, kin topics first (Ward's linkage)."
            .into(),
        chart::topic_tree(dir, style, &nodes)?,
    ))
}

/// The scores of every k tried, and the one chosen.
fn k_selection(
    style: &ChartStyle,
    sel: &KSelection,
    dir: &Path,
) -> Result<DrawnChart, RenderError> {
    let points: Vec<chart::KScore> = sel
        .scores
        .iter()
        .map(|s| chart::KScore {
            k: s.k,
            silhouette: s.silhouette,
            inertia: s.inertia,
            rise: s.rise.unwrap_or(f64::NAN),
        })
        .collect();
    let level = crate::cluster::auto_k::rule::LEVEL;
    Ok(DrawnChart::new(
        "k_selection",
        format!("How k = {} was chosen: {}", sel.chosen, sel.explained()),
        chart::k_selection(dir, style, &points, (sel.chosen, level), &sel.explained())?,
    ))
}
