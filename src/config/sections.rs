//! Each section of a pipeline file resolved into the parameters of the stage it governs: one
//! function per section, named after it, documenting the keys it reads. Unset keys keep the
//! stage's default ([`Given::given`]); each stage's parameters are checked here, once, by the
//! stage's own `check()`.

use super::error::SettingsError;
use super::options::{
    ChartsOptions, CleanOptions, ClusterOptions, DescribeOptions, EmbedOptions, InputOptions,
    KOption, MapOptions, OutputOptions, ReduceOptions, StopWordsOption, TfIdfOptions,
    TokenizeOptions, TopicOptions, TrendsOptions,
};
use super::resolved::{normalize, ChartsSettings, OutputSettings, TopicNames, TrendsSettings};
use crate::chart::ChartStyle;
use crate::clean::{BoilerplateParams, CleanParams, CleanValidParams};
use crate::cluster::{self, ClusterError, ClusterParams, ClusterValidParams, KChoice, NamedTopic};
use crate::describe::names;
use crate::describe::{DescribeParams, DescribeValidParams};
use crate::embed::registry::ModelRef;
use crate::embed::{EmbedMethod, EmbedParams, EmbedValidParams, FeatureSpace};
use crate::ingest::{FilterSpec, InputFormat, InputSpec, OnBadDocument, PeriodUnit};
use crate::layout::{MapMethod, MapParams, MapValidParams};
use crate::reduce::{self, ReduceError, ReduceMethod, ReduceParams, ReduceValidParams};
use crate::tables::OutputFormat;
use crate::tokenize::{
    ChineseTerms, StopWordList, TokenizerParams, TokenizerValidParams, UserDictionary,
};
use crate::vectorize::{Norm, TfIdfParams, TfIdfValidParams};
use std::path::{Path, PathBuf};

/// Reads an enumerated value, or says which values the key takes.
fn choice<T>(
    key: &str,
    value: Option<String>,
    default: T,
    parse: impl Fn(&str) -> Option<T>,
    expected: &'static str,
) -> Result<T, SettingsError> {
    Ok(given_choice(key, value, parse, expected)?.unwrap_or(default))
}

/// [`choice`] where leaving the key out is itself a setting (the stage decides): `None` then.
fn given_choice<T>(
    key: &str,
    value: Option<String>,
    parse: impl Fn(&str) -> Option<T>,
    expected: &'static str,
) -> Result<Option<T>, SettingsError> {
    value
        .map(|v| {
            parse(&v).ok_or(SettingsError::BadChoice {
                key: key.into(),
                value: v,
                expected,
            })
        })
        .transpose()
}

/// A stage builder's setter applied when the pipeline file gives the key; without it the
/// stage's default stays.
trait Given: Sized {
    fn given<T>(self, value: Option<T>, set: impl FnOnce(Self, T) -> Self) -> Self {
        match value {
            Some(v) => set(self, v),
            None => self,
        }
    }
}

impl<P> Given for P {}

/// `name`: the output folder's name (default: the pipeline file's stem), letters, digits, `-`
/// and `_` only.
pub(super) fn name(name: Option<String>, pipeline: &Path) -> Result<String, SettingsError> {
    let name = match name {
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
    Ok(name)
}

/// Every `[[input]]` (at least one), each as the ingest stage reads it.
pub(super) fn inputs(
    inputs: Vec<InputOptions>,
    base: &Path,
) -> Result<Vec<InputSpec>, SettingsError> {
    if inputs.is_empty() {
        return Err(SettingsError::NoInput);
    }
    inputs
        .into_iter()
        .enumerate()
        .map(|(i, inp)| input(i, inp, base))
        .collect()
}

/// One `[[input]]`: `path` (required; resolved against the pipeline file's folder), `format`,
/// the columns, `filter.column` and `filter.values` (both or neither), `limit`.
fn input(i: usize, o: InputOptions, base: &Path) -> Result<InputSpec, SettingsError> {
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
        class: None,
        batch: o.batch,
        filter,
        limit: o.limit,
    })
}

/// `[clean]`: `boilerplate`, `boilerplate-min-docs`, `keep`, `links`.
pub(super) fn clean(c: CleanOptions) -> Result<CleanValidParams, SettingsError> {
    let boilerplate = BoilerplateParams::new()
        .given(c.boilerplate, BoilerplateParams::enabled)
        .min_docs(c.boilerplate_min_docs)
        .given(c.keep, BoilerplateParams::keep);
    Ok(CleanParams::new()
        .boilerplate(boilerplate)
        .given(c.links, CleanParams::links)
        .check()?)
}

/// `[map]`: `method` (`umap` or `linear`), `neighbours`, `sample`.
pub(super) fn map(m: MapOptions) -> Result<MapValidParams, SettingsError> {
    let method = choice(
        "map.method",
        m.method,
        MapMethod::Umap,
        |s: &str| match s {
            "umap" => Some(MapMethod::Umap),
            "linear" => Some(MapMethod::Linear),
            _ => None,
        },
        "\"umap\" or \"linear\"",
    )?;
    Ok(MapParams::new()
        .method(method)
        .given(m.neighbours, MapParams::neighbours)
        .given(m.sample, MapParams::sample)
        .check()?)
}

/// `[tokenize]`'s tokenizer keys: `language` (a name of `tokenize::languages`, or `auto`),
/// `stop-words` (`english`, `stopwords-iso`, `none`, or a list of words), `stem`,
/// `extra-stop-words`, `min-length`, `max-length`, `user-dictionary` (relative to `base`) and
/// `chinese` (a name of [`ChineseTerms`]).
pub(super) fn tokenize(
    t: &TokenizeOptions,
    base: &Path,
) -> Result<TokenizerValidParams, SettingsError> {
    let (stop_words, listed) = match &t.stop_words {
        None => (None, Vec::new()),
        Some(StopWordsOption::List(words)) => (Some(StopWordList::None), words.clone()),
        Some(StopWordsOption::Named(list)) => (
            Some(choice(
                "tokenize.stop-words",
                Some(list.clone()),
                StopWordList::English,
                StopWordList::from_name,
                "\"english\", \"stopwords-iso\", \"none\" or a list of words",
            )?),
            Vec::new(),
        ),
    };
    let extra = listed
        .into_iter()
        .chain(t.extra_stop_words.clone().unwrap_or_default());
    let dictionary = match &t.user_dictionary {
        None => None,
        Some(file) => Some(UserDictionary::read(&normalize(&base.join(file)), file)?),
    };
    let chinese = match &t.chinese {
        None => None,
        Some(name) => Some(choice(
            "tokenize.chinese",
            Some(name.clone()),
            ChineseTerms::DEFAULT,
            ChineseTerms::from_name,
            ChineseTerms::NAMES,
        )?),
    };
    Ok(TokenizerParams::new()
        .given(t.language.as_deref(), TokenizerParams::language)
        .given(chinese, TokenizerParams::chinese)
        .given(stop_words, TokenizerParams::stop_words)
        .given(t.stem, TokenizerParams::stem)
        .extra_stop_words(extra.collect())
        .given(t.min_length, TokenizerParams::min_length)
        .given(t.max_length, TokenizerParams::max_length)
        .user_dictionary(dictionary)
        .check()?)
}

/// `[tokenize]`'s vocabulary keys (`min-df`, `max-df`, `max-features`, `ngram-range`) and
/// `[tfidf]`: `sublinear-tf`, `smooth-idf`, `norm` (`l2`, `l1` or `none`).
pub(super) fn tfidf(
    t: &TokenizeOptions,
    f: TfIdfOptions,
) -> Result<TfIdfValidParams, SettingsError> {
    let norm = choice(
        "tfidf.norm",
        f.norm,
        Norm::L2,
        Norm::from_name,
        "l2, l1 or none",
    )?;
    Ok(TfIdfParams::new()
        .min_df(t.min_df)
        .max_features(t.max_features)
        .given(t.max_df, TfIdfParams::max_df)
        .given(t.ngram_range, TfIdfParams::ngram_range)
        .given(f.sublinear_tf, TfIdfParams::sublinear_tf)
        .given(f.smooth_idf, TfIdfParams::smooth_idf)
        .norm(norm)
        .check()?)
}

/// `cluster.k`: a number, or `"auto"` (the default) over `k-min..=k-max`.
pub(super) fn k_choice(c: &ClusterOptions) -> Result<KChoice, SettingsError> {
    let (k_min, k_max) = (
        c.k_min.unwrap_or(cluster::DEFAULT_K_RANGE.0),
        c.k_max.unwrap_or(cluster::DEFAULT_K_RANGE.1),
    );
    Ok(match &c.k {
        None => KChoice::Auto { k_min, k_max },
        Some(KOption::Named(s)) if s == "auto" => KChoice::Auto { k_min, k_max },
        Some(KOption::Named(s)) => {
            return Err(SettingsError::BadChoice {
                key: "cluster.k".into(),
                value: s.clone(),
                expected: "a number or \"auto\"",
            })
        }
        Some(KOption::Fixed(k)) if *k <= 0 => return Err(ClusterError::ZeroK.into()),
        Some(KOption::Fixed(k)) => KChoice::Fixed { k: *k as usize },
    })
}

/// `[reduce]`: `method` (`none`, `lsa` or `random-projection`), `dims`, `n-iter`, seeded with
/// `cluster.seed`. Dimensions default to five per topic (k-max when k is automatic), and are
/// lowered to what a small corpus can give.
pub(super) fn reduce(
    r: ReduceOptions,
    k: KChoice,
    seed: u64,
) -> Result<ReduceValidParams, SettingsError> {
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
    Ok(ReduceParams::new()
        .method(method)
        .dims(r.dims.unwrap_or_else(|| reduce::dims_for_topics(k.max_k())))
        .n_iter(r.n_iter)
        .seed(seed)
        .cap_dims(true)
        .check()?)
}

/// `[embed]` with `[cluster] features`: `model` (a known model by name, or a folder relative to the pipeline file),
/// `method`, `weight`, `dims`, `batch`, `max-length`, `cache`, `cache-mib`. The folder is opened and checked
/// here, so a bad one fails before any input is read.
pub(super) fn embed(
    e: EmbedOptions,
    features: Option<String>,
    base: &Path,
) -> Result<EmbedValidParams, SettingsError> {
    let features = given_choice(
        "cluster.features",
        features,
        FeatureSpace::parse,
        "tfidf, embedding or both",
    )?;
    let method = given_choice(
        "embed.method",
        e.method,
        EmbedMethod::parse,
        "transformer or static",
    )?;
    let precision = given_choice(
        "embed.precision",
        e.precision,
        crate::embed::Precision::parse,
        "int8 or f32",
    )?;
    // `method = "static"` alone runs the default static model.
    let model = e.model.or_else(|| {
        (method == Some(EmbedMethod::Static)).then(|| crate::embed::DEFAULT_STATIC_MODEL.into())
    });
    let model = match model {
        None => None,
        Some(spec) => Some(ModelRef::parse(&spec, base).map_err(SettingsError::ModelCache)?),
    };
    Ok(EmbedParams::new()
        .given(method, EmbedParams::method)
        .given(model, |p, m| match m {
            ModelRef::Folder(dir) => p.model_ref(ModelRef::Folder(normalize(&dir))),
            named => p.model_ref(named),
        })
        .given(features, EmbedParams::features)
        .given(e.weight, EmbedParams::weight)
        .given(e.batch, EmbedParams::batch)
        .given(e.max_length, EmbedParams::max_length)
        .given(e.dims, EmbedParams::dims)
        .given(precision, EmbedParams::precision)
        .given(e.cache, EmbedParams::cache)
        .given(e.cache_mib, EmbedParams::cache_mib)
        .check()?)
}

/// `[cluster]`: k (see [`k_choice`]), `seed`, `runs`, `max-iter`, `tolerance`,
/// `minibatch-above`, `silhouette-sample`, `refine-iter`, `fit-sample`. The refinement works on
/// the TF-IDF vectors: without a reduction (`method = "none"`) k-means already ran on them, so
/// there is nothing to refine; and topics found in sentence vectors are kept as found
/// (refining them on words would undo what the embedding saw).
pub(super) fn cluster(
    c: ClusterOptions,
    (k, named): (KChoice, Vec<NamedTopic>),
    seed: u64,
    method: ReduceMethod,
    features: FeatureSpace,
) -> Result<ClusterValidParams, SettingsError> {
    let mut params = ClusterParams::new()
        .named(named, c.min_similarity, features.embeds())
        .k(k)
        .seed(seed)
        .runs(c.runs)
        .given(c.max_iter, ClusterParams::max_iter)
        .given(c.tolerance, ClusterParams::tolerance)
        .given(c.minibatch_above, ClusterParams::minibatch_above)
        .given(c.silhouette_sample, ClusterParams::silhouette_sample)
        .given(c.refine_iter, ClusterParams::refine_iter)
        .fit_sample(c.fit_sample);
    if method == ReduceMethod::None || features.embeds() {
        params = params.refine_iter(0);
    }
    Ok(params.check()?)
}

/// `[[topic]]`: the named topics, in the file's order; one without a name is refused with its
/// number (the other rules are the cluster stage's, [`crate::cluster::named::check`]).
pub(super) fn named_topics(topics: Vec<TopicOptions>) -> Result<Vec<NamedTopic>, SettingsError> {
    topics
        .into_iter()
        .enumerate()
        .map(|(i, t)| match t.name {
            Some(name) => Ok(NamedTopic {
                name,
                seeds: t.seeds.unwrap_or_default(),
                min_similarity: t.min_similarity,
            }),
            None => {
                Err(ClusterError::from(crate::cluster::NamedError::Blank { number: i + 1 }).into())
            }
        })
        .collect()
}

/// `[describe]`: `top-terms`, `label-terms`, `phrases`, `representatives`,
/// `reduce-frequent-words`, `min-spread`, `diversity`, `label-max-share`, `merge-to`,
/// `per-class`.
pub(super) fn describe(d: &DescribeOptions) -> Result<DescribeValidParams, SettingsError> {
    Ok(DescribeParams::new()
        .given(d.top_terms, DescribeParams::top_terms)
        .given(d.label_terms, DescribeParams::label_terms)
        .given(d.phrases, DescribeParams::phrases)
        .given(d.representatives, DescribeParams::representatives)
        .given(
            d.reduce_frequent_words,
            DescribeParams::reduce_frequent_words,
        )
        .given(d.min_spread, DescribeParams::min_spread)
        .given(d.diversity, DescribeParams::diversity)
        .given(d.label_max_share, DescribeParams::label_max_share)
        .merge_to(d.merge_to)
        .per_class(d.per_class.clone())
        .check()?)
}

/// `describe.per-class`: every input reads the class column (a paper list has none), and a
/// streaming run, which never holds every document, refuses it.
pub(super) fn per_class(
    describe: &DescribeValidParams,
    cluster: &ClusterValidParams,
    inputs: &mut [InputSpec],
) -> Result<(), SettingsError> {
    let Some(column) = describe.per_class() else {
        return Ok(());
    };
    if cluster.fit_sample().is_some() {
        return Err(SettingsError::PerClassStreamed);
    }
    for input in inputs {
        input.class = Some(column.to_string());
    }
    Ok(())
}

/// `describe.names`: a names file relative to the pipeline file, read and parsed.
pub(super) fn names(
    file: Option<String>,
    base: &Path,
) -> Result<Option<TopicNames>, SettingsError> {
    let Some(file) = file else {
        return Ok(None);
    };
    let path = normalize(&base.join(&file));
    let text = std::fs::read_to_string(&path).map_err(|source| SettingsError::NamesRead {
        path: path.clone(),
        source,
    })?;
    let names = names::parse(&text).map_err(|source| SettingsError::Names {
        path: path.clone(),
        source,
    })?;
    Ok(Some(TopicNames { file, path, names }))
}

/// `[trends]`: `period` (`year`, `quarter` or `month`), `top` (at least 1).
pub(super) fn trends(tr: TrendsOptions) -> Result<TrendsSettings, SettingsError> {
    Ok(TrendsSettings {
        period: choice(
            "trends.period",
            tr.period,
            PeriodUnit::default(),
            PeriodUnit::from_name,
            "year, quarter or month",
        )?,
        top: tr.top.unwrap_or(8).max(1),
    })
}

/// `[charts]`: `enabled`, `width`, `height`, `scale`; the charts are titled `title`.
pub(super) fn charts(ch: ChartsOptions, title: &str) -> Result<ChartsSettings, SettingsError> {
    let defaults = ChartStyle::default();
    let style = ChartStyle {
        width: ch.width.unwrap_or(defaults.width),
        height: ch.height.unwrap_or(defaults.height),
        scale: ch.scale.unwrap_or(defaults.scale),
        title: title.to_string(),
    };
    style.check()?;
    Ok(ChartsSettings {
        enabled: ch.enabled.unwrap_or(true),
        style,
    })
}

/// `[output]`: `dir` (default `output/<name>`), `on-bad-document` (`skip` or `fail`),
/// `previous` (default `dir/latest`; `"none"` for none), `formats`, `workbook-documents`.
pub(super) fn output(
    out: OutputOptions,
    name: &str,
    base: &Path,
) -> Result<OutputSettings, SettingsError> {
    let dir_as_written = out.dir.clone().unwrap_or_else(|| format!("output/{name}"));
    let dir = match &out.dir {
        Some(d) => normalize(&base.join(d)),
        None => PathBuf::from("output").join(name),
    };
    let on_bad_document = choice(
        "output.on-bad-document",
        out.on_bad_document,
        OnBadDocument::default(),
        OnBadDocument::from_name,
        "skip or fail",
    )?;
    let formats = formats(out.formats)?;
    let workbook_documents = out
        .workbook_documents
        .unwrap_or(crate::workbook::DEFAULT_DOCUMENTS);
    if !(1..=crate::workbook::MAX_ROWS).contains(&workbook_documents) {
        return Err(SettingsError::WorkbookDocuments(workbook_documents));
    }
    Ok(OutputSettings {
        previous: match out.previous.as_deref() {
            Some("none") => None,
            Some(p) => Some(normalize(&base.join(p))),
            None => Some(dir.join("latest")),
        },
        previous_as_written: out.previous,
        dir_as_written,
        dir,
        on_bad_document,
        formats,
        workbook_documents,
    })
}

/// `output.formats`: any of csv, xlsx and parquet, each once (default csv and xlsx).
fn formats(names: Option<Vec<String>>) -> Result<Vec<OutputFormat>, SettingsError> {
    let Some(names) = names else {
        return Ok(OutputFormat::DEFAULT.to_vec());
    };
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
    Ok(formats)
}
