//! Resolved, validated settings: every default filled in, every rule checked.
//!
//! `Settings::resolve` is the one place where defaults live and where a pipeline file's values
//! are judged. Each stage is later built from its part of `Settings`; the whole struct is written
//! to `run.json` so a report says exactly how it was made.

use super::options::{DocFreq, InputOptions, KOption, Options};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The validated pipeline.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The pipeline file these settings came from.
    pub pipeline: PathBuf,
    pub name: String,
    pub title: String,
    pub inputs: Vec<InputSettings>,
    pub tokenize: TokenizeSettings,
    pub tfidf: TfIdfSettings,
    pub reduce: ReduceSettings,
    pub cluster: ClusterSettings,
    pub describe: DescribeSettings,
    pub trends: TrendsSettings,
    pub charts: ChartsSettings,
    pub output: OutputSettings,
}

/// Input file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    PaperList,
    Csv,
    Tsv,
    Parquet,
    Json,
    Ndjson,
}

impl InputFormat {
    /// Parses a `format` value.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "paper-list" => Self::PaperList,
            "csv" => Self::Csv,
            "tsv" => Self::Tsv,
            "parquet" => Self::Parquet,
            "json" => Self::Json,
            "ndjson" | "jsonl" => Self::Ndjson,
            _ => return None,
        })
    }

    /// Infers the format from a file extension: `.txt`/`.md` are paper lists.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" | "md" | "text" => Self::PaperList,
            "csv" => Self::Csv,
            "tsv" | "tab" => Self::Tsv,
            "parquet" | "pq" => Self::Parquet,
            "json" => Self::Json,
            "ndjson" | "jsonl" => Self::Ndjson,
            _ => return None,
        })
    }

    pub fn is_table(self) -> bool {
        self != Self::PaperList
    }
}

/// One input, with its path resolved against the pipeline file's folder.
#[derive(Debug, Clone, Serialize)]
pub struct InputSettings {
    /// The path or glob as written in the pipeline file.
    pub pattern: String,
    /// The same, resolved against the pipeline file's folder.
    pub resolved: PathBuf,
    /// `None`: inferred per file from its extension.
    pub format: Option<InputFormat>,
    pub text: Option<Vec<String>>,
    pub id: Option<String>,
    pub title: Option<String>,
    pub time: Option<String>,
    pub label: Option<String>,
    pub batch: Option<String>,
    pub filter: Option<FilterSettings>,
    pub limit: Option<usize>,
}

/// Keep rows whose `column` is one of `values`.
#[derive(Debug, Clone, Serialize)]
pub struct FilterSettings {
    pub column: String,
    pub values: Vec<String>,
}

/// Stop-word lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopWordList {
    English,
    None,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct TokenizeSettings {
    /// Snowball language (default `english`).
    pub language: String,
    /// Stem with Snowball (default true).
    pub stem: bool,
    /// Built-in stop-word list (default `english`).
    pub stop_words: StopWordList,
    /// Extra stop words from the pipeline file.
    pub extra_stop_words: Vec<String>,
    /// Shortest token kept, in chars (default 2).
    pub min_length: usize,
    /// Longest token kept, in chars (default 40); longer ones are junk (URLs, hashes).
    pub max_length: usize,
    /// Word n-gram range for features (default [1, 1]).
    pub ngram_range: [usize; 2],
    /// Minimum document frequency; `None` = automatic (see `vectorize`).
    pub min_df: Option<DocFreq>,
    /// Maximum document frequency (default 0.5, scikit-learn's text-clustering example).
    pub max_df: DocFreq,
    /// Keep only the most frequent terms (default: no limit).
    pub max_features: Option<usize>,
}

/// Row normalisation of TF-IDF vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Norm {
    L2,
    L1,
    None,
}

#[derive(Debug, Clone, Serialize)]
pub struct TfIdfSettings {
    /// `1 + ln(tf)` instead of raw counts (default true).
    pub sublinear_tf: bool,
    /// `idf = ln((1 + n) / (1 + df)) + 1` when true (default), else `ln(n / df) + 1`.
    pub smooth_idf: bool,
    /// Row normalisation (default `l2`).
    pub norm: Norm,
}

/// Dimension reduction before clustering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceKind {
    None,
    Lsa,
    RandomProjection,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReduceSettings {
    /// Default `lsa`.
    pub method: ReduceKind,
    /// Target dimensions. Default (`None`): five per topic, within 20..=100 (k is `k-max` when
    /// k is automatic); always capped below the corpus rank.
    pub dims: Option<usize>,
    /// Power iterations of the randomized SVD (default: automatic).
    pub n_iter: Option<usize>,
}

/// How k is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "mode")]
pub enum KChoice {
    Fixed { k: usize },
    Auto { k_min: usize, k_max: usize },
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterSettings {
    /// Default: `auto` over 2..=20 (capped by the corpus size).
    pub k: KChoice,
    /// Default 42.
    pub seed: u64,
    /// k-means++ restarts; each runs 20 Lloyd passes and the lowest inertia runs on. Default: 10, or 3 above [`FEW_RUNS_ABOVE`] documents (see [`ClusterSettings::runs_for`]).
    pub runs: Option<usize>,
    /// Default 300.
    pub max_iter: u64,
    /// Default 1e-4.
    pub tolerance: f64,
    /// Mini-batch k-means above this many documents (default 50,000).
    pub minibatch_above: usize,
    /// Silhouette sample size (default 5,000).
    pub silhouette_sample: usize,
    /// At most this many passes of spherical k-means on the TF-IDF vectors refine the k-means
    /// topics (default 5; 0 = no refinement; not used without a reduction, nor above
    /// `minibatch_above` documents).
    pub refine_iter: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct DescribeSettings {
    /// Top terms per topic (default 10).
    pub top_terms: usize,
    /// Terms in a label (default 3, at most 3).
    pub label_terms: usize,
    /// Bigram and trigram phrases in labels and terms (default true).
    pub phrases: bool,
    /// Representative documents per topic (default 3).
    pub representatives: usize,
}

/// Time buckets for dates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Period {
    Year,
    Quarter,
    Month,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrendsSettings {
    /// Default `year`.
    pub period: Period,
    /// Topics drawn individually in trend charts (default 8).
    pub top: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartsSettings {
    /// Default true.
    pub enabled: bool,
    /// Default 1920.
    pub width: u32,
    /// Default 1080.
    pub height: u32,
    /// Font and line scale (default 1.0).
    pub scale: f32,
}

/// What to do with a document that cannot be used (empty text, unreadable row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnBadDocument {
    Skip,
    Fail,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputSettings {
    /// The pipeline's output root (default `output/<name>` under the current folder).
    pub dir: PathBuf,
    /// Default `skip` (counted and reported).
    pub on_bad_document: OnBadDocument,
    /// The run whose topic ids are kept. Default: `dir/latest`, when it exists. `None` when the
    /// pipeline says `previous = "none"`.
    pub previous: Option<PathBuf>,
}

/// Above this many documents the default number of k-means restarts drops from 10 to 3.
pub const FEW_RUNS_ABOVE: usize = 10_000;

impl ClusterSettings {
    /// The k-means restarts for `n` documents: the pipeline's `runs`, else 10, or 3 above
    /// 10,000 documents. Restarts cost linear time, and on large corpora they stop paying: on
    /// 20 Newsgroups (18,272 documents, 5 seeds) 3 restarts give V 0.439 ± 0.012, 10 give 0.438.
    pub fn runs_for(&self, n: usize) -> usize {
        self.runs.unwrap_or(if n > FEW_RUNS_ABOVE { 3 } else { 10 })
    }
}

impl Settings {
    /// Fills in defaults and checks every rule. The error is one line naming the key.
    pub fn resolve(o: Options, pipeline: &Path) -> Result<Settings, String> {
        let base = pipeline.parent().unwrap_or(Path::new(""));
        let name = match o.name {
            Some(n) => n,
            None => pipeline
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("pipeline")
                .to_string(),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "name {name:?} must be letters, digits, '-' and '_' only (it names the output folder)"
            ));
        }
        let title = o.title.unwrap_or_else(|| name.clone());
        if o.input.is_empty() {
            return Err("no [[input]]: at least one input is required".into());
        }
        let inputs = o
            .input
            .into_iter()
            .enumerate()
            .map(|(i, inp)| resolve_input(i, inp, base))
            .collect::<Result<Vec<_>, _>>()?;

        let t = o.tokenize.unwrap_or_default();
        let language = t
            .language
            .unwrap_or_else(|| "english".into())
            .to_lowercase();
        if crate::tokenize::Language::from_name(&language).is_none() {
            return Err(format!(
                "tokenize.language {language:?} is not a Snowball language (try english, french, german, spanish, ...)"
            ));
        }
        let stop_words = match t.stop_words.as_deref() {
            None => {
                if language == "english" {
                    StopWordList::English
                } else {
                    StopWordList::None
                }
            }
            Some("english") => StopWordList::English,
            Some("none") => StopWordList::None,
            Some(other) => {
                return Err(format!(
                    "tokenize.stop-words {other:?} must be \"english\" or \"none\""
                ))
            }
        };
        let min_length = t.min_length.unwrap_or(2);
        let max_length = t.max_length.unwrap_or(40);
        if min_length == 0 || max_length < min_length {
            return Err("tokenize.min-length must be >= 1 and <= max-length".into());
        }
        let ngram_range = t.ngram_range.unwrap_or([1, 1]);
        if ngram_range[0] == 0 || ngram_range[0] > ngram_range[1] || ngram_range[1] > 3 {
            return Err("tokenize.ngram-range must be [min, max] with 1 <= min <= max <= 3".into());
        }
        check_doc_freq("tokenize.min-df", t.min_df)?;
        check_doc_freq("tokenize.max-df", t.max_df)?;
        if t.max_features == Some(0) {
            return Err("tokenize.max-features cannot be 0".into());
        }
        let tokenize = TokenizeSettings {
            language,
            stem: t.stem.unwrap_or(true),
            stop_words,
            extra_stop_words: t.extra_stop_words.unwrap_or_default(),
            min_length,
            max_length,
            ngram_range,
            min_df: t.min_df,
            max_df: t.max_df.unwrap_or(DocFreq::Fraction(0.5)),
            max_features: t.max_features,
        };

        let f = o.tfidf.unwrap_or_default();
        let norm = match f.norm.as_deref().unwrap_or("l2") {
            "l2" => Norm::L2,
            "l1" => Norm::L1,
            "none" => Norm::None,
            other => return Err(format!("tfidf.norm {other:?} must be l2, l1 or none")),
        };
        let tfidf = TfIdfSettings {
            sublinear_tf: f.sublinear_tf.unwrap_or(true),
            smooth_idf: f.smooth_idf.unwrap_or(true),
            norm,
        };

        let r = o.reduce.unwrap_or_default();
        let method = match r.method.as_deref().unwrap_or("lsa") {
            "none" => ReduceKind::None,
            "lsa" => ReduceKind::Lsa,
            "random-projection" => ReduceKind::RandomProjection,
            other => {
                return Err(format!(
                    "reduce.method {other:?} must be none, lsa or random-projection"
                ))
            }
        };
        let dims = r.dims;
        if dims == Some(0) {
            return Err("reduce.dims cannot be 0".into());
        }
        let reduce = ReduceSettings {
            method,
            dims,
            n_iter: r.n_iter,
        };

        let c = o.cluster.unwrap_or_default();
        let k_min = c.k_min.unwrap_or(2);
        let k_max = c.k_max.unwrap_or(20);
        let k = match c.k {
            None => KChoice::Auto { k_min, k_max },
            Some(KOption::Named(s)) if s == "auto" => KChoice::Auto { k_min, k_max },
            Some(KOption::Named(s)) => {
                return Err(format!("cluster.k {s:?} must be a number or \"auto\""))
            }
            Some(KOption::Fixed(k)) if k <= 0 => {
                return Err(format!("cluster.k cannot be {k}: it must be at least 1"))
            }
            Some(KOption::Fixed(k)) => KChoice::Fixed { k: k as usize },
        };
        if let KChoice::Auto { k_min, k_max } = k {
            if k_min < 2 || k_max < k_min {
                return Err(format!(
                    "cluster.k-min ({k_min}) must be >= 2 and <= cluster.k-max ({k_max})"
                ));
            }
        }
        let runs = c.runs;
        if runs == Some(0) {
            return Err("cluster.runs cannot be 0".into());
        }
        let max_iter = c.max_iter.unwrap_or(300);
        if max_iter == 0 {
            return Err("cluster.max-iter cannot be 0".into());
        }
        let tolerance = c.tolerance.unwrap_or(1e-4);
        if !(tolerance > 0.0 && tolerance.is_finite()) {
            return Err("cluster.tolerance must be a positive number".into());
        }
        let silhouette_sample = c.silhouette_sample.unwrap_or(5_000);
        if !(100..=crate::evaluate::silhouette::DEFAULT_MAX_SAMPLE).contains(&silhouette_sample) {
            return Err(format!(
                "cluster.silhouette-sample = {silhouette_sample} must be within 100..=20000 (its pairwise distances are held in memory)"
            ));
        }
        let cluster = ClusterSettings {
            k,
            seed: c.seed.unwrap_or(42),
            runs,
            max_iter,
            tolerance,
            minibatch_above: c.minibatch_above.unwrap_or(50_000),
            silhouette_sample,
            refine_iter: c.refine_iter.unwrap_or(5),
        };

        let d = o.describe.unwrap_or_default();
        let label_terms = d.label_terms.unwrap_or(3);
        if !(1..=3).contains(&label_terms) {
            return Err("describe.label-terms must be 1, 2 or 3".into());
        }
        let describe = DescribeSettings {
            top_terms: d.top_terms.unwrap_or(10).max(label_terms),
            label_terms,
            phrases: d.phrases.unwrap_or(true),
            representatives: d.representatives.unwrap_or(3),
        };

        let tr = o.trends.unwrap_or_default();
        let period = match tr.period.as_deref().unwrap_or("year") {
            "year" => Period::Year,
            "quarter" => Period::Quarter,
            "month" => Period::Month,
            other => {
                return Err(format!(
                    "trends.period {other:?} must be year, quarter or month"
                ))
            }
        };
        let trends = TrendsSettings {
            period,
            top: tr.top.unwrap_or(8).max(1),
        };

        let ch = o.charts.unwrap_or_default();
        let charts = ChartsSettings {
            enabled: ch.enabled.unwrap_or(true),
            width: ch.width.unwrap_or(1920),
            height: ch.height.unwrap_or(1080),
            scale: ch.scale.unwrap_or(1.0),
        };
        if charts.width < 320
            || charts.height < 240
            || charts.width > 10_000
            || charts.height > 10_000
        {
            return Err(
                "charts.width and charts.height must be within 320x240 .. 10000x10000".into(),
            );
        }
        if !(charts.scale > 0.1 && charts.scale <= 8.0) {
            return Err("charts.scale must be within 0.1 .. 8".into());
        }

        let out = o.output.unwrap_or_default();
        let dir = match out.dir {
            Some(d) => normalize(&base.join(d)),
            None => PathBuf::from("output").join(&name),
        };
        let on_bad_document = match out.on_bad_document.as_deref().unwrap_or("skip") {
            "skip" => OnBadDocument::Skip,
            "fail" => OnBadDocument::Fail,
            other => {
                return Err(format!(
                    "output.on-bad-document {other:?} must be skip or fail"
                ))
            }
        };
        Ok(Settings {
            pipeline: pipeline.to_path_buf(),
            name,
            title,
            inputs,
            tokenize,
            tfidf,
            reduce,
            cluster,
            describe,
            trends,
            charts,
            output: OutputSettings {
                previous: match out.previous.as_deref() {
                    Some("none") => None,
                    Some(p) => Some(normalize(&base.join(p))),
                    None => Some(dir.join("latest")),
                },
                dir,
                on_bad_document,
            },
        })
    }
}

/// Removes `.` and `name/..` pairs without touching the file system, so messages and printed
/// paths read `output/x`, not `pipelines/../output/x`.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    }
}

fn check_doc_freq(key: &str, v: Option<DocFreq>) -> Result<(), String> {
    match v {
        Some(DocFreq::Fraction(f)) if !(0.0..=1.0).contains(&f) => Err(format!(
            "{key} = {f}: a fraction must be within 0.0 ..= 1.0 (or give a whole document count)"
        )),
        _ => Ok(()),
    }
}

fn resolve_input(i: usize, o: InputOptions, base: &Path) -> Result<InputSettings, String> {
    let key = format!("input[{i}]");
    let pattern = o
        .path
        .ok_or_else(|| format!("{key}.path is missing: every [[input]] needs a path"))?;
    let format = match o.format.as_deref() {
        None => None,
        Some(f) => Some(InputFormat::from_name(f).ok_or_else(|| {
            format!("{key}.format {f:?} must be paper-list, csv, tsv, parquet, json or ndjson")
        })?),
    };
    if let Some(text) = &o.text {
        if text.is_empty() {
            return Err(format!("{key}.text must name at least one column"));
        }
    }
    let filter = match o.filter {
        None => None,
        Some(f) => Some(FilterSettings {
            column: f
                .column
                .ok_or_else(|| format!("{key}.filter.column is missing"))?,
            values: f
                .values
                .ok_or_else(|| format!("{key}.filter.values is missing"))?,
        }),
    };
    if format == Some(InputFormat::PaperList)
        && (o.text.is_some() || o.id.is_some() || o.time.is_some() || o.label.is_some())
    {
        return Err(format!(
            "{key}: text, id, time and label name table columns; a paper-list has none"
        ));
    }
    Ok(InputSettings {
        resolved: normalize(&base.join(&pattern)),
        pattern,
        format,
        text: o.text,
        id: o.id,
        title: o.title,
        time: o.time,
        label: o.label,
        batch: o.batch,
        filter,
        limit: o.limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_lexically() {
        assert_eq!(
            normalize(Path::new("pipelines/../output/x")),
            PathBuf::from("output/x")
        );
        assert_eq!(
            normalize(Path::new("pipelines/../../shared/a.csv")),
            PathBuf::from("../shared/a.csv")
        );
        assert_eq!(normalize(Path::new("./a/./b")), PathBuf::from("a/b"));
        assert_eq!(normalize(Path::new("a/..")), PathBuf::from("."));
    }

    #[test]
    fn restarts_default_by_corpus_size() {
        let c = ClusterSettings {
            k: KChoice::Fixed { k: 3 },
            seed: 1,
            runs: None,
            max_iter: 300,
            tolerance: 1e-4,
            minibatch_above: 50_000,
            silhouette_sample: 5_000,
            refine_iter: 5,
        };
        assert_eq!(c.runs_for(10_000), 10);
        assert_eq!(c.runs_for(10_001), 3);
        assert_eq!(ClusterSettings { runs: Some(7), ..c }.runs_for(99_999), 7);
    }
}
