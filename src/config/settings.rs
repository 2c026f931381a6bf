//! Resolved, validated settings: every stage's parameters, built from the pipeline file.
//!
//! `Settings::resolve` maps each key of the file onto the parameters of the stage it governs,
//! one function per section of the file (in [`super::sections`]). The defaults live in the stages
//! (`TokenizerParams::new`, `ClusterParams::new`, ...) and so do the rules: each stage's
//! `check()` runs once, here, and `Settings` carries the checked parameters it yields
//! (`ClusterValidParams`, ...), which the stages take. This file only names keys, turns strings
//! into the stages' enums and resolves paths. The whole struct is written to `run.json`, so a
//! report says exactly how it was made.

use super::error::SettingsError;
use super::options::Options;
use super::resolved::{ChartsSettings, OutputSettings, TopicNames, TrendsSettings};
use super::sections;
use crate::clean::CleanValidParams;
use crate::cluster::ClusterValidParams;
use crate::describe::DescribeValidParams;
use crate::embed::EmbedValidParams;
use crate::ingest::InputSpec;
use crate::layout::MapValidParams;
use crate::reduce::ReduceValidParams;
use crate::tokenize::TokenizerValidParams;
use crate::vectorize::TfIdfValidParams;
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

impl Settings {
    /// Fills in defaults and checks every rule, section by section in the order of the file.
    pub fn resolve(o: Options, pipeline: &Path) -> Result<Settings, SettingsError> {
        let base = pipeline.parent().unwrap_or(Path::new(""));
        let name = sections::name(o.name, pipeline)?;
        let title = o.title.unwrap_or_else(|| name.clone());
        let mut inputs = sections::inputs(o.input, base)?;
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
        let named = sections::named_topics(o.topic)?;
        let cluster = sections::cluster(c, (k, named), seed, reduce.method(), embed.features)?;
        let d = o.describe.unwrap_or_default();
        let describe = sections::describe(&d)?;
        sections::per_class(&describe, &cluster, &mut inputs)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::ChartError;
    use crate::cluster::ClusterParams;
    use crate::describe::DescribeParams;
    use crate::reduce::ReduceParams;
    use crate::tokenize::TokenizerParams;

    fn resolve(toml: &str) -> Result<Settings, SettingsError> {
        let o: Options = toml::from_str(toml).unwrap();
        Settings::resolve(o, Path::new("pipelines/p.toml"))
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
