//! The report's "Removed before analysis" section: what the clean stage took out of the text the
//! topics were built from (repeated boilerplate segments with the documents holding each, and
//! the counts of rights statements, links and e-mail addresses, the documents that repeat
//! another's whole text), so an analyst can check it and keep a segment with `[clean] keep`.
//! Shown only when something was found.

use super::escape::{Count, Html};
use super::ReportCleaning;
use std::fmt::{self, Write as _};

pub(super) fn section(out: &mut String, c: Option<&ReportCleaning>) -> fmt::Result {
    let Some(c) = c.filter(|c| {
        !c.segments.is_empty()
            || !c.counts.is_empty()
            || !c.notes.is_empty()
            || !c.duplicates.is_empty()
    }) else {
        return Ok(());
    };
    out.push_str("<section id=\"cleaning\">\n<h2>Removed before analysis</h2>\n");
    writeln!(
        out,
        "<p class=\"note\">{}</p>",
        Html(
            "Titles, snippets and tables keep the original text; only the words topics and \
             labels are built from lose these. To keep a segment, add it to [clean] keep in the \
             pipeline file."
        )
    )?;
    for note in &c.notes {
        writeln!(out, "<p class=\"note\">{}</p>", Html(note))?;
    }
    if !c.counts.is_empty() {
        out.push_str("<table class=\"metrics\">\n<tbody>\n");
        for (what, n) in &c.counts {
            writeln!(
                out,
                "<tr><th scope=\"row\">{}</th><td class=\"num\">{}</td></tr>",
                Html(what),
                Count(*n as usize)
            )?;
        }
        out.push_str("</tbody>\n</table>\n");
    }
    if !c.segments.is_empty() {
        writeln!(
            out,
            "<h3>Repeated segments ({} found; a segment counts when at least {} documents hold \
             it)</h3>",
            Count(c.segments_found),
            Count(c.min_docs)
        )?;
        out.push_str(
            "<table class=\"boilerplate\">\n<thead><tr><th scope=\"col\">Segment</th>\
             <th scope=\"col\" class=\"num\">Documents</th></tr></thead>\n<tbody>\n",
        );
        for (text, docs) in &c.segments {
            writeln!(
                out,
                "<tr><td dir=\"auto\">{}</td><td class=\"num\">{}</td></tr>",
                Html(text),
                Count(*docs)
            )?;
        }
        out.push_str("</tbody>\n</table>\n");
    }
    duplicates(out, &c.duplicates)?;
    out.push_str("</section>\n");
    Ok(())
}

/// The first duplicates, each beside the document it repeats (all are in `duplicates.csv`).
fn duplicates(out: &mut String, pairs: &[(String, String)]) -> fmt::Result {
    if pairs.is_empty() {
        return Ok(());
    }
    out.push_str(
        "<h3>Duplicates (kept; every one is in duplicates.csv)</h3>\n<table class=\"boilerplate\">\n\
         <thead><tr><th scope=\"col\">Document</th><th scope=\"col\">Repeats the whole text of</th>\
         </tr></thead>\n<tbody>\n",
    );
    for (id, of) in pairs {
        writeln!(out, "<tr><td>{}</td><td>{}</td></tr>", Html(id), Html(of))?;
    }
    out.push_str("</tbody>\n</table>\n");
    Ok(())
}
