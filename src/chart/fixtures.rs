//! The test corpus the chart tests draw: eight topics with Latin and CJK labels, their sizes
//! and terms, k scores, eleven periods, a map of Gaussian clusters, a similarity matrix, the
//! same lists with 30 topics; and the checks that read the written files back (PNG size, SVG
//! well-formedness). Shared by `tests.rs` and the tests beside each chart.

use super::*;
use std::fs;

pub(super) const CJK_TITLE: &str = "NeurIPS 2026 论文列表 — topic sizes";

pub(super) fn style() -> ChartStyle {
    ChartStyle {
        title: CJK_TITLE.to_string(),
        ..ChartStyle::default()
    }
}

/// Width and height from a PNG's IHDR chunk (bytes 16..24, big-endian).
pub(super) fn png_size(path: &Path) -> (u32, u32) {
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
pub(super) fn assert_well_formed(svg: &str) {
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

pub(super) fn written(out: ChartOutcome) -> (PathBuf, PathBuf, Vec<String>) {
    match out {
        ChartOutcome::Written { png, svg, warnings } => (png, svg, warnings),
        ChartOutcome::Skipped { reason } => panic!("unexpectedly skipped: {reason}"),
    }
}

pub(super) fn assert_skipped(out: ChartOutcome) {
    assert!(
        matches!(out, ChartOutcome::Skipped { .. }),
        "expected a skip, got {out:?}"
    );
}

pub(super) fn labels8() -> Vec<String> {
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

pub(super) fn bars() -> Vec<TopicBar> {
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

/// The top terms of [`labels8`]'s topics, in order.
const TERMS: [&[&str]; 8] = [
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

pub(super) fn terms() -> Vec<TopicTerms> {
    labels8()
        .into_iter()
        .zip(TERMS)
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

pub(super) const RULE_NOTE: &str =
    "The silhouette, smoothed, made 60% of its rise by k = 8 (its knee).";

pub(super) fn kscores() -> Vec<KScore> {
    (2..=20)
        .map(|k| KScore {
            k,
            silhouette: 0.05 + 0.1 * (-((k as f64 - 8.0).powi(2)) / 20.0).exp(),
            inertia: 1.0e6 / (k as f64).sqrt(),
            rise: (1.0 - (-(k as f64 - 2.0) / 4.0).exp()) / (1.0 - (-4.5f64).exp()),
        })
        .collect()
}

pub(super) fn periods() -> Vec<String> {
    (2016..=2026).map(|y| y.to_string()).collect()
}

pub(super) fn positions() -> Vec<f64> {
    (2016..=2026).map(|y| y as f64).collect()
}

pub(super) fn series() -> Vec<TopicSeries> {
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
pub(super) fn map_data(n: usize) -> (Vec<MapPoint>, Vec<MapTopic>) {
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

pub(super) fn sim_matrix(k: usize) -> Vec<Vec<f64>> {
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
pub(super) fn render_all(dir: &Path, style: &ChartStyle) -> Vec<ChartOutcome> {
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
        k_selection(dir, style, &kscores(), (8, 0.6), RULE_NOTE).unwrap(),
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

/// Draws the list-like charts with 30 topics (60 movers) into `dir`.
pub(super) fn render_many(dir: &Path, st: &ChartStyle) -> Vec<ChartOutcome> {
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
