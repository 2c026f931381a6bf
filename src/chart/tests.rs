//! Tests of the chart functions: output files and sizes, skip rules, font
//! choice, SVG escaping, text fitting, scaling and determinism.

use super::fonts::{self, Family};
use super::*;
use approx::assert_abs_diff_eq;
use std::fs;

const CJK_TITLE: &str = "NeurIPS 2026 论文列表 — topic sizes";

fn style() -> ChartStyle {
    ChartStyle {
        title: CJK_TITLE.to_string(),
        ..ChartStyle::default()
    }
}

/// Width and height from a PNG's IHDR chunk (bytes 16..24, big-endian).
fn png_size(path: &Path) -> (u32, u32) {
    let b = fs::read(path).expect("png readable");
    assert_eq!(
        &b[..8],
        b"\x89PNG\r\n\x1a\n",
        "not a PNG: {}",
        path.display()
    );
    assert_eq!(&b[12..16], b"IHDR");
    let w = u32::from_be_bytes([b[16], b[17], b[18], b[19]]);
    let h = u32::from_be_bytes([b[20], b[21], b[22], b[23]]);
    (w, h)
}

/// Minimal XML well-formedness check for plotters' SVG output: tags
/// balance, text and attribute values hold no raw `<`, every `&` starts a
/// known entity, no control characters.
fn assert_well_formed(svg: &str) {
    for c in svg.chars() {
        assert!(
            !c.is_control() || c == '\n' || c == '\r' || c == '\t',
            "control character U+{:04X} in SVG",
            c as u32
        );
    }
    for (i, _) in svg.match_indices('&') {
        let rest = &svg[i..];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#"]
                .iter()
                .any(|e| rest.starts_with(e)),
            "bare & at byte {i}: {}",
            &rest[..rest.len().min(20)]
        );
    }
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').expect("unclosed tag") + open;
        let tag = &rest[open + 1..close];
        assert!(!tag.contains('<'), "raw < inside a tag: {tag}");
        if tag.starts_with('?') || tag.starts_with('!') {
        } else if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop().expect("closing tag without opening");
            assert_eq!(top, name.trim(), "mismatched closing tag");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or("").to_string();
            stack.push(name);
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
}

fn written(out: ChartOutcome) -> (PathBuf, PathBuf, Vec<String>) {
    match out {
        ChartOutcome::Written { png, svg, warnings } => (png, svg, warnings),
        ChartOutcome::Skipped { reason } => panic!("unexpectedly skipped: {reason}"),
    }
}

fn assert_skipped(out: ChartOutcome) {
    assert!(
        matches!(out, ChartOutcome::Skipped { .. }),
        "expected a skip, got {out:?}"
    );
}

fn labels8() -> Vec<String> {
    [
        "language model, reasoning",
        "diffusion, image generation",
        "reinforcement learning, policy",
        "graph neural network",
        "federated learning, privacy",
        "自然语言处理, 机器翻译",
        "optimization, convergence",
        "robotics, embodied agents",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn bars() -> Vec<TopicBar> {
    let sizes = [420usize, 380, 300, 260, 210, 160, 120, 90];
    let total: usize = sizes.iter().sum();
    labels8()
        .into_iter()
        .zip(sizes)
        .enumerate()
        .map(|(i, (label, size))| TopicBar {
            topic_id: i,
            label,
            size,
            share: size as f64 / total as f64,
        })
        .collect()
}

fn terms() -> Vec<TopicTerms> {
    let words: [&[&str]; 8] = [
        &[
            "language",
            "model",
            "reasoning",
            "llm",
            "prompt",
            "chain-of-thought",
            "instruction",
            "token",
        ],
        &[
            "diffusion",
            "image",
            "generation",
            "denoising",
            "score",
            "sampling",
            "text-to-image",
            "latent",
        ],
        &[
            "reinforcement",
            "policy",
            "reward",
            "agent",
            "environment",
            "q-learning",
            "exploration",
            "offline",
        ],
        &[
            "graph",
            "neural",
            "network",
            "node",
            "message passing",
            "molecule",
            "edge",
            "gnn",
        ],
        &[
            "federated",
            "privacy",
            "client",
            "differential",
            "communication",
            "server",
            "heterogeneous",
            "attack",
        ],
        &[
            "自然语言处理",
            "机器翻译",
            "中文",
            "语料",
            "translation",
            "bleu",
            "分词",
            "低资源",
        ],
        &[
            "optimization",
            "convergence",
            "gradient",
            "stochastic",
            "convex",
            "rate",
            "sgd",
            "adam",
        ],
        &[
            "robotics",
            "embodied",
            "manipulation",
            "robot",
            "navigation",
            "sim-to-real",
            "grasping",
            "control",
        ],
    ];
    labels8()
        .into_iter()
        .zip(words)
        .enumerate()
        .map(|(i, (label, w))| TopicTerms {
            topic_id: i,
            label,
            terms: w
                .iter()
                .enumerate()
                .map(|(j, t)| (t.to_string(), 0.3 / (1.0 + 0.35 * j as f64)))
                .collect(),
        })
        .collect()
}

const RULE_NOTE: &str =
    "Score = silhouette − 0.2 · |ln(k / k₀)|, k₀ = √n / 10 = 8.0 for 6,400 documents.";

fn kscores() -> Vec<KScore> {
    (2..=20)
        .map(|k| KScore {
            k,
            silhouette: 0.05 + 0.1 * (-((k as f64 - 8.0).powi(2)) / 20.0).exp(),
            inertia: 1.0e6 / (k as f64).sqrt(),
            score: 0.05 - 0.2 * (k as f64 / 8.0).ln().abs(),
        })
        .collect()
}

fn periods() -> Vec<String> {
    (2016..=2026).map(|y| y.to_string()).collect()
}

fn positions() -> Vec<f64> {
    (2016..=2026).map(|y| y as f64).collect()
}

fn series() -> Vec<TopicSeries> {
    let n = periods().len();
    let mut s: Vec<TopicSeries> = labels8()
        .into_iter()
        .take(5)
        .enumerate()
        .map(|(i, label)| TopicSeries {
            topic_id: i,
            label,
            values: (0..n)
                .map(|t| {
                    0.05 + 0.02 * i as f64 + 0.01 * (t as f64) * if i % 2 == 0 { 1.0 } else { -0.3 }
                })
                .collect(),
        })
        .collect();
    let other: Vec<f64> = (0..n)
        .map(|t| 1.0 - s.iter().map(|x| x.values[t]).sum::<f64>())
        .collect();
    s.push(TopicSeries {
        topic_id: usize::MAX,
        label: "other".into(),
        values: other,
    });
    s
}

/// Deterministic standard-normal samples (xorshift64* + Box-Muller), so
/// the test needs no RNG crate.
struct Normal(u64);
impl Normal {
    fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((v >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }
    fn sample(&mut self) -> f32 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
    }
}

/// Gaussian clusters of different sizes and spreads; topics 0 and 1 sit
/// close together so their labels compete for the same spot.
fn map_data(n: usize) -> (Vec<MapPoint>, Vec<MapTopic>) {
    let centres: [(f32, f32, f32); 8] = [
        (0.0, 0.0, 0.8),
        (0.4, 0.3, 0.6),
        (3.0, 1.5, 0.7),
        (-2.5, 2.0, 0.9),
        (-3.0, -1.5, 0.6),
        (1.5, -2.5, 0.5),
        (4.0, -1.0, 0.8),
        (-0.5, 3.0, 0.4),
    ];
    let weights = [6usize, 5, 4, 4, 3, 2, 2, 1];
    let total: usize = weights.iter().sum();
    let mut rng = Normal(0x9E37_79B9_7F4A_7C15);
    let pts = (0..n)
        .map(|i| {
            let mut r = i % total;
            let mut t = 0;
            while r >= weights[t] {
                r -= weights[t];
                t += 1;
            }
            let (cx, cy, sd) = centres[t];
            MapPoint {
                x: cx + rng.sample() * sd,
                y: cy + rng.sample() * sd,
                topic_id: t,
                muted: i % 50 == 0,
            }
        })
        .collect();
    let topics = labels8()
        .into_iter()
        .enumerate()
        .map(|(i, label)| MapTopic {
            topic_id: i,
            label,
            x: centres[i].0,
            y: centres[i].1,
        })
        .collect();
    (pts, topics)
}

fn sim_matrix(k: usize) -> Vec<Vec<f64>> {
    (0..k)
        .map(|i| {
            (0..k)
                .map(|j| {
                    if i == j {
                        1.0
                    } else {
                        0.05 + 0.4 / (1.0 + (i as f64 - j as f64).abs())
                    }
                })
                .collect()
        })
        .collect()
}

/// Renders every chart into `dir` with `style`; returns the outcomes.
fn render_all(dir: &Path, style: &ChartStyle) -> Vec<ChartOutcome> {
    let (pts, tops) = map_data(
        std::env::var("TOPICMAP_CHART_DEMO_POINTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(4000),
    );
    let movers_in: Vec<Mover> = labels8()
        .into_iter()
        .enumerate()
        .map(|(i, label)| Mover {
            topic_id: i,
            label,
            change: 3.0 - i as f64 * 0.8,
        })
        .collect();
    vec![
        topic_sizes(dir, style, &bars()).unwrap(),
        top_terms(dir, style, &terms()).unwrap(),
        k_selection(dir, style, &kscores(), 8, RULE_NOTE).unwrap(),
        topic_share_over_time(dir, style, &periods(), &positions(), &series()).unwrap(),
        movers(
            dir,
            style,
            &movers_in,
            "change in share (percentage points)",
        )
        .unwrap(),
        document_map(dir, style, &pts, &tops, "UMAP of all 10 documents.").unwrap(),
        similarity_heatmap(
            dir,
            style,
            &labels8(),
            &(0..8).collect::<Vec<_>>(),
            &sim_matrix(8),
        )
        .unwrap(),
    ]
}

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
    assert_skipped(k_selection(d, &st, &kscores()[..1], 2, RULE_NOTE).unwrap());
    assert_skipped(k_selection(d, &st, &[], 2, RULE_NOTE).unwrap());
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
fn time_is_proportional_and_a_gap_is_shaded_and_named() {
    // 2016-2018, then 2022-2026: the gap gets a shaded band and a footnote.
    let dir = tempfile::tempdir().unwrap();
    let periods: Vec<String> = ["2016", "2017", "2018", "2022", "2023"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let positions: Vec<f64> = periods.iter().map(|p| p.parse().unwrap()).collect();
    let series = vec![TopicSeries {
        topic_id: 0,
        label: "graph networks".into(),
        values: vec![0.1, 0.2, 0.3, 0.2, 0.4],
    }];
    let out = topic_share_over_time(dir.path(), &style(), &periods, &positions, &series).unwrap();
    let ChartOutcome::Written { svg, .. } = out else {
        panic!("not drawn")
    };
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.contains("Shaded: a gap in time without documents (2018 to 2022)"),
        "no gap note"
    );
    // The x of each period's label is proportional to its year: 2018 -> 2022 is four times
    // the 2016 -> 2017 step.
    // Each <text x="..." ...>content</text>, content trimmed.
    let texts: Vec<(f64, String)> = svg
        .split("<text")
        .skip(1)
        .map(|t| {
            let x = t.split("x=\"").nth(1).unwrap().split('"').next().unwrap();
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            (x.parse().unwrap(), body.trim().to_string())
        })
        .collect();
    let x_of = |label: &str| -> f64 {
        texts
            .iter()
            .find(|(_, t)| t == label)
            .unwrap_or_else(|| panic!("no label {label}"))
            .0
    };
    let (x16, x17, x18, x22) = (x_of("2016"), x_of("2017"), x_of("2018"), x_of("2022"));
    let ratio = (x22 - x18) / (x17 - x16);
    assert!((ratio - 4.0).abs() < 0.1, "2018->2022 is {ratio} steps");
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
fn cjk_text_chooses_the_fallback_font() {
    use super::fonts::Run;
    let f = fonts::fonts().unwrap();
    // Droid Sans Fallback has no ASCII, so the title is split into runs:
    // Latin (and the em dash) in DejaVu, the ideographs in Droid.
    let (runs, missing) = f.runs(CJK_TITLE, true);
    assert!(missing.is_empty());
    assert_eq!(
        runs,
        vec![
            Run {
                family: Family::Sans,
                text: "NeurIPS 2026 "
            },
            Run {
                family: Family::Fallback,
                text: "论文列表 "
            },
            Run {
                family: Family::Sans,
                text: "— topic sizes"
            },
        ]
    );
    // Fullwidth CJK punctuation comes from Droid, ASCII comma from DejaVu.
    let (runs, _) = f.runs("自然语言处理，机器翻译, NLP", false);
    assert_eq!(
        runs[0],
        Run {
            family: Family::Fallback,
            text: "自然语言处理，机器翻译"
        }
    );
    assert_eq!(runs[1].family, Family::Sans);
    // Latin, Greek and accents: one DejaVu run.
    let (runs, _) = f.runs("topic sizes — ünïcödé Ωμέγα", false);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].family, Family::Sans);
    assert!(!f.needs_fallback("graph neural network"));
    assert!(f.needs_fallback(CJK_TITLE));
    // Fallback runs are enlarged so CJK and Latin ems match: DejaVu's em is
    // 2048/(1901+483) of the size, Droid's 256/(267+68) (hhea metrics).
    // At size 100 that is 112.41 px, rounded to the even 112.
    let expected = 100.0 * (2048.0 / 2384.0) / (256.0 / 335.0);
    assert_abs_diff_eq!(expected, 112.41, epsilon = 0.01);
    assert_abs_diff_eq!(f.run_size(Family::Fallback, 100.0), 112.0);
    assert_abs_diff_eq!(f.run_size(Family::Sans, 25.2), 26.0);

    // In the SVG the title stays one <text> element whose CSS font list
    // includes the CJK fallback; pure-Latin labels name DejaVu only.
    let dir = tempfile::tempdir().unwrap();
    let (_, svg, warnings) = written(topic_sizes(dir.path(), &style(), &bars()).unwrap());
    assert!(warnings.is_empty(), "{warnings:?}");
    let text = fs::read_to_string(svg).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tag_before = |needle: &str| -> String {
        let at = lines
            .iter()
            .position(|l| l.contains(needle))
            .expect("text in svg");
        lines[..=at]
            .iter()
            .rev()
            .find(|l| l.contains("<text"))
            .expect("text tag")
            .to_string()
    };
    let title_tag = tag_before("NeurIPS 2026 论文列表 — topic sizes");
    assert!(title_tag.contains("Droid Sans Fallback"), "{title_tag}");
    let latin_tag = tag_before("graph neural network");
    assert!(
        latin_tag.contains("font-family=\"DejaVu Sans"),
        "{latin_tag}"
    );
    assert!(!latin_tag.contains("Droid"), "{latin_tag}");
}

#[test]
fn uncovered_characters_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    // U+10000 LINEAR B SYLLABLE B008 A: in neither embedded font.
    let mut b = bars();
    b[0].label = "ancient \u{10000} script".into();
    let (png, _, warnings) = written(topic_sizes(dir.path(), &style(), &b).unwrap());
    assert!(png.exists());
    assert!(
        warnings.iter().any(|w| w.contains("U+10000")),
        "warnings: {warnings:?}"
    );
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
fn long_labels_are_shortened_to_the_measured_width() {
    let f = fonts::fonts().unwrap();
    let long =
        "a very long topic label about large language models, reasoning, agents and tool use";
    let cjk = "一个非常长的主题标签关于大型语言模型推理能力与智能体工具使用的研究";
    for (text, size, limit) in [
        (long, 30.0f32, 400.0f32),
        (cjk, 30.0, 300.0),
        (long, 60.0, 500.0),
    ] {
        let m = |s: &str| f.width(s, size, false);
        assert!(m(text) > limit, "test label must be too long to start with");
        let short = text::ellipsize(text, limit, &m);
        assert!(short.ends_with('…'));
        assert!(
            m(&short) <= limit,
            "{short:?} is {} px > {limit}",
            m(&short)
        );
        // Not needlessly short: one more character would not fit.
        let kept = short.chars().count() - 1;
        let longer: String = text.chars().take(kept + 1).collect::<String>() + "…";
        assert!(m(&longer) > limit || longer.trim_end_matches('…').ends_with(' '));
        let lines = text::wrap(text, limit, 2, &m);
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| m(l) <= limit), "{lines:?}");
    }
    // Character-count shortening for the report.
    assert_eq!(shorten(long, 12), "a very long…");
}

/// Draws the list-like charts with 30 topics (60 movers) into `dir`.
fn render_many(dir: &Path, st: &ChartStyle) -> Vec<ChartOutcome> {
    let words = [
        "transformer",
        "attention",
        "diffusion",
        "graph",
        "privacy",
        "robot",
        "causal",
        "bandit",
        "kernel",
        "bayesian",
        "sparse",
        "contrastive",
        "federated",
        "adversarial",
        "quantum",
    ];
    let label = |i: usize| {
        format!(
            "{}, {} and {}",
            words[i % words.len()],
            words[(i * 7 + 3) % words.len()],
            if i.is_multiple_of(3) {
                "a rather long descriptive tail"
            } else {
                "models"
            }
        )
    };
    let b: Vec<TopicBar> = (0..30)
        .map(|i| TopicBar {
            topic_id: i,
            label: label(i),
            size: 1000 - i * 30,
            share: (1000 - i * 30) as f64 / 20000.0,
        })
        .collect();
    let t: Vec<TopicTerms> = (0..30)
        .map(|i| TopicTerms {
            topic_id: i,
            label: label(i),
            terms: (0..10)
                .map(|j| {
                    (
                        words[(i + j * 4) % words.len()].to_string(),
                        1.0 / (j + 1) as f64,
                    )
                })
                .collect(),
        })
        .collect();
    let labels: Vec<String> = (0..30).map(label).collect();
    let mv: Vec<Mover> = (0..60)
        .map(|i| Mover {
            topic_id: i,
            label: label(i),
            change: (30.0 - i as f64) / 10.0,
        })
        .collect();
    vec![
        topic_sizes(dir, st, &b).unwrap(),
        top_terms(dir, st, &t).unwrap(),
        similarity_heatmap(
            dir,
            st,
            &labels,
            &(0..30).collect::<Vec<_>>(),
            &sim_matrix(30),
        )
        .unwrap(),
        movers(dir, st, &mv, "change in share (percentage points)").unwrap(),
    ]
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

#[test]
fn large_maps_are_subsampled_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (pts, tops) = map_data(120_000);
    let (_, svg, _) = written(document_map(dir.path(), &style(), &pts, &tops, "").unwrap());
    let text = fs::read_to_string(svg).unwrap();
    // At most the cap (plus one marker per moved label); the few documents
    // outside the central-99% view are not drawn.
    let circles = text.matches("<circle").count();
    assert!(circles <= MAX_MAP_POINTS + tops.len(), "{circles} circles");
    assert!(circles >= MAX_MAP_POINTS * 98 / 100, "{circles} circles");
    assert!(text.contains("50,000 of 120,000"));
}

#[test]
fn palette_hex_matches_okabe_ito() {
    assert_eq!(palette_hex(0), "#E69F00");
    assert_eq!(palette_hex(1), "#56B4E9");
    assert_eq!(palette_hex(7), "#000000");
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
