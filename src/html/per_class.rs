//! The report's "Topics per class" section (`[describe] per-class`): the heatmap of each
//! class's topic mix, then a table with a row per class: its documents and its largest topics
//! with their shares of the class and their terms within it. `topics_per_class.csv` and the
//! workbook's sheet hold every (class, topic) pair; this section is for reading.

use super::escape::{Count, Html, Pct};
use super::svg::{SafeSvg, SvgError};
use super::{ReportChart, ReportPerClass};
use std::fmt::{self, Write as _};

/// The chart this section shows (instead of the charts section).
pub(super) const CHART: &str = "topics_per_class";

/// Topics listed per class in the table, largest share first.
pub const TOPICS_PER_ROW: usize = 3;

pub(super) fn section(
    out: &mut String,
    p: Option<&ReportPerClass>,
    charts: &[ReportChart],
    svgs: &[Result<SafeSvg, SvgError>],
) -> fmt::Result {
    let Some(p) = p else {
        return Ok(());
    };
    out.push_str("<section id=\"per-class\">\n<h2>Topics per class</h2>\n");
    writeln!(
        out,
        "<p class=\"note\">Classes are the values of the column <span dir=\"auto\">{}</span>, largest first; a share is of the class's documents, so each class's shares add up to 100%. Documents without a value are in \"(none)\".</p>",
        Html(&p.column)
    )?;
    if let Some((c, Ok(svg))) = charts.iter().zip(svgs).find(|(c, _)| c.name == CHART) {
        write!(
            out,
            "<figure class=\"chart\">\n{}\n<figcaption dir=\"auto\">{}</figcaption>\n</figure>\n",
            svg.markup(),
            Html(c.caption.trim())
        )?;
    }
    out.push_str("<table class=\"hierarchy\">\n<thead><tr><th scope=\"col\">Class</th><th scope=\"col\">Documents</th><th scope=\"col\">Largest topics (share of the class; terms within it)</th></tr></thead>\n<tbody>\n");
    for class in &p.classes {
        let topics: Vec<String> = class
            .topics
            .iter()
            .take(TOPICS_PER_ROW)
            .map(|t| {
                format!(
                    "<a href=\"#topic-{}\">{}</a> <span dir=\"auto\">{}</span> {} <small dir=\"auto\">{}</small>",
                    t.id,
                    t.id,
                    Html(&t.label),
                    Pct(t.share),
                    Html(&t.terms.join(", "))
                )
            })
            .collect();
        writeln!(
            out,
            "<tr><td dir=\"auto\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            Html(&class.name),
            Count(class.size),
            topics.join("<br>")
        )?;
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    Ok(())
}
