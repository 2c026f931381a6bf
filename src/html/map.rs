//! The report's interactive document map: a `<canvas>` drawn by an inline script from a JSON
//! data block, in the same single file (no request, works offline).
//!
//! * Canvas, not one element per document: 75,000 documents are 75,000 squares painted in a few
//!   milliseconds, where as many SVG nodes would make the page crawl.
//! * The data block (`<script type="application/json">`) is never run; every `<`, `>` and `&` in
//!   it is written as a `\u` escape, so no title can close it.
//! * Coordinates are integers on 0..10,000 (the view's central 99% of documents), enough for any
//!   screen and half the bytes of floats. Titles are cut to [`TITLE_CHARS`] characters.
//! * The page's Content-Security-Policy admits this one script by its SHA-256 ([`script_hash`]);
//!   every other script and every request stay blocked.

use super::escape::{safe_colour, truncate, Count, Html};
use super::{topic_label, ReportData};
use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::fmt::{self, Write as _};

/// The map's script.
pub(super) const SCRIPT: &str = include_str!("map.js");
/// Longest title the map's data keeps, in characters.
const TITLE_CHARS: usize = 120;
/// The coordinates' span in the data block.
const SPAN: f32 = 10_000.0;

/// The `'sha256-…'` source that admits [`SCRIPT`] under the page's CSP.
pub(super) fn script_hash() -> String {
    let digest = Sha256::digest(SCRIPT.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The section: tools, canvas, legend, data and script. Nothing when there is no map.
pub(super) fn section(out: &mut String, d: &ReportData) -> fmt::Result {
    let Some(map) = d.map.as_ref().filter(|m| !m.points.is_empty()) else {
        return Ok(());
    };
    write!(
        out,
        "<section id=\"map\">\n<h2>Document map</h2>\n<p class=\"note\" dir=\"auto\">{} \
         Hover a dot for its title; click a topic (below, or in the table) to pick it out; \
         scroll to zoom, drag to pan.</p>\n\
         <div class=\"map-tools\"><input id=\"map-search\" type=\"search\" \
         placeholder=\"Search titles and topics\" aria-label=\"Search titles and topics\">\
         <button id=\"map-reset\" type=\"button\">Reset view</button>\
         <span id=\"map-status\" role=\"status\"></span></div>\n\
         <div class=\"map-wrap\"><canvas id=\"map-canvas\" role=\"img\" \
         aria-label=\"Document map of {} documents in {} topics\"></canvas>\
         <div id=\"map-tip\" hidden></div></div>\n<ul id=\"map-legend\" class=\"map-legend\">",
        Html(&map.note),
        Count(map.points.len()),
        Count(d.topics.len())
    )?;
    for (i, t) in d.topics.iter().enumerate() {
        write!(
            out,
            "<li><button type=\"button\" data-index=\"{i}\" aria-pressed=\"false\">\
             <span class=\"swatch\" style=\"background:{}\"></span><span dir=\"auto\">{}</span>\
             </button></li>",
            safe_colour(&t.colour),
            Html(&topic_label(t.id, &t.label))
        )?;
    }
    // The self-test's output element comes before the script, which runs as it is parsed.
    out.push_str("</ul>\n<pre id=\"map-selftest\" hidden></pre>\n");
    out.push_str("<script type=\"application/json\" id=\"map-data\">");
    out.push_str(&data_json(d));
    out.push_str("</script>\n<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</section>\n");
    Ok(())
}

/// The data block: topics (ids, labels, colours, label anchors, largest first) and documents
/// (coordinates, topic index, title; the outliers by index), escaped for a `<script>` element.
fn data_json(d: &ReportData) -> String {
    let map = d.map.as_ref().expect("a map");
    let index: std::collections::HashMap<usize, usize> = d
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    let ((x0, x1), (y0, y1)) = bounds(map);
    let q = |v: f32, lo: f32, hi: f32| ((v - lo) / (hi - lo) * SPAN).round() as i32;
    let mut order: Vec<usize> = (0..d.topics.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(d.topics[i].size));
    let anchor = |axis: usize| -> Vec<Option<i32>> {
        d.topics
            .iter()
            .map(|t| {
                let a = map.anchors.iter().find(|a| a.0 == t.id)?;
                let (v, lo, hi) = if axis == 0 {
                    (a.1, x0, x1)
                } else {
                    (a.2, y0, y1)
                };
                v.is_finite().then(|| q(v, lo, hi))
            })
            .collect()
    };
    let pts = &map.points;
    let data = MapData {
        ids: d.topics.iter().map(|t| t.id).collect(),
        labels: d
            .topics
            .iter()
            .map(|t| topic_label(t.id, &t.label))
            .collect(),
        colours: d.topics.iter().map(|t| safe_colour(&t.colour)).collect(),
        order,
        ax: anchor(0),
        ay: anchor(1),
        x: pts.iter().map(|p| q(p.x, x0, x1)).collect(),
        y: pts.iter().map(|p| q(p.y, y0, y1)).collect(),
        t: pts
            .iter()
            .map(|p| index.get(&p.topic_id).copied().unwrap_or(0))
            .collect(),
        outliers: pts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.outlier)
            .map(|(i, _)| i)
            .collect(),
        titles: pts
            .iter()
            .map(|p| truncate(&p.title, TITLE_CHARS))
            .collect(),
    };
    let json = serde_json::to_string(&data).expect("the map's data serializes");
    script_safe(&json)
}

/// The data block's fields, serialized straight to text (75,000 titles are not built into a
/// `serde_json::Value` tree first).
#[derive(serde::Serialize)]
struct MapData<'a> {
    ids: Vec<usize>,
    labels: Vec<std::borrow::Cow<'a, str>>,
    colours: Vec<&'a str>,
    order: Vec<usize>,
    ax: Vec<Option<i32>>,
    ay: Vec<Option<i32>>,
    x: Vec<i32>,
    y: Vec<i32>,
    t: Vec<usize>,
    outliers: Vec<usize>,
    titles: Vec<std::borrow::Cow<'a, str>>,
}

/// JSON text with `<`, `>` and `&` as `\u` escapes (still the same JSON), so it cannot end the
/// `<script>` element it sits in.
fn script_safe(json: &str) -> String {
    let mut s = String::with_capacity(json.len() + json.len() / 64);
    let mut rest = json;
    // The three characters are ASCII, so every cut falls on a character boundary.
    while let Some(at) = rest.find(['<', '>', '&']) {
        s.push_str(&rest[..at]);
        s.push_str(match rest.as_bytes()[at] {
            b'<' => "\\u003c",
            b'>' => "\\u003e",
            _ => "\\u0026",
        });
        rest = &rest[at + 1..];
    }
    s.push_str(rest);
    s
}

/// Each axis's central range over the finite points ([`crate::sample::central_range`], as the
/// static chart frames its view), so a few far points do not squash the rest.
fn bounds(map: &super::ReportMap) -> ((f32, f32), (f32, f32)) {
    let axis = |f: fn(&super::ReportMapPoint) -> f32| match crate::sample::central_range(
        map.points.iter().map(f),
    ) {
        None => (0.0, 1.0),
        Some((lo, hi)) if hi > lo => (lo, hi),
        Some((lo, _)) => (lo - 0.5, lo + 0.5),
    };
    (axis(|p| p.x), axis(|p| p.y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_its_script_element() {
        let s = script_safe(r#"{"t":"</script><b>&"}"#);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["t"], "</script><b>&");
    }

    #[test]
    fn the_hash_is_of_the_script() {
        let h = script_hash();
        assert!(
            h.starts_with("'sha256-") && h.ends_with('\'') && h.len() == 53,
            "{h}"
        );
    }
}
