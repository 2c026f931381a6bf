//! Writes `summary.md`: what a reader of an e-mail or a chat needs in ten
//! seconds.
//!
//! Layout: one header line (title, corpus, number of topics, run date), a
//! table of the largest topics (id, label, size, share), then tables of the
//! rising and declining topics. Plain Markdown tables because chat tools and
//! e-mail clients that render Markdown show them aligned, and the raw text
//! is still readable where they do not. Text is escaped with
//! [`Md`](super::escape::Md): only what would break a table row or be read
//! as HTML.

use super::escape::{Count, Md, Pct, Points};
use super::{topic_label, Mover, ReportData, SUMMARY_MOVERS, SUMMARY_TOPICS};
use std::fmt::{self, Write as _};

pub(crate) fn render(data: &ReportData) -> String {
    let mut out = String::with_capacity(4096);
    // Writing into a String cannot fail.
    let _ = summary(&mut out, data);
    out
}

/// The whole summary: the header line, the largest topics, then the movers.
fn summary(out: &mut String, d: &ReportData) -> fmt::Result {
    header(out, d)?;
    topics(out, d)?;
    movers(out, d)
}

/// One line: title, corpus, number of topics and run date, then a blank line.
fn header(out: &mut String, d: &ReportData) -> fmt::Result {
    let title = d.title.trim();
    write!(
        out,
        "**{}**",
        Md(if title.is_empty() {
            "Topic report"
        } else {
            title
        })
    )?;
    if !d.corpus.trim().is_empty() {
        write!(out, " \u{b7} {}", Md(d.corpus.trim()))?;
    }
    write!(out, " \u{b7} {} topics", d.k)?;
    if !d.run_date.trim().is_empty() {
        write!(out, " \u{b7} run {}", Md(d.run_date.trim()))?;
    }
    out.push_str("\n\n");
    Ok(())
}

/// The table of the largest [`SUMMARY_TOPICS`] topics, largest first.
fn topics(out: &mut String, d: &ReportData) -> fmt::Result {
    if d.topics.is_empty() {
        out.push_str("No topics were found.\n");
        return Ok(());
    }
    // Largest first; the stable sort keeps the pipeline's order on ties.
    let mut order: Vec<usize> = (0..d.topics.len()).collect();
    order.sort_by(|&a, &b| d.topics[b].size.cmp(&d.topics[a].size));
    let shown = order.len().min(SUMMARY_TOPICS);
    if shown < order.len() {
        writeln!(out, "Top {shown} of {} topics:\n", order.len())?;
    } else {
        out.push_str("Topics:\n\n");
    }
    out.push_str("| # | Topic | Size | Share |\n|--:|:--|--:|--:|\n");
    for &i in order.iter().take(shown) {
        let t = &d.topics[i];
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            t.id,
            Md(&topic_label(t.id, &t.label)),
            Count(t.size),
            Pct(t.share)
        )?;
    }
    if d.topics.iter().any(|t| t.named) {
        out.push_str("\n★ marks the topics the pipeline file names ([[topic]]).\n");
    }
    Ok(())
}

/// The tables of the rising and the declining topics (up to [`SUMMARY_MOVERS`] each), with
/// what their change measures; or a line saying why there are none.
fn movers(out: &mut String, d: &ReportData) -> fmt::Result {
    let rising: Vec<&Mover> = d.movers.iter().filter(|m| m.change > 0.0).collect();
    let declining: Vec<&Mover> = d.movers.iter().filter(|m| m.change < 0.0).collect();
    if rising.is_empty() && declining.is_empty() {
        if d.periods.len() < 2 {
            out.push_str("\nNo trends: the corpus has fewer than 2 periods.\n");
        } else {
            out.push_str("\nNo topic rose or declined.\n");
        }
        return Ok(());
    }
    if !d.trend_measure.trim().is_empty() {
        write!(
            out,
            "\nChange = {}, in percentage points of share.\n",
            Md(d.trend_measure.trim())
        )?;
    }
    for (heading, list) in [("Rising", &rising), ("Declining", &declining)] {
        if list.is_empty() {
            continue;
        }
        write!(
            out,
            "\n{heading}:\n\n| # | Topic | Change |\n|--:|:--|--:|\n"
        )?;
        for m in list.iter().take(SUMMARY_MOVERS) {
            writeln!(
                out,
                "| {} | {} | {} |",
                m.topic_id,
                Md(&topic_label(m.topic_id, &m.label)),
                Points(m.change)
            )?;
        }
    }
    Ok(())
}
