//! Resolved, validated settings: every stage's parameters, built from the pipeline file.
//!
//! `Settings::resolve` maps each key of the file onto the parameters of the stage it governs.
//! The defaults live in the stages (`TokenizerParams::new`, `ClusterParams::new`, ...) and so do
//! the rules (each `check()`); this file only names keys, turns strings into the stages' enums
//! and resolves paths. The whole struct is written to `run.json`, so a report says exactly how
//! it was made.

use super::options::{InputOptions, KOption, Options};
use crate::chart::{ChartError, ChartStyle};
use crate::cluster::{self, ClusterError, ClusterParams, KChoice};
use crate::describe::names::{self, Names, NamesError};
use crate::describe::{DescribeParams, DescribeParamsError};
use crate::ingest::{FilterSpec, InputFormat, InputSpec, OnBadDocument, PeriodUnit};
use crate::reduce::{self, ReduceError, ReduceMethod, ReduceParams};
use crate::tables::OutputFormat;
use crate::tokenize::{StopWordList, TokenizerParams, TokenizerParamsError};
use crate::vectorize::{Norm, TfIdfError, TfIdfParams};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The validated pipeline. Serialized (into `run.json`) without any path of the machine that
/// ran it: the pipeline by its file name, inputs and folders as the file writes them.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The pipeline file these settings came from.
    #[serde(serialize_with = "file_name")]
    pub pipeline: PathBuf,
    pub name: String,
    pub title: String,
    pub inputs: Vec<InputSpec>,
    pub tokenize: TokenizerParams,
    pub tfidf: TfIdfParams,
    pub reduce: ReduceParams,
    pub cluster: ClusterParams,
    pub describe: DescribeParams,
    /// Curated topic names (`[describe] names`), when the pipeline names a file.
    pub names: Option<TopicNames>,
    pub trends: TrendsSettings,
    pub charts: ChartsSettings,
    pub output: OutputSettings,
}

/// A names file and the names it holds.
#[derive(Debug, Clone, Serialize)]
pub struct TopicNames {
    /// The file as the pipeline writes it.
    pub file: String,
    /// Where it was read.
    #[serde(skip)]
    pub path: PathBuf,
    pub names: Names,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrendsSettings {
    /// The time bucket for dates (default `year`).
    pub period: PeriodUnit,
    /// Topics drawn individually in the share-over-time chart (default 8).
    pub top: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartsSettings {
    /// Default true.
    pub enabled: bool,
    /// Size and scale (defaults: 1920 x 1080, scale 1.0); the title is the pipeline's.
    #[serde(flatten)]
    pub style: ChartStyle,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputSettings {
    /// The pipeline's output root (default `output/<name>` under the current folder).
    #[serde(skip)]
    pub dir: PathBuf,
    /// The same as the pipeline file writes it (or the default).
    #[serde(rename = "dir")]
    pub dir_as_written: String,
    /// Default `skip` (counted and reported).
    pub on_bad_document: OnBadDocument,
    /// The run whose topic ids are kept. Default: `dir/latest`, when it exists. `None` when the
    /// pipeline says `previous = "none"`.
    #[serde(skip)]
    pub previous: Option<PathBuf>,
    /// `[output] previous` as the pipeline file writes it, when it does.
    #[serde(rename = "previous", skip_serializing_if = "Option::is_none")]
    pub previous_as_written: Option<String>,
    /// The formats the tables are written in (default csv and xlsx).
    pub formats: Vec<OutputFormat>,
    /// Most documents report.xlsx's Documents sheet holds (default 100,000, at most Excel's
    /// 1,048,575 rows).
    pub workbook_documents: usize,
}

/// What is wrong with a pipeline's values. Messages name the key as the file writes it.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("name {0:?} must be letters, digits, '-' and '_' only (it names the output folder)")]
    BadName(String),
    #[error("no [[input]]: at least one input is required")]
    NoInput,
    #[error("{key} is missing: {why}")]
    Missing { key: String, why: &'static str },
    #[error("{key} = {value:?} must be {expected}")]
    BadChoice {
        key: String,
        value: String,
        expected: &'static str,
    },
    #[error("output.formats must name at least one of csv, xlsx or parquet")]
    NoFormats,
    #[error("output.workbook-documents = {0} must be within 1..=1048575 (Excel's row limit)")]
    WorkbookDocuments(usize),
    #[error("input[{0}].text must name at least one column")]
    NoTextColumns(usize),
    #[error("input[{0}]: text, id, time and label name table columns; a paper-list has none")]
    ColumnsOfPaperList(usize),
    #[error(transparent)]
    Tokenize(#[from] TokenizerParamsError),
    #[error(transparent)]
    TfIdf(#[from] TfIdfError),
    #[error(transparent)]
    Reduce(#[from] ReduceError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Describe(#[from] DescribeParamsError),
    #[error("cannot read the names file {path} (describe.names)")]
    NamesRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the names file {path} (describe.names) is not valid")]
    Names {
        path: PathBuf,
        #[source]
        source: NamesError,
    },
    #[error(transparent)]
    Charts(#[from] ChartError),
}

/// Reads an enumerated value, or says which values the key takes.
fn choice<T>(
    key: &str,
    value: Option<String>,
    default: T,
    parse: impl Fn(&str) -> Option<T>,
    expected: &'static str,
) -> Result<T, SettingsError> {
    match value {
        None => Ok(default),
        Some(v) => parse(&v).ok_or(SettingsError::BadChoice {
            key: key.into(),
            value: v,
            expected,
        }),
    }
}

impl Settings {
    /// Fills in defaults and checks every rule.
    pub fn resolve(o: Options, pipeline: &Path) -> Result<Settings, SettingsError> {
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
            return Err(SettingsError::BadName(name));
        }
        let title = o.title.unwrap_or_else(|| name.clone());
        if o.input.is_empty() {
            return Err(SettingsError::NoInput);
        }
        let inputs = o
            .input
            .into_iter()
            .enumerate()
            .map(|(i, inp)| resolve_input(i, inp, base))
            .collect::<Result<Vec<_>, _>>()?;

        let t = o.tokenize.unwrap_or_default();
        let mut tokenize = TokenizerParams::new();
        if let Some(language) = &t.language {
            tokenize = tokenize.language(language);
        }
        if let Some(list) = t.stop_words {
            let list = choice(
                "tokenize.stop-words",
                Some(list),
                StopWordList::English,
                StopWordList::from_name,
                "\"english\" or \"none\"",
            )?;
            tokenize = tokenize.stop_words(list);
        }
        let defaults = TokenizerParams::new();
        let tokenize = tokenize
            .stem(t.stem.unwrap_or(defaults.stem))
            .extra_stop_words(t.extra_stop_words.unwrap_or_default())
            .min_length(t.min_length.unwrap_or(defaults.min_length))
            .max_length(t.max_length.unwrap_or(defaults.max_length))
            .check()?;

        let f = o.tfidf.unwrap_or_default();
        let mut tfidf = TfIdfParams::new()
            .min_df(t.min_df)
            .max_features(t.max_features);
        if let Some(v) = t.max_df {
            tfidf = tfidf.max_df(v);
        }
        if let Some(v) = t.ngram_range {
            tfidf = tfidf.ngram_range(v);
        }
        if let Some(v) = f.sublinear_tf {
            tfidf = tfidf.sublinear_tf(v);
        }
        if let Some(v) = f.smooth_idf {
            tfidf = tfidf.smooth_idf(v);
        }
        let norm = choice(
            "tfidf.norm",
            f.norm,
            Norm::L2,
            Norm::from_name,
            "l2, l1 or none",
        )?;
        let tfidf = tfidf.norm(norm).check()?;

        let c = o.cluster.unwrap_or_default();
        let defaults = ClusterParams::new();
        let (k_min, k_max) = (
            c.k_min.unwrap_or(cluster::DEFAULT_K_RANGE.0),
            c.k_max.unwrap_or(cluster::DEFAULT_K_RANGE.1),
        );
        let k = match c.k {
            None => KChoice::Auto { k_min, k_max },
            Some(KOption::Named(s)) if s == "auto" => KChoice::Auto { k_min, k_max },
            Some(KOption::Named(s)) => {
                return Err(SettingsError::BadChoice {
                    key: "cluster.k".into(),
                    value: s,
                    expected: "a number or \"auto\"",
                })
            }
            Some(KOption::Fixed(k)) if k <= 0 => return Err(ClusterError::ZeroK.into()),
            Some(KOption::Fixed(k)) => KChoice::Fixed { k: k as usize },
        };

        let r = o.reduce.unwrap_or_default();
        let method = choice(
            "reduce.method",
            r.method,
            ReduceMethod::Lsa,
            |s| s.parse().ok(),
            "none, lsa or random-projection",
        )?;
        if r.dims == Some(0) {
            return Err(ReduceError::ZeroDims.into());
        }
        let seed = c.seed.unwrap_or(defaults.seed);
        // Reduced dimensions default to five per topic (k-max when k is automatic), and are
        // lowered to what a small corpus can give.
        let reduce = ReduceParams::new()
            .method(method)
            .dims(r.dims.unwrap_or_else(|| reduce::dims_for_topics(k.max_k())))
            .n_iter(r.n_iter)
            .seed(seed)
            .cap_dims(true);
        reduce.clone().check()?;

        let cluster = ClusterParams {
            k,
            seed,
            runs: c.runs,
            max_iter: c.max_iter.unwrap_or(defaults.max_iter),
            tolerance: c.tolerance.unwrap_or(defaults.tolerance),
            minibatch_above: c.minibatch_above.unwrap_or(defaults.minibatch_above),
            silhouette_sample: c.silhouette_sample.unwrap_or(defaults.silhouette_sample),
            // The refinement works on the TF-IDF vectors: without a reduction, k-means already
            // ran on them, so there is nothing to refine.
            refine_iter: if method == ReduceMethod::None {
                0
            } else {
                c.refine_iter.unwrap_or(defaults.refine_iter)
            },
            fit_sample: c.fit_sample,
        };
        cluster.clone().check()?;

        let d = o.describe.unwrap_or_default();
        let defaults = DescribeParams::default();
        let describe = DescribeParams {
            top_terms: d.top_terms.unwrap_or(defaults.top_terms),
            label_terms: d.label_terms.unwrap_or(defaults.label_terms),
            phrases: d.phrases.unwrap_or(defaults.phrases),
            representatives: d.representatives.unwrap_or(defaults.representatives),
            reduce_frequent_words: d
                .reduce_frequent_words
                .unwrap_or(defaults.reduce_frequent_words),
            min_spread: d.min_spread.unwrap_or(defaults.min_spread),
            diversity: d.diversity.unwrap_or(defaults.diversity),
            label_max_share: d.label_max_share.unwrap_or(defaults.label_max_share),
            merge_to: d.merge_to,
        }
        .check()?;

        let names = match d.names {
            None => None,
            Some(file) => {
                let path = normalize(&base.join(&file));
                let text =
                    std::fs::read_to_string(&path).map_err(|source| SettingsError::NamesRead {
                        path: path.clone(),
                        source,
                    })?;
                let names = names::parse(&text).map_err(|source| SettingsError::Names {
                    path: path.clone(),
                    source,
                })?;
                Some(TopicNames { file, path, names })
            }
        };

        let tr = o.trends.unwrap_or_default();
        let trends = TrendsSettings {
            period: choice(
                "trends.period",
                tr.period,
                PeriodUnit::default(),
                PeriodUnit::from_name,
                "year, quarter or month",
            )?,
            top: tr.top.unwrap_or(8).max(1),
        };

        let ch = o.charts.unwrap_or_default();
        let defaults = ChartStyle::default();
        let style = ChartStyle {
            width: ch.width.unwrap_or(defaults.width),
            height: ch.height.unwrap_or(defaults.height),
            scale: ch.scale.unwrap_or(defaults.scale),
            title: title.clone(),
        };
        style.check()?;
        let charts = ChartsSettings {
            enabled: ch.enabled.unwrap_or(true),
            style,
        };

        let out = o.output.unwrap_or_default();
        let dir_as_written = out.dir.clone().unwrap_or_else(|| format!("output/{name}"));
        let dir = match &out.dir {
            Some(d) => normalize(&base.join(d)),
            None => PathBuf::from("output").join(&name),
        };
        let on_bad_document = choice(
            "output.on-bad-document",
            out.on_bad_document,
            OnBadDocument::default(),
            OnBadDocument::from_name,
            "skip or fail",
        )?;
        let formats = match out.formats {
            None => OutputFormat::DEFAULT.to_vec(),
            Some(names) => {
                let mut formats: Vec<OutputFormat> = Vec::new();
                for name in names {
                    let f = choice(
                        "output.formats",
                        Some(name),
                        OutputFormat::Csv,
                        OutputFormat::from_name,
                        OutputFormat::NAMES,
                    )?;
                    if !formats.contains(&f) {
                        formats.push(f);
                    }
                }
                if formats.is_empty() {
                    return Err(SettingsError::NoFormats);
                }
                formats
            }
        };
        let workbook_documents = out
            .workbook_documents
            .unwrap_or(crate::workbook::DEFAULT_DOCUMENTS);
        if !(1..=crate::workbook::MAX_ROWS).contains(&workbook_documents) {
            return Err(SettingsError::WorkbookDocuments(workbook_documents));
        }
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
            names,
            trends,
            charts,
            output: OutputSettings {
                previous_as_written: out.previous.clone(),
                dir_as_written,
                previous: match out.previous.as_deref() {
                    Some("none") => None,
                    Some(p) => Some(normalize(&base.join(p))),
                    None => Some(dir.join("latest")),
                },
                dir,
                on_bad_document,
                formats,
                workbook_documents,
            },
        })
    }
}

/// Serializes a path by its file name alone.
fn file_name<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    let name = path.file_name().unwrap_or(path.as_os_str());
    s.serialize_str(&name.to_string_lossy())
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

fn resolve_input(i: usize, o: InputOptions, base: &Path) -> Result<InputSpec, SettingsError> {
    let pattern = o.path.ok_or_else(|| SettingsError::Missing {
        key: format!("input[{i}].path"),
        why: "every [[input]] needs a path",
    })?;
    let format = match o.format {
        None => None,
        Some(f) => Some(choice(
            &format!("input[{i}].format"),
            Some(f),
            InputFormat::Csv,
            InputFormat::from_name,
            InputFormat::NAMES,
        )?),
    };
    if o.text.as_ref().is_some_and(Vec::is_empty) {
        return Err(SettingsError::NoTextColumns(i));
    }
    let filter = match o.filter {
        None => None,
        Some(f) => Some(FilterSpec {
            column: f.column.ok_or_else(|| SettingsError::Missing {
                key: format!("input[{i}].filter.column"),
                why: "a filter keeps the rows whose column holds one of its values",
            })?,
            values: f.values.ok_or_else(|| SettingsError::Missing {
                key: format!("input[{i}].filter.values"),
                why: "a filter keeps the rows whose column holds one of its values",
            })?,
        }),
    };
    if format == Some(InputFormat::PaperList)
        && (o.text.is_some() || o.id.is_some() || o.time.is_some() || o.label.is_some())
    {
        return Err(SettingsError::ColumnsOfPaperList(i));
    }
    Ok(InputSpec {
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

    fn resolve(toml: &str) -> Result<Settings, SettingsError> {
        let o: Options = toml::from_str(toml).unwrap();
        Settings::resolve(o, Path::new("pipelines/p.toml"))
    }

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
    fn defaults_come_from_the_stages() {
        let s = resolve("[[input]]\npath = \"a.csv\"\n").unwrap();
        assert_eq!(s.tokenize, TokenizerParams::new());
        assert_eq!(s.cluster, ClusterParams::new());
        assert_eq!(s.describe, DescribeParams::default());
        assert_eq!(s.inputs[0].resolved, PathBuf::from("pipelines/a.csv"));
        assert_eq!(s.output.dir, PathBuf::from("output/p"));
        // k is automatic up to 20, so the reduction is sized for 20 topics.
        assert_eq!(
            s.reduce,
            ReduceParams::new().dims(100).seed(42).cap_dims(true)
        );
    }

    #[test]
    fn one_range_for_chart_scale() {
        // charts.scale 0.2 used to pass the pipeline check and fail when the charts were drawn.
        let e = resolve("[[input]]\npath = \"a.csv\"\n[charts]\nscale = 0.2\n").unwrap_err();
        assert!(
            matches!(e, SettingsError::Charts(ChartError::Scale(_))),
            "{e}"
        );
        assert!(e.to_string().starts_with("charts.scale"), "{e}");
        resolve("[[input]]\npath = \"a.csv\"\n[charts]\nscale = 0.25\n").unwrap();
    }

    #[test]
    fn values_are_named_as_the_file_writes_them() {
        let e = resolve("[[input]]\npath = \"a.csv\"\n[trends]\nperiod = \"week\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "trends.period = \"week\" must be year, quarter or month"
        );
        let e = resolve("[[input]]\npath = \"a.csv\"\n[tokenize]\nmin-df = 1.5\n").unwrap_err();
        assert!(e.to_string().starts_with("tokenize.min-df = 1.5"), "{e}");
        let e = resolve("[[input]]\npath = \"a.csv\"\n[cluster]\nk = 0\n").unwrap_err();
        assert!(e.to_string().starts_with("cluster.k cannot be 0"), "{e}");
    }

    #[test]
    fn no_reduction_means_no_refinement() {
        let s = resolve("[[input]]\npath = \"a.csv\"\n[reduce]\nmethod = \"none\"\n").unwrap();
        assert_eq!(s.cluster.refine_iter, 0);
    }
}
