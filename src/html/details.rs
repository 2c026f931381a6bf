//! The report's "Topics in detail" section: an `<article>` per topic with its heading and
//! size, its top terms with weight bars, its share by period (a large sparkline), and its
//! representative papers with snippets. Text goes through [`Html`] as on the rest of the page.

use super::escape::{safe_colour, truncate, Count, Html, Num, Pct};
use super::parts::{bar_pct, swatch};
use super::sparkline;
use super::{topic_label, ReportData, ReportTopic};
use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// Longest title in a topic's section, in characters.
const SECTION_TITLE_CHARS: usize = 400;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 1200;

/// A section per topic: its heading and size, its top terms with weight bars, its share by
/// period, and its representative papers with snippets.
pub(super) fn topic_sections(out: &mut String, d: &ReportData) -> fmt::Result {
    if d.topics.is_empty() {
        return Ok(());
    }
    out.push_str("<section id=\"topic-details\">\n<h2>Topics in detail</h2>\n");
    let mut seen = HashSet::new();
    for t in &d.topics {
        // Only a topic id's first section is its anchor.
        let anchor = seen.insert(t.id);
        topic_section(out, t, &d.periods, anchor)?;
    }
    out.push_str("</section>\n");
    Ok(())
}

/// One topic's `<article>` (the anchor `#topic-{id}` when `anchor`).
fn topic_section(
    out: &mut String,
    t: &ReportTopic,
    periods: &[String],
    anchor: bool,
) -> fmt::Result {
    let colour = safe_colour(&t.colour);
    if anchor {
        writeln!(out, "<article class=\"topic\" id=\"topic-{}\">", t.id)?;
    } else {
        out.push_str("<article class=\"topic\">\n");
    }
    out.push_str("<h3>");
    swatch(out, colour)?;
    writeln!(
        out,
        " <span class=\"tid\">Topic {}</span> <span dir=\"auto\">{}</span></h3>",
        t.id,
        Html(&topic_label(t.id, &t.label))
    )?;
    write!(
        out,
        "<p class=\"meta\">{} documents \u{b7} {} of the corpus</p>\n<div class=\"topic-body\">\n",
        Count(t.size),
        Pct(t.share)
    )?;
    topic_terms(out, t, colour)?;
    let mut trend = String::new();
    if sparkline::large(&mut trend, &t.shares_by_period, periods, colour) {
        write!(
            out,
            "<div class=\"trend-col\">\n<h4>Share by period</h4>\n{trend}\n</div>\n"
        )?;
    }
    out.push_str("</div>\n");
    representatives(out, t)?;
    out.push_str("</article>\n");
    Ok(())
}

/// A topic's terms with their weights, each with a bar relative to the heaviest.
fn topic_terms(out: &mut String, t: &ReportTopic, colour: &str) -> fmt::Result {
    if t.terms.is_empty() {
        return Ok(());
    }
    out.push_str(
        "<div class=\"terms-col\">\n<h4>Top terms</h4>\n<table class=\"weights\">\n<tbody>\n",
    );
    let max = t
        .terms
        .iter()
        .map(|(_, w)| *w)
        .filter(|w| w.is_finite())
        .fold(f64::MIN_POSITIVE, f64::max);
    for (term, weight) in &t.terms {
        writeln!(
            out,
            "<tr><td dir=\"auto\">{}</td><td class=\"num\">{}</td><td class=\"wbar\">\
             <span style=\"width:{:.1}%;background:{colour}\"></span></td></tr>",
            Html(term),
            Num(*weight),
            bar_pct(*weight, max)
        )?;
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
    Ok(())
}

/// A topic's representative papers: title (its id when untitled), id and snippet.
fn representatives(out: &mut String, t: &ReportTopic) -> fmt::Result {
    if t.representatives.is_empty() {
        return Ok(());
    }
    out.push_str("<h4>Representative papers</h4>\n<ol class=\"reps\">\n");
    for doc in &t.representatives {
        let title = doc.shown_title();
        write!(
            out,
            "<li><p class=\"rep-title\"><span dir=\"auto\">{}</span>",
            Html(&truncate(title, SECTION_TITLE_CHARS))
        )?;
        if !doc.id.trim().is_empty() {
            write!(
                out,
                " <span class=\"doc-id\">{}</span>",
                Html(doc.id.trim())
            )?;
        }
        out.push_str("</p>");
        if !doc.snippet.trim().is_empty() {
            write!(
                out,
                "<p class=\"snippet\" dir=\"auto\">{}</p>",
                Html(&truncate(&doc.snippet, SNIPPET_CHARS))
            )?;
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n");
    Ok(())
}
