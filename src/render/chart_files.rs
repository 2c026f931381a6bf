//! The charts of a report (PNG + SVG), from an [`Analysis`]: fills the chart module's plain
//! input types and keeps each drawn SVG for the HTML report.

use super::{Analysis, RenderError};
use crate::chart::{self, ChartStyle};
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
    let topics = &a.summary.topics;
    let label = |t: usize| topics[t].label.clone();
    let periods: Vec<String> = a.trends.periods.iter().map(|p| p.label.clone()).collect();
    let positions: Vec<f64> = a.trends.periods.iter().map(|p| p.x).collect();
    let points: Vec<chart::MapPoint> = a
        .map
        .documents
        .iter()
        .zip(a.clustering.assignments())
        .map(|(p, &t)| chart::MapPoint {
            x: p[0],
            y: p[1],
            topic_id: topics[t].id,
        })
        .collect();
    let centres: Vec<chart::MapTopic> = a
        .map
        .centres
        .iter()
        .enumerate()
        .map(|(t, p)| chart::MapTopic {
            topic_id: topics[t].id,
            label: label(t),
            x: p[0],
            y: p[1],
        })
        .collect();
    // The document map (a dot per document) takes longest: it is drawn on another thread while
    // the other charts are drawn here. The report lists them in a fixed order either way.
    let (map, first) = rayon::join(
        // A report from summed counts has no documents to place.
        || {
            a.per_document()
                .then(|| chart::document_map(dir, style, &points, &centres))
        },
        || -> Result<Vec<DrawnChart>, RenderError> {
            let mut drawn = Vec::new();
            let mut add = |name, caption, oc| drawn.push(DrawnChart::new(name, caption, oc));
            // Trend charts first: they tell the story. The lines are the topics that moved most.
            let top = top.min(topics.len());
            let moving = a.trends.most_moving(top);
            let mut series: Vec<chart::TopicSeries> = moving
                .iter()
                .map(|&t| chart::TopicSeries {
                    topic_id: topics[t].id,
                    label: label(t),
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
            add(
                "topic_share_over_time",
                format!("Share of each period's documents in the {top} topics that moved most."),
                chart::topic_share_over_time(dir, style, &periods, &positions, &series)?,
            );
            let movers: Vec<chart::Mover> = a
                .trends
                .extremes(5.min(topics.len() / 2).max(1))
                .into_iter()
                .map(|m| chart::Mover {
                    topic_id: topics[m.topic_id].id,
                    label: label(m.topic_id),
                    change: m.slope,
                })
                .collect();
            let unit = if a.trends.timed {
                "per year"
            } else {
                "per batch"
            };
            add(
                "trend_movers",
                format!("Fastest rising and declining topics: change in share, percentage points {unit}."),
                chart::movers(
                    dir,
                    style,
                    &movers,
                    &format!("change in share (percentage points {unit})"),
                )?,
            );
            add(
                "topic_sizes",
                "Documents per topic.".into(),
                chart::topic_sizes(
                    dir,
                    style,
                    &topics
                        .iter()
                        .map(|t| chart::TopicBar {
                            topic_id: t.id,
                            label: t.label.clone(),
                            size: t.size,
                            share: t.share,
                        })
                        .collect::<Vec<_>>(),
                )?,
            );
            add(
                "top_terms",
                "The words that set each topic apart (class-based TF-IDF).".into(),
                chart::top_terms(
                    dir,
                    style,
                    &topics
                        .iter()
                        .map(|t| chart::TopicTerms {
                            topic_id: t.id,
                            label: t.label.clone(),
                            terms: t.terms.iter().map(|w| (w.text.clone(), w.weight)).collect(),
                        })
                        .collect::<Vec<_>>(),
                )?,
            );
            Ok(drawn)
        },
    );
    let mut drawn = first?;
    let mut add = |name, caption, oc| drawn.push(DrawnChart::new(name, caption, oc));
    if let Some(map) = map {
        add(
            "document_map",
            "Every document on the two main axes of the topic centroids, coloured by topic.".into(),
            map?,
        );
    }
    let labels: Vec<String> = topics.iter().map(|t| t.label.clone()).collect();
    let ids: Vec<usize> = topics.iter().map(|t| t.id).collect();
    add(
        "topic_similarity",
        "Cosine similarity of topic centroids: related topics light up.".into(),
        chart::similarity_heatmap(dir, style, &labels, &ids, &a.similarity)?,
    );
    if let Some(tree) = &a.tree {
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
        add(
            "topic_tree",
            "The topic hierarchy: topics joined where their class-based TF-IDF weights are alike, kin topics first (Ward's linkage)."
                .into(),
            chart::topic_tree(dir, style, &nodes)?,
        );
    }
    if let Some(sel) = &a.k_selection {
        let points: Vec<chart::KScore> = sel
            .scores
            .iter()
            .map(|s| chart::KScore {
                k: s.k,
                silhouette: s.silhouette,
                inertia: s.inertia,
            })
            .collect();
        add(
            "k_selection",
            format!("How k = {} was chosen: {}.", sel.chosen, sel.rule),
            chart::k_selection(dir, style, &points, sel.chosen)?,
        );
    }
    Ok(drawn)
}
