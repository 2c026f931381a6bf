//! Tests of the report renderers and the SVG sanitiser. Expected strings and
//! coordinates are worked out by hand in the comments next to them.

use super::escape::{safe_colour, truncate, Count, Html, Md, Num, Pct, Points};
use super::*;

const HOSTILE_SCRIPT: &str = "<script>alert(1)</script>";
const HOSTILE_IMG: &str = "<img src=x onerror=alert(2)>";

/// A small SVG like plotters writes (declaration, size, viewBox, xmlns).
fn plotters_like_svg(label: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg width=\"400\" height=\"200\" \
         viewBox=\"0 0 400 200\" xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect x=\"0\" y=\"0\" width=\"400\" height=\"200\" opacity=\"1\" fill=\"#FFFFFF\" stroke=\"none\"/>\n\
         <text x=\"20\" y=\"30\" dy=\"0.76em\" text-anchor=\"start\" font-family=\"sans-serif\" \
         font-size=\"20\" opacity=\"1\" fill=\"#000000\">{label}</text>\n\
         <polyline fill=\"none\" opacity=\"1\" stroke=\"#E69F00\" stroke-width=\"3\" \
         points=\"20,180 200,100 380,40 \"/>\n</svg>\n"
    )
}

fn topic(id: usize, label: &str, size: usize, share: f64, shares: &[f64]) -> ReportTopic {
    ReportTopic {
        id,
        label: label.to_string(),
        size,
        share,
        terms: vec![("graph".into(), 0.5), ("神经网络".into(), 0.25)],
        representatives: vec![ReportDoc {
            id: format!("doc-{id}"),
            title: format!("Paper about {label}"),
            snippet: "We study things.".into(),
        }],
        shares_by_period: shares.to_vec(),
        colour: "#E69F00".into(),
        named: false,
    }
}

/// Three topics over three periods, two charts, movers, metrics, a warning.
fn sample() -> ReportData {
    ReportData {
        title: "NeurIPS 2026 论文列表".into(),
        corpus: "2 files, 26 documents".into(),
        documents: 26,
        periods: vec!["2024".into(), "2025".into(), "2026".into()],
        k: 3,
        k_rule: "fixed in the pipeline file".into(),
        run_date: "2026-03-01T12:00:00Z".into(),
        settings: vec![("min_df".into(), "2".into()), ("seed".into(), "42".into())],
        topics: vec![
            topic(0, "graph neural networks", 13, 0.5, &[0.1, 0.2, 0.0]),
            topic(1, "扩散模型", 8, 0.25, &[0.3, 0.3, 0.4]),
            topic(2, "", 5, 0.25, &[0.6, 0.5, 0.6]),
        ],
        charts: vec![
            ReportChart {
                name: "sizes".into(),
                caption: "Documents per topic".into(),
                svg: plotters_like_svg("Topic sizes"),
            },
            ReportChart {
                name: "timeline".into(),
                caption: "Share over time".into(),
                svg: plotters_like_svg("Timeline"),
            },
        ],
        movers: vec![
            Mover {
                topic_id: 1,
                label: "扩散模型".into(),
                change: 0.0123,
            },
            Mover {
                topic_id: 0,
                label: "graph neural networks".into(),
                change: -0.004,
            },
        ],
        trend_measure: "slope of share per period (weighted least squares)".into(),
        metrics: Some(vec![("V-measure".into(), 0.8125), ("ARI".into(), 0.5)]),
        warnings: vec!["3 documents skipped: empty abstract".into()],
        hierarchy: vec![ReportMerge {
            label: "graphs & <nodes>".into(),
            topics: vec![(0, "graph, nodes".into()), (1, "trees".into())],
            distance: 0.42,
            size: 12,
        }],
        cleaning: Some(ReportCleaning {
            segments: vec![("© 2018 Elsevier B.V. All rights reserved.".into(), 7)],
            segments_found: 1,
            min_docs: 3,
            counts: vec![("URLs".into(), 4)],
            notes: vec!["Nothing was removed as repeated: <b>x</b>.".into()],
            duplicates: vec![("p9".into(), "p<1>".into())],
        }),
        map: None,
        per_class: None,
    }
}

/// `sample()` with hostile text in every document-derived field.
fn hostile() -> ReportData {
    let mut d = sample();
    d.title = format!("{HOSTILE_SCRIPT} title");
    d.corpus = HOSTILE_IMG.into();
    d.k_rule = "\"quoted\" & 'single'".into();
    d.run_date = HOSTILE_SCRIPT.into();
    d.periods = vec!["<2024>".into(), HOSTILE_IMG.into(), "2026".into()];
    d.settings = vec![(HOSTILE_IMG.into(), HOSTILE_SCRIPT.into())];
    d.topics[0].label = HOSTILE_SCRIPT.into();
    d.topics[0].terms = vec![(HOSTILE_IMG.into(), 1.0)];
    d.topics[0].representatives = vec![ReportDoc {
        id: "<b>id</b>".into(),
        title: HOSTILE_IMG.into(),
        snippet: "<a href=\"http://evil.example/\">click</a>".into(),
    }];
    d.topics[1].colour = "red;background:url(http://evil.example/x)".into();
    d.movers[0].label = HOSTILE_IMG.into();
    d.charts[0].caption = HOSTILE_SCRIPT.into();
    d.charts[0].name = HOSTILE_IMG.into();
    d.metrics = Some(vec![(HOSTILE_SCRIPT.into(), 1.0)]);
    d.warnings = vec![HOSTILE_IMG.into()];
    if let Some(c) = &mut d.cleaning {
        c.segments[0].0 = HOSTILE_SCRIPT.into();
    }
    d
}

/// Every tag in `html` (each `<` starts one: text `<` is always escaped),
/// as (name, attribute text).
fn tags(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').expect("every tag is closed");
        let tag = &rest[..end];
        let tag = tag.strip_prefix('/').unwrap_or(tag);
        let (name, attrs) = tag.split_once([' ', '\n']).unwrap_or((tag, ""));
        out.push((name.trim_end_matches('/').to_string(), attrs.to_string()));
        rest = &rest[end + 1..];
    }
    out
}

/// The markup this module writes, plus what plotters' charts contain.
const OUR_TAGS: [&str; 47] = [
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "header",
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "span",
    "section",
    "dl",
    "div",
    "dt",
    "dd",
    "small",
    "details",
    "summary",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "a",
    "ul",
    "ol",
    "li",
    "svg",
    "polyline",
    "polygon",
    "circle",
    "line",
    "text",
    "rect",
    "figure",
    "figcaption",
    "article",
    "footer",
    "g",
    "path",
    "use",
];

/// Attribute `name="value"` pairs of one tag's attribute text.
fn attrs(attr_text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = attr_text;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].trim().trim_start_matches('/').to_string();
        let after = &rest[eq + 2..];
        let close = after.find('"').expect("attribute values are double-quoted");
        out.push((name, after[..close].to_string()));
        rest = &after[close + 1..];
    }
    out
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let html = render_html(&hostile());
    assert!(!html.contains("<script"), "raw <script in output");
    assert!(!html.contains("<img"), "raw <img in output");
    assert!(!html.contains("<b>"), "raw <b> from a document id");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(html.contains("&quot;quoted&quot; &amp; &#39;single&#39;"));
    assert!(html.contains("&lt;2024&gt;"), "period labels are escaped");
    // Every tag is one this module (or a plotters chart) writes, and none has
    // an event handler.
    for (name, attr_text) in tags(&html) {
        assert!(OUR_TAGS.contains(&name.as_str()), "unexpected tag <{name}>");
        for (key, _) in attrs(&attr_text) {
            assert!(
                !key.to_ascii_lowercase().starts_with("on"),
                "<{name} {key}=...>"
            );
        }
    }
    // The hostile colour fell back to grey instead of reaching a style.
    assert!(!html.contains("url(http"));
    assert!(html.contains("background:#888888"));
}

#[test]
fn no_external_urls_only_topic_anchors() {
    for data in [sample(), hostile()] {
        let html = render_html(&data);
        let mut hrefs = 0;
        for (name, attr_text) in tags(&html) {
            for (key, value) in attrs(&attr_text) {
                assert_ne!(key, "src", "<{name}> has a src");
                if key.ends_with("href") {
                    hrefs += 1;
                    let n = value.strip_prefix("#topic-").expect("only #topic-N links");
                    assert!(n.parse::<usize>().is_ok(), "bad anchor {value}");
                }
            }
        }
        // 3 table rows + 2 movers + the 2 topics of the hierarchy's group link to topic
        // sections.
        assert_eq!(hrefs, 7);
        assert!(!html.contains("url(") && !html.contains("@import"));
        assert!(!html.contains("<link"));
    }
    // Without hostile text there is no URL at all (plotters' xmlns is dropped).
    let html = render_html(&sample());
    assert!(!html.contains("http:") && !html.contains("https:"));
    assert!(html.contains("default-src 'none'"), "CSP meta present");
}

#[test]
fn all_sections_present_and_optional_ones_omitted() {
    let html = render_html(&sample());
    for id in [
        "summary",
        "topics",
        "movers",
        "charts",
        "topic-details",
        "topic-0",
        "topic-1",
        "topic-2",
        "metrics",
        "warnings",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "missing #{id}");
    }
    assert!(html.contains("<details class=\"settings\">"));
    assert!(html.contains("<th scope=\"row\">min_df</th><td dir=\"auto\">2</td>"));
    assert!(html.contains("2024 \u{2013} 2026<small>3 periods</small>"));
    assert!(html.contains("fixed in the pipeline file"));
    assert!(html.contains("Topic 2"), "empty label shows as Topic N");
    assert!(html.contains("0.8125"), "metric value");
    assert!(html.contains("+1.23 pp") && html.contains("\u{2212}0.40 pp"));
    // 2 figures with captions.
    assert_eq!(html.matches("<figure class=\"chart\">").count(), 2);
    assert!(html.contains("<figcaption dir=\"auto\">Share over time</figcaption>"));
    assert!(!html.contains("<?xml"));
    assert!(html.trim_end().ends_with("</html>"));

    let mut bare = sample();
    bare.metrics = None;
    bare.warnings.clear();
    bare.movers.clear();
    bare.charts.clear();
    bare.settings.clear();
    let html = render_html(&bare);
    for id in ["metrics", "warnings", "movers", "charts"] {
        assert!(
            !html.contains(&format!("id=\"{id}\"")),
            "#{id} should be omitted"
        );
    }
    assert!(!html.contains("<details"));
    bare.metrics = Some(Vec::new());
    assert!(!render_html(&bare).contains("id=\"metrics\""));
}

#[test]
fn sparklines_omitted_with_fewer_than_two_periods() {
    for periods in [vec![], vec!["2026".to_string()]] {
        let mut d = sample();
        d.periods = periods.clone();
        for t in &mut d.topics {
            t.shares_by_period = vec![t.share; periods.len()];
        }
        let html = render_html(&d);
        assert!(!html.contains("class=\"spark\""));
        assert!(!html.contains("class=\"trend\""));
        assert!(
            !html.contains("<th class=\"trend-h\">Trend</th>"),
            "no empty trend column"
        );
        assert!(!html.contains("trend not drawn"), "no warning either");
    }
    let html = render_html(&sample());
    assert_eq!(html.matches("<svg class=\"spark\"").count(), 3);
    assert_eq!(html.matches("<svg class=\"trend\"").count(), 3);
    assert!(html.contains("<th class=\"trend-h\">Trend</th>"));
}

#[test]
fn sparkline_points_match_hand_computation() {
    // Small: 120x28, padding 3 -> x in 3..117, y from 25 (0) up to 3 (max).
    // Shares 0.1, 0.2, 0.0 with max 0.2: x = 3, 60, 117; y = 25 - 22 * (v / 0.2)
    // = 14, 3, 25.
    let html = render_html(&sample());
    assert!(html.contains("points=\"3.0,14.0 60.0,3.0 117.0,25.0\""));
    // The dot sits on the last period.
    assert!(html.contains("<circle cx=\"117.0\" cy=\"25.0\" r=\"2.5\""));
    // Large: plot area x 52..544, y 140 (0) .. 12 (max). Topic 1: 0.3, 0.3, 0.4
    // -> x = 52, 298, 544; y = 140 - 128 * 0.75 = 44, 44, 12.
    assert!(html.contains("points=\"52.0,44.0 298.0,44.0 544.0,12.0\""));
}

#[test]
fn bad_trend_is_skipped_with_a_warning() {
    let mut d = sample();
    d.topics[1].shares_by_period = vec![0.1, 0.2];
    d.topics[2].shares_by_period[0] = f64::NAN;
    let html = render_html(&d);
    assert_eq!(html.matches("<svg class=\"spark\"").count(), 1);
    assert!(html.contains("Topic 1: trend not drawn (2 shares given for 3 periods)."));
    assert!(html.contains("Topic 2: trend not drawn (a share is not a finite"));
    // 1 given warning + 2 notes, counted in the summary.
    assert!(html.contains("<dt>Warnings</dt><dd>3<small>"));
}

#[test]
fn share_bars_scale_to_the_largest_topic() {
    // Shares 0.5, 0.25, 0.25 -> bars 100%, 50%, 50%.
    let html = render_html(&sample());
    // Term weights 0.5, 0.25 in every topic -> term bars 100%, 50%.
    // So 100%: 1 share bar + 3 term bars; 50%: 2 share bars + 3 term bars.
    assert_eq!(
        html.matches("style=\"width:100.0%;background:#E69F00\"")
            .count(),
        4
    );
    assert_eq!(
        html.matches("style=\"width:50.0%;background:#E69F00\"")
            .count(),
        5
    );
}

#[test]
fn duplicate_ids_and_unknown_movers_make_no_broken_anchors() {
    let mut d = sample();
    d.topics[2].id = 1;
    d.movers.push(Mover {
        topic_id: 99,
        label: "gone".into(),
        change: 0.5,
    });
    let html = render_html(&d);
    assert_eq!(html.matches("id=\"topic-1\"").count(), 1);
    assert!(!html.contains("href=\"#topic-99\""));
    assert!(html.contains("<span dir=\"auto\">gone</span>"));
    assert!(html.contains("Topic id 1 appears more than once"));
}

#[test]
fn empty_data_renders() {
    let d = ReportData::default();
    let html = render_html(&d);
    assert!(html.contains("<h1 dir=\"auto\">Topic report</h1>"));
    assert!(html.contains("No topics were found."));
    assert!(html.contains("none<small>no time axis</small>"));
    let md = render_markdown(&d);
    assert!(md.starts_with("**Topic report** \u{b7} 0 topics"));
    assert!(md.contains("No topics were found."));
}

#[test]
fn cjk_title_and_labels_preserved() {
    let d = sample();
    let html = render_html(&d);
    assert!(html.contains("<h1 dir=\"auto\">NeurIPS 2026 论文列表</h1>"));
    assert!(html.contains("<title>NeurIPS 2026 论文列表 \u{b7} topic report</title>"));
    assert!(html.contains("扩散模型") && html.contains("神经网络"));
    assert!(html.contains("<meta charset=\"utf-8\">"));
    assert!(html.contains("\"Noto Sans CJK SC\"") && html.contains("\"Microsoft YaHei\""));
    let md = render_markdown(&d);
    assert!(md.starts_with("**NeurIPS 2026 论文列表** \u{b7} 2 files, 26 documents"));
    assert!(md.contains("| 1 | 扩散模型 | 8 | 25.0% |"));
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(render_html(&hostile()), render_html(&hostile()));
    assert_eq!(render_markdown(&hostile()), render_markdown(&hostile()));
}

// ---- SVG sanitiser ----

#[test]
fn sanitiser_strips_scripts_handlers_and_javascript() {
    let evil = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [<!ENTITY x \"y\">]>\n\
        <svg width=\"100\" height=\"50\" onload=\"alert(1)\" xmlns=\"http://www.w3.org/2000/svg\" \
        xmlns:xlink=\"http://www.w3.org/1999/xlink\">\
        <script>if (a<b) alert(2)</script>\
        <SCRIPT type=\"text/javascript\">alert(3)</SCRIPT>\
        <svg:script>alert(4)</svg:script>\
        <rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"url(#grad)\" onclick=\"alert(5)\" ONMouseOver='alert(6)'/>\
        <a href=\"javascript:alert(7)\"><text>click</text></a>\
        <use href=\" JaVaScRiPt:alert(8)\"/>\
        <use xlink:href=\"http://evil.example/x.svg#a\"/>\
        <use href=\"#ok\"/>\
        <image href=\"data:image/png;base64,iVBORw0KGgo=\" width=\"1\" height=\"1\"/>\
        <image href=\"data:text/html,<script>alert(9)</script>\"/>\
        <foreignObject><div xmlns=\"http://www.w3.org/1999/xhtml\"><img src=x onerror=alert(10)></div></foreignObject>\
        <style>@import url(http://evil.example/a.css); body{display:none}</style>\
        <set attributeName=\"href\" to=\"javascript:alert(11)\"/>\
        <animate attributeName=\"href\" values=\"javascript:alert(12)\"></animate>\
        <circle r=\"1\" fill=\"url(http://evil.example/p.svg#x)\" style=\"background:url(//evil.example)\" \
         stroke=\"\\75rl(//evil.example)\" class=\"c\" style=\"fill:red\"/>\
        <text x=\"0\" y=\"9\">a &lt;b&gt; &amp; c</text>\
        <!-- <script>alert(13)</script> -->\
        </svg>\n<script>alert(14)</script><p>after</p>";
    let safe = sanitize_svg(evil, "").expect("has a root");
    let m = safe.markup();
    let lower = m.to_ascii_lowercase();
    for bad in [
        "<script",
        "script>",
        "alert",
        "javascript:",
        "foreignobject",
        "<style",
        "@import",
        "evil.example",
        "<set",
        "<animate",
        "<a ",
        "<img",
        "<p>",
        "<!",
        "<?",
        "xmlns",
    ] {
        assert!(!lower.contains(bad), "{bad:?} survived in {m}");
    }
    for (_, attr_text) in tags(m) {
        for (key, _) in attrs(&attr_text) {
            assert!(
                !key.to_ascii_lowercase().starts_with("on"),
                "handler {key} in {m}"
            );
        }
    }
    // What is safe is kept.
    assert!(m.contains("<rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"url(#grad)\"/>"));
    assert!(m.contains("<use href=\"#ok\"/>"));
    assert!(
        m.contains("<image href=\"data:image/png;base64,iVBORw0KGgo=\" width=\"1\" height=\"1\"/>")
    );
    assert!(m.contains("<text x=\"0\" y=\"9\">a &lt;b&gt; &amp; c</text>"));
    assert!(m.ends_with("</svg>"));
    // Removed: onload, 3 scripts, onclick, onmouseover, <a>, 2 bad use hrefs,
    // the text/html image href, foreignObject, <style>, set, animate, the
    // circle's fill, 2 styles and CSS-escaped stroke = 18.
    assert_eq!(safe.removed(), 18);
    assert!(m.contains("<circle r=\"1\" class=\"c\"/>"));
}

#[test]
fn sanitiser_output_is_balanced_and_cannot_escape() {
    let safe = sanitize_svg("<svg viewBox=\"0 0 1 1\"><g><rect></g></div><b>x", "").expect("root");
    assert_eq!(
        safe.markup(),
        "<svg viewBox=\"0 0 1 1\" width=\"100%\" preserveAspectRatio=\"xMidYMid meet\" \
         class=\"chart-svg\"><g><rect></rect></g></svg>"
    );
    // (`<b>` is never closed, so everything after it is dropped: fail closed.)
    // A quote inside a single-quoted value cannot end the attribute.
    let safe = sanitize_svg("<svg><text font-family='a\"b'>t</text></svg>", "").expect("root");
    assert!(safe.markup().contains("font-family=\"a&quot;b\""));
    assert_eq!(sanitize_svg("no svg here", ""), Err(SvgError::NoRoot));
    assert_eq!(sanitize_svg("<svg", ""), Err(SvgError::NoRoot));
}

#[test]
fn sanitiser_adds_viewbox_and_makes_it_responsive() {
    let src = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE svg>\n\
               <svg width=\"1920\" height=\"1080px\" xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>";
    let safe = sanitize_svg(src, "Topic <sizes>").expect("root");
    assert_eq!(
        safe.markup(),
        "<svg viewBox=\"0 0 1920 1080\" width=\"100%\" preserveAspectRatio=\"xMidYMid meet\" \
         class=\"chart-svg\" role=\"img\" aria-label=\"Topic &lt;sizes&gt;\"><rect/></svg>"
    );
    assert_eq!(safe.removed(), 0);
    // An existing viewBox is kept, not duplicated, and width/height go.
    let safe = sanitize_svg(&plotters_like_svg("x"), "").expect("root");
    assert_eq!(safe.markup().matches("viewBox").count(), 1);
    assert!(safe
        .markup()
        .starts_with("<svg viewBox=\"0 0 400 200\" width=\"100%\""));
    assert!(!safe.markup().contains("height=\"200\" viewBox"));
    // Without a usable size there is no viewBox to invent: the size stays.
    let safe = sanitize_svg("<svg width=\"50%\" height=\"30\"></svg>", "").expect("root");
    assert!(!safe.markup().contains("viewBox"));
    assert!(safe.markup().contains(" height=\"30\""));
}

#[test]
fn chart_that_is_not_svg_is_reported_not_inlined() {
    let mut d = sample();
    d.charts[1].svg = "PNG\u{0}garbage".into();
    d.charts[0].svg = plotters_like_svg("x").replace("<rect ", "<rect onclick=\"alert(1)\" ");
    let html = render_html(&d);
    assert!(html.contains(
        "This chart could not be shown: the chart text must contain an &lt;svg&gt; element."
    ));
    assert!(html.contains("Chart &quot;timeline&quot; not shown"));
    assert!(
        html.contains("Chart &quot;sizes&quot;: 1 unsafe SVG element(s) or attribute(s) removed.")
    );
    assert!(!html.contains("onclick"));
}

// ---- Markdown ----

/// Unescaped `|` in a Markdown line.
fn cells(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
        .count()
}

#[test]
fn markdown_has_header_top_topics_and_movers() {
    let mut d = sample();
    // 12 topics with sizes 1..=12: the top 10 are sizes 12 down to 3.
    d.topics = (0..12)
        .map(|i| {
            topic(
                i,
                &format!("t{i}"),
                i + 1,
                (i + 1) as f64 / 78.0,
                &[0.1, 0.1, 0.1],
            )
        })
        .collect();
    d.topics[11].label = "a|b\nc <i>x</i> \\".into();
    let md = render_markdown(&d);
    let mut lines = md.lines();
    assert_eq!(
        lines.next(),
        Some("**NeurIPS 2026 论文列表** \u{b7} 2 files, 26 documents \u{b7} 3 topics \u{b7} run 2026-03-01T12:00:00Z")
    );
    assert!(md.contains("Top 10 of 12 topics:"));
    // Size 12 / 78 documents = 15.4%.
    assert!(
        md.contains("| 11 | a\\|b c \\<i>x\\</i> \\\\ | 12 | 15.4% |"),
        "{md}"
    );
    assert!(md.contains("| 2 | t2 | 3 | 3.8% |"));
    assert!(!md.contains("| t1 |") && !md.contains("| t0 |"));
    let table_rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    // 2 header lines + 10 topics, 2 + 1 rising, 2 + 1 declining.
    assert_eq!(table_rows.len(), 18);
    assert!(
        table_rows[..12].iter().all(|l| cells(l) == 5),
        "{table_rows:?}"
    );
    assert!(
        table_rows[12..].iter().all(|l| cells(l) == 4),
        "{table_rows:?}"
    );
    // The order is by size: 12 first.
    assert!(table_rows[2].starts_with("| 11 |") && table_rows[3].starts_with("| 10 |"));
    assert!(md.contains("Rising:\n\n| # | Topic | Change |"));
    assert!(md.contains("| 1 | 扩散模型 | +1.23 pp |"));
    assert!(md.contains("Declining:"));
    assert!(md.contains("| 0 | graph neural networks | \u{2212}0.40 pp |"));
    assert!(md.contains("Change = slope of share per period (weighted least squares)"));
    // No HTML: every '<' is escaped.
    assert!(md.match_indices('<').all(|(i, _)| md[..i].ends_with('\\')));
}

#[test]
fn markdown_movers_limited_and_explained_when_absent() {
    let mut d = sample();
    d.movers = (0..8)
        .map(|i| Mover {
            topic_id: i,
            label: format!("m{i}"),
            change: 0.01 * (8 - i) as f64,
        })
        .collect();
    let md = render_markdown(&d);
    assert!(md.contains("| 4 | m4 | +4.00 pp |"));
    assert!(!md.contains("m5"), "only {SUMMARY_MOVERS} rising shown");
    assert!(!md.contains("Declining"));
    d.movers.clear();
    assert!(render_markdown(&d).contains("No topic rose or declined."));
    d.periods.truncate(1);
    assert!(render_markdown(&d).contains("No trends: the corpus has fewer than 2 periods."));
}

// ---- helpers ----

#[test]
fn escaping_and_formatting_helpers() {
    assert_eq!(Html("&<>\"'").to_string(), "&amp;&lt;&gt;&quot;&#39;");
    assert_eq!(Html("a\u{0}b\u{7f}c\nd").to_string(), "a b c\nd");
    assert_eq!(Html("中文 ok").to_string(), "中文 ok");
    assert_eq!(Md("a|b\r\nc\\<").to_string(), "a\\|b  c\\\\\\<");
    assert_eq!(truncate("  短标题  ", 10), "短标题");
    assert_eq!(truncate("一二三四五六", 4), "一二三…");
    assert_eq!(truncate("abcdef", 6), "abcdef");
    assert_eq!(safe_colour("#E69F00"), "#E69F00");
    assert_eq!(safe_colour("#abc"), "#abc");
    assert_eq!(safe_colour("#E69F0"), "#888888");
    assert_eq!(safe_colour("red"), "#888888");
    assert_eq!(safe_colour("#fff;x:url(a)"), "#888888");
    assert_eq!(Pct(0.1234).to_string(), "12.3%");
    assert_eq!(Pct(f64::NAN).to_string(), "n/a");
    assert_eq!(Points(0.0123).to_string(), "+1.23 pp");
    assert_eq!(Points(-0.004).to_string(), "\u{2212}0.40 pp");
    assert_eq!(Points(0.00001).to_string(), "0.00 pp");
    assert_eq!(Points(f64::INFINITY).to_string(), "n/a");
    assert_eq!(Count(0).to_string(), "0");
    assert_eq!(Count(999).to_string(), "999");
    assert_eq!(Count(1000).to_string(), "1,000");
    assert_eq!(Count(1_234_567).to_string(), "1,234,567");
    assert_eq!(Num(0.123456).to_string(), "0.1235");
    assert_eq!(Num(0.0001234).to_string(), "1.23e-4");
    assert_eq!(Num(f64::NAN).to_string(), "n/a");
}

#[test]
fn removed_text_is_listed_only_when_something_was_removed() {
    let html = render_html(&sample());
    let at = html
        .find("<section id=\"cleaning\">")
        .expect("cleaning section");
    let section = &html[at..at + html[at..].find("</section>").unwrap()];
    assert!(
        section.contains("© 2018 Elsevier B.V. All rights reserved."),
        "{section}"
    );
    assert!(section.contains("<td class=\"num\">7</td>"), "{section}");
    assert!(
        section.contains("<th scope=\"row\">URLs</th><td class=\"num\">4</td>"),
        "{section}"
    );
    assert!(
        section.contains(
            "<p class=\"note\">Nothing was removed as repeated: &lt;b&gt;x&lt;/b&gt;.</p>"
        ),
        "{section}"
    );
    assert!(
        section.contains("<tr><td>p9</td><td>p&lt;1&gt;</td></tr>"),
        "{section}"
    );
    let mut bare = sample();
    bare.cleaning = Some(ReportCleaning::default());
    assert!(!render_html(&bare).contains("id=\"cleaning\""));
    bare.cleaning = None;
    assert!(!render_html(&bare).contains("id=\"cleaning\""));
}

/// `sample()` with a map of three documents, one titled with markup.
fn with_map() -> ReportData {
    let mut d = sample();
    let point = |x: f32, topic_id: usize, title: &str| ReportMapPoint {
        x,
        y: x * 0.5,
        topic_id,
        outlier: false,
        title: title.into(),
    };
    d.map = Some(ReportMap {
        note: "UMAP of all 3 documents (15 neighbours).".into(),
        points: vec![
            point(0.0, d.topics[0].id, HOSTILE_SCRIPT),
            point(1.0, d.topics[0].id, "Graph nodes & edges"),
            point(2.0, d.topics[1].id, "Trees"),
        ],
        anchors: vec![(d.topics[0].id, 0.5, 0.25), (d.topics[1].id, 2.0, 1.0)],
    });
    d
}

#[test]
fn the_map_is_one_hashed_script_and_data_that_cannot_escape() {
    let html = render_html(&with_map());
    // Exactly the data block and the map's script; the hostile title is in neither as markup.
    assert_eq!(html.matches("<script").count(), 2, "two script elements");
    assert!(!html.contains(HOSTILE_SCRIPT));
    assert!(html.contains("\\u003cscript\\u003ealert(1)"));
    assert!(html.contains("<canvas id=\"map-canvas\""));
    assert!(html.contains(&format!("script-src {}", super::map::script_hash())));
    assert!(html.contains("UMAP of all 3 documents"));
    // The data block parses as JSON with every document.
    let start = html.find("id=\"map-data\">").unwrap() + "id=\"map-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    assert_eq!(data["titles"][0], HOSTILE_SCRIPT);
    assert_eq!(data["x"].as_array().unwrap().len(), 3);
    // The table rows carry their topic for the map's clicks; the static map chart is not inlined.
    assert!(html.contains(&format!("<tr data-topic=\"{}\">", d_first_id())));
    let without = render_html(&sample());
    assert!(!without.contains("<script") && !without.contains("<canvas"));
}

fn d_first_id() -> usize {
    sample().topics[0].id
}

#[test]
fn issue_51_the_per_class_section_lists_each_class_escaped() {
    let mut d = sample();
    assert!(!render_html(&d).contains("id=\"per-class\""));
    d.per_class = Some(super::ReportPerClass {
        column: "venue".into(),
        classes: vec![super::ReportClass {
            name: HOSTILE_SCRIPT.into(),
            size: 12,
            topics: vec![super::ReportClassTopic {
                id: 1,
                label: "★ Diffusion models".into(),
                share: 0.75,
                terms: vec!["denoising".into(), "<b>score</b>".into()],
            }],
        }],
    });
    let html = render_html(&d);
    assert!(html.contains("id=\"per-class\"") && html.contains("★ Diffusion models"));
    assert!(
        html.contains("75.0%") && !html.contains("<b>score</b>"),
        "escaped"
    );
    assert!(!html.contains(HOSTILE_SCRIPT));
}
