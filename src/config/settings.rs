//! Resolved, validated settings: every stage's parameters, built from the pipeline file.
//!
//! `Settings::resolve` maps each key of the file onto the parameters of the stage it governs,
//! one function per section of the file (in [`super::sections`]). The defaults live in the stages
//! (`TokenizerParams::new`, `ClusterParams::new`, ...) and so do the rules: each stage's
//! `check()` runs once, here, and `Settings` carries the checked parameters it yields
//! (`ClusterValidParams`, ...), which the stages take. This file only names keys, turns strings
//! into the stages' enums and resolves paths. The whole struct is written to `run.json`, so a
//! report says exactly how it was made.

use super::options::Options;
use super::sections;
use crate::chart::{ChartError, ChartStyle};
use crate::clean::{BoilerplateParamsError, CleanValidParams};
use crate::cluster::{ClusterError, ClusterValidParams};
use crate::describe::names::{Names, NamesError};
use crate::describe::{DescribeParamsError, DescribeValidParams};
use crate::embed::{EmbedError, EmbedValidParams};
use crate::ingest::{InputSpec, OnBadDocument, PeriodUnit};
use crate::layout::{MapParamsError, MapValidParams};
use crate::reduce::{ReduceError, ReduceValidParams};
use crate::tables::OutputFormat;
use crate::tokenize::{TokenizerParamsError, TokenizerValidParams, UserDictionaryError};
use crate::vectorize::{TfIdfError, TfIdfValidParams};
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
    pub clean: CleanValidParams,
    pub tokenize: TokenizerValidParams,
    pub tfidf: TfIdfValidParams,
    pub reduce: ReduceValidParams,
    /// Written only when the features use the sentence model.
    #[serde(skip_serializing_if = "EmbedValidParams::unused")]
    pub embed: EmbedValidParams,
    pub cluster: ClusterValidParams,
    pub describe: DescribeValidParams,
    pub map: MapValidParams,
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
    Clean(#[from] BoilerplateParamsError),
    #[error(transparent)]
    Tokenize(#[from] TokenizerParamsError),
    #[error(transparent)]
    UserDictionary(#[from] UserDictionaryError),
    #[error(transparent)]
    TfIdf(#[from] TfIdfError),
    #[error(transparent)]
    Reduce(#[from] ReduceError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Describe(#[from] DescribeParamsError),
    #[error(transparent)]
    Map(#[from] MapParamsError),
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

impl Settings {
    /// Fills in defaults and checks every rule, section by section in the order of the file.
    pub fn resolve(o: Options, pipeline: &Path) -> Result<Settings, SettingsError> {
        let base = pipeline.parent().unwrap_or(Path::new(""));
        let name = sections::name(o.name, pipeline)?;
        let title = o.title.unwrap_or_else(|| name.clone());
        let inputs = sections::inputs(o.input, base)?;
        let clean = sections::clean(o.clean.unwrap_or_default())?;
        let t = o.tokenize.unwrap_or_default();
        let tokenize = sections::tokenize(&t, base)?;
        let tfidf = sections::tfidf(&t, o.tfidf.unwrap_or_default())?;
        let mut c = o.cluster.unwrap_or_default();
        let embed = sections::embed(o.embed.unwrap_or_default(), c.features.take(), base)?;
        let k = sections::k_choice(&c)?;
        // `cluster.seed` seeds the reduction too.
        let seed = c.seed.unwrap_or(crate::cluster::DEFAULT_SEED);
        let reduce = sections::reduce(o.reduce.unwrap_or_default(), k, seed)?;
        let cluster = sections::cluster(c, k, seed, reduce.method(), embed.features)?;
        let d = o.describe.unwrap_or_default();
        let describe = sections::describe(&d)?;
        let names = sections::names(d.names, base)?;
        let map = sections::map(o.map.unwrap_or_default())?;
        let trends = sections::trends(o.trends.unwrap_or_default())?;
        let charts = sections::charts(o.charts.unwrap_or_default(), &title)?;
        let output = sections::output(o.output.unwrap_or_default(), &name, base)?;
        Ok(Settings {
            pipeline: pipeline.to_path_buf(),
            name,
            title,
            inputs,
            clean,
            tokenize,
            tfidf,
            reduce,
            embed,
            cluster,
            describe,
            map,
            names,
            trends,
            charts,
            output,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterParams;
    use crate::describe::DescribeParams;
    use crate::reduce::ReduceParams;
    use crate::tokenize::TokenizerParams;

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
    fn issue_20_stop_words_take_a_list_and_languages_their_own_list() {
        use crate::tokenize::StopWordList;
        let t = |body: &str| {
            resolve(&format!(
                "[[input]]\npath = \"a.csv\"\n[tokenize]\n{body}\n"
            ))
        };
        let off = t("stop-words = []").unwrap().tokenize;
        assert_eq!(
            (off.stop_words(), off.extra_stop_words()),
            (StopWordList::None, &[][..])
        );
        let listed = t("stop-words = [\"foo\"]\nextra-stop-words = [\"bar\"]")
            .unwrap()
            .tokenize;
        assert_eq!(listed.stop_words(), StopWordList::None);
        assert_eq!(listed.extra_stop_words(), ["foo", "bar"]);
        let de = t("language = \"german\"").unwrap().tokenize;
        assert_eq!(de.stop_words(), StopWordList::StopwordsIso);
        let e = t("stop-words = \"klingon\"").unwrap_err().to_string();
        assert!(
            e.contains("tokenize.stop-words") && e.contains("a list of words"),
            "{e}"
        );
        let e = t("language = \"chinese\"\nuser-dictionary = \"nowhere.txt\"").unwrap_err();
        assert!(e.to_string().contains("pipelines/nowhere.txt"), "{e}");
    }

    #[test]
    fn issue_39_tokenize_chinese_names_what_han_text_is_cut_into() {
        use crate::tokenize::ChineseTerms;
        let t = |body: &str| {
            resolve(&format!(
                "[[input]]\npath = \"a.csv\"\n[tokenize]\n{body}\n"
            ))
        };
        let zh = t("language = \"chinese\"").unwrap().tokenize;
        assert_eq!(zh.chinese(), ChineseTerms::DEFAULT);
        let chars = t("language = \"chinese\"\nchinese = \"characters\"")
            .unwrap()
            .tokenize;
        assert_eq!(chars.chinese(), ChineseTerms::Characters);
        let e = t("language = \"chinese\"\nchinese = \"bigrams\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tokenize.chinese") && e.contains("\"words+characters+bigrams\""),
            "{e}"
        );
        let e = t("chinese = \"words\"").unwrap_err().to_string();
        assert!(e.contains("tokenize.chinese is for Chinese"), "{e}");
    }

    #[test]
    fn defaults_come_from_the_stages() {
        let s = resolve("[[input]]\npath = \"a.csv\"\n").unwrap();
        assert_eq!(s.tokenize, TokenizerParams::new().check().unwrap());
        assert_eq!(s.cluster, ClusterParams::new().check().unwrap());
        assert_eq!(s.describe, DescribeParams::new().check().unwrap());
        assert_eq!(s.inputs[0].resolved, PathBuf::from("pipelines/a.csv"));
        assert_eq!(s.output.dir, PathBuf::from("output/p"));
        // k is automatic up to 20, so the reduction is sized for 20 topics.
        assert_eq!(
            s.reduce,
            ReduceParams::new()
                .dims(100)
                .seed(42)
                .cap_dims(true)
                .check()
                .unwrap()
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
        assert_eq!(s.cluster.refine_iter(), 0);
    }
}
