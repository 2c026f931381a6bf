//! Tests of the chart functions across every chart, through the files they write: sizes and
//! scale, determinism, skip rules, input and style errors, SVG escaping, many topics. The tests
//! of one chart's own rules sit beside it (`timeline.rs`, `document_map.rs`, `fonts.rs`, ...);
//! the data they draw is in `fixtures.rs`.

use super::fixtures::*;
use super::*;
use std::fs;

#[test]
fn every_chart_writes_png_and_svg_of_the_requested_size_with_title() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "topic_sizes",
        "top_terms",
        "k_selection",
        "topic_share_over_time",
        "trend_movers",
        "document_map",
        "topic_similarity",
    ];
    let outs = render_all(dir.path(), &style());
    for (out, name) in outs.into_iter().zip(names) {
        let (png, svg, warnings) = written(out);
        assert_eq!(png, dir.path().join(format!("{name}.png")));
        assert_eq!(svg, dir.path().join(format!("{name}.svg")));
        assert_eq!(png_size(&png), (1920, 1080), "{name}");
        let text = fs::read_to_string(&svg).unwrap();
        assert!(
            text.contains("NeurIPS 2026 论文列表 — topic sizes"),
            "{name}: title missing"
        );
        assert!(text.contains("width=\"1920\""), "{name}");
        assert_well_formed(&text);
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
    }
}

#[test]
fn scale_two_gives_4k() {
    let dir = tempfile::tempdir().unwrap();
    let st = ChartStyle {
        width: 3840,
        height: 2160,
        scale: 2.0,
        ..style()
    };
    let (png, svg, _) = written(topic_sizes(dir.path(), &st, &bars()).unwrap());
    assert_eq!(png_size(&png), (3840, 2160));
    let text = fs::read_to_string(svg).unwrap();
    assert!(text.contains("width=\"3840\"") && text.contains("height=\"2160\""));
}

#[test]
fn extreme_sizes_draw_without_panicking() {
    // Smallest canvas with the largest scale, and a tall narrow one: the
    // layout degenerates (text clipped) but every chart still draws.
    for (w, h, scale) in [(200, 200, 8.0), (200, 2000, 0.25), (2000, 200, 1.0)] {
        let dir = tempfile::tempdir().unwrap();
        let st = ChartStyle {
            width: w,
            height: h,
            scale,
            ..style()
        };
        for out in render_all(dir.path(), &st) {
            let (png, _, _) = written(out);
            assert_eq!(png_size(&png), (w, h));
        }
    }
}

#[test]
fn same_input_gives_identical_files() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let (pts, tops) = map_data(3000);
    for d in [a.path(), b.path()] {
        document_map(d, &style(), &pts, &tops, "").unwrap();
        topic_sizes(d, &style(), &bars()).unwrap();
    }
    for f in [
        "document_map.png",
        "document_map.svg",
        "topic_sizes.png",
        "topic_sizes.svg",
    ] {
        assert_eq!(
            fs::read(a.path().join(f)).unwrap(),
            fs::read(b.path().join(f)).unwrap(),
            "{f} differs between runs"
        );
    }
}

#[test]
fn skip_rules() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = style();
    assert_skipped(topic_sizes(d, &st, &[]).unwrap());
    let empty = [TopicBar {
        topic_id: 0,
        label: "x".into(),
        size: 0,
        share: 0.0,
    }];
    assert_skipped(topic_sizes(d, &st, &empty).unwrap());
    assert_skipped(top_terms(d, &st, &[]).unwrap());
    let no_terms = [TopicTerms {
        topic_id: 0,
        label: "x".into(),
        terms: vec![],
    }];
    assert_skipped(top_terms(d, &st, &no_terms).unwrap());
    assert_skipped(k_selection(d, &st, &kscores()[..1], (2, 0.6), RULE_NOTE).unwrap());
    assert_skipped(k_selection(d, &st, &[], (2, 0.6), RULE_NOTE).unwrap());
    let one_period = vec!["2020".to_string()];
    let s1 = [TopicSeries {
        topic_id: 0,
        label: "a".into(),
        values: vec![0.5],
    }];
    assert_skipped(topic_share_over_time(d, &st, &one_period, &[2020.0], &s1).unwrap());
    assert_skipped(topic_share_over_time(d, &st, &periods(), &positions(), &[]).unwrap());
    assert_skipped(movers(d, &st, &[], "change").unwrap());
    let nan_mover = [Mover {
        topic_id: 0,
        label: "a".into(),
        change: f64::NAN,
    }];
    assert_skipped(movers(d, &st, &nan_mover, "change").unwrap());
    assert_skipped(document_map(d, &st, &[], &[], "").unwrap());
    let nan_pt = [MapPoint {
        x: f32::NAN,
        y: 0.0,
        topic_id: 0,
        muted: false,
    }];
    assert_skipped(document_map(d, &st, &nan_pt, &[], "").unwrap());
    assert_skipped(similarity_heatmap(d, &st, &["a".to_string()], &[0], &[vec![1.0]]).unwrap());
    assert_skipped(similarity_heatmap(d, &st, &[], &[], &[]).unwrap());
    // Nothing was written by any skipped chart.
    assert_eq!(fs::read_dir(d).unwrap().count(), 0);
}

#[test]
fn input_shape_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = [TopicSeries {
        topic_id: 0,
        label: "a".into(),
        values: vec![0.5],
    }];
    assert!(matches!(
        topic_share_over_time(dir.path(), &style(), &periods(), &positions(), &bad),
        Err(ChartError::SeriesLength {
            expected: 11,
            found: 1,
            ..
        })
    ));
    let labels = vec!["a".to_string(), "b".to_string()];
    assert!(matches!(
        similarity_heatmap(dir.path(), &style(), &labels, &[0, 1], &[vec![1.0, 0.0]]),
        Err(ChartError::MatrixRows {
            expected: 2,
            found: 1
        })
    ));
    assert!(matches!(
        similarity_heatmap(
            dir.path(),
            &style(),
            &labels,
            &[0, 1],
            &[vec![1.0, 0.0], vec![1.0]]
        ),
        Err(ChartError::MatrixColumns {
            row: 1,
            expected: 2,
            found: 1
        })
    ));
}

#[test]
fn unusable_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not_a_dir");
    fs::write(&file, b"x").unwrap();
    assert!(matches!(
        topic_sizes(&file, &style(), &bars()),
        Err(ChartError::CreateDir { .. })
    ));
}

#[test]
fn style_rules() {
    let ok = ChartStyle::default();
    assert_eq!((ok.width, ok.height, ok.scale), (1920, 1080, 1.0));
    assert!(ok.check().is_ok());
    let e = ChartStyle {
        width: 0,
        ..ChartStyle::default()
    };
    assert!(matches!(e.check(), Err(ChartError::Width(0))));
    let e = ChartStyle {
        height: 20_000,
        ..ChartStyle::default()
    };
    assert!(matches!(e.check(), Err(ChartError::Height(20_000))));
    for s in [0.0, -1.0, f32::NAN, f32::INFINITY, 9.0] {
        let e = ChartStyle {
            scale: s,
            ..ChartStyle::default()
        };
        assert!(matches!(e.check(), Err(ChartError::Scale(_))), "scale {s}");
    }
    let dir = tempfile::tempdir().unwrap();
    let e = ChartStyle {
        scale: 0.0,
        ..style()
    };
    assert!(topic_sizes(dir.path(), &e, &bars()).is_err());
}

#[test]
fn hostile_labels_are_escaped_in_svg() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = bars();
    b[0].label = "<script>alert(1)</script>".into();
    b[1].label = "A & B \"quoted\" 'x'".into();
    b[2].label = "ctrl\u{1}\u{8}chars\nnewline".into();
    let st = ChartStyle {
        title: "Title with <b>tags</b> & ampersand".into(),
        ..ChartStyle::default()
    };
    let (_, svg, _) = written(topic_sizes(dir.path(), &st, &b).unwrap());
    let text = fs::read_to_string(svg).unwrap();
    assert!(!text.contains("<script"), "raw <script in SVG");
    assert!(!text.contains("<b>"), "raw <b> in SVG");
    assert!(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(text.contains("A &amp; B"));
    assert!(text.contains("Title with &lt;b&gt;tags&lt;/b&gt; &amp; ampersand"));
    assert!(!text.contains("&amp;lt;"), "double escaping");
    assert!(text.contains("ctrl chars newline"));
    assert_well_formed(&text);
    // Same for the other charts that take labels.
    let hostile = vec!["<script>x</script>".to_string(), "A & B".to_string()];
    let (_, svg, _) =
        written(similarity_heatmap(dir.path(), &st, &hostile, &[0, 1], &sim_matrix(2)).unwrap());
    let text = fs::read_to_string(svg).unwrap();
    assert!(!text.contains("<script"));
    assert_well_formed(&text);
}

#[test]
fn many_topics_stay_within_canvas() {
    // 30 topics (60 movers) in every chart that lists topics: all drawn,
    // and the topic_sizes / movers footnotes say what was left out.
    let dir = tempfile::tempdir().unwrap();
    for out in render_many(dir.path(), &style()) {
        written(out);
    }
    let sizes = fs::read_to_string(dir.path().join("topic_sizes.svg")).unwrap();
    let movers = fs::read_to_string(dir.path().join("trend_movers.svg")).unwrap();
    // 30 rows need 30 * 16 * 1.45 = 696 px at the minimum font: they fit.
    assert!(!sizes.contains("Showing the"), "all 30 topics fit");
    // 60 rows do not fit: strongest rises and declines are kept.
    assert!(
        movers.contains("strongest rises"),
        "movers footnote missing"
    );
}

/// Renders the demo charts into `$TOPICMAP_CHART_DEMO` for a visual check:
/// `TOPICMAP_CHART_DEMO=/tmp/demo cargo test --release -- --ignored demo`.
#[test]
#[ignore = "writes demo charts for a human to look at"]
fn demo_render_for_visual_check() {
    let dir = std::env::var("TOPICMAP_CHART_DEMO").expect("set TOPICMAP_CHART_DEMO to a directory");
    let dir = Path::new(&dir);
    for out in render_all(dir, &style()) {
        written(out);
    }
    for out in render_many(&dir.join("many"), &style()) {
        written(out);
    }
    let uhd = ChartStyle {
        width: 3840,
        height: 2160,
        scale: 2.0,
        ..style()
    };
    for out in render_all(&dir.join("4k"), &uhd) {
        written(out);
    }
}
