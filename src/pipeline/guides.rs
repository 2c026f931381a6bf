//! The named topics' vectors (`[[topic]]`), in the space k-means clusters: what the guided fit
//! starts from and the describe stage names topics by.
//!
//! Each named topic's name and seeds are made into vectors as the documents were: without a
//! sentence model, the name and seeds as one short document through the fit's tokenizer,
//! TF-IDF and reduction; with one, also the mean of the sentence vectors of the name and of
//! each seed (BERTopic's seeded topics average their seed words' embeddings), combined with
//! the first as the documents' two parts are (`[cluster] features`). Seeds none of whose words
//! the corpus has are named in a warning: they add nothing to the TF-IDF part.

use super::prepare::Prepared;
use super::PipelineError;
use crate::cluster::guided::Guides;
use crate::cluster::{ClusterError, NamedError};
use crate::config::Settings;
use crate::embed::{FeatureSpace, Loaded};
use crate::progress::Progress;
use crate::reduce::Reducer;
use crate::tokenize::{Analyzer, TokenizedCorpus};
use crate::vectorize::TfIdf;
use ndarray::{Array2, Axis};

/// The named topics' vectors for features `space`, or `None` without named topics; the
/// sentence model is the fit's `model`.
pub(super) fn guides(
    settings: &Settings,
    prepared: &Prepared,
    (tfidf, reducer, model): (&TfIdf, &Reducer, &Loaded),
    space: FeatureSpace,
    progress: &Progress,
) -> Result<Option<Guides>, PipelineError> {
    let named = settings.cluster.named();
    if named.is_empty() {
        return Ok(None);
    }
    let texts: Vec<String> = named
        .iter()
        .map(|t| t.texts().collect::<Vec<_>>().join(" "))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens = TokenizedCorpus::build_texts(&refs, &Analyzer::new(&prepared.tokenizer));
    for w in unknown_words(settings, &tokens, tfidf) {
        progress.warn(&w);
    }
    let lsa = reducer.transform(&tfidf.transform(&tokens))?;
    if !space.embeds() {
        if let Some(j) = (0..lsa.nrows()).find(|&j| lsa.row(j).iter().all(|&v| v == 0.0)) {
            let name = named[j].name.clone();
            return Err(ClusterError::from(NamedError::Unknown { name }).into());
        }
    }
    let sentences = match space.embeds() {
        true => Some(sentence_means(settings, model)?),
        false => None,
    };
    let mut vectors =
        settings
            .embed
            .features(space, lsa, sentences.map(crate::embed::Sentences::of));
    crate::norm::unit_rows(vectors.view_mut());
    Ok(Some(Guides {
        vectors,
        thresholds: settings.cluster.thresholds(),
    }))
}

/// For each named topic whose words (name and seeds) the corpus's vocabulary partly lacks, a
/// warning naming them.
fn unknown_words(settings: &Settings, tokens: &TokenizedCorpus, tfidf: &TfIdf) -> Vec<String> {
    let known = tfidf.term_features(tokens);
    settings
        .cluster
        .named()
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let mut missing: Vec<&str> = tokens
                .doc_terms(i)
                .map(|t| t as usize)
                .filter(|&t| known[t] == u32::MAX)
                .map(|t| tokens.terms[t].surface.as_str())
                .collect();
            missing.dedup();
            (!missing.is_empty()).then(|| {
                format!(
                    "named topic {:?}: the corpus has no {} (its vector is made of the other words{})",
                    t.name,
                    missing.join(", "),
                    if settings.embed.features.embeds() { " and the sentence model" } else { "" }
                )
            })
        })
        .collect()
}

/// Each named topic's sentence vector: the unit mean of its name's and seeds' vectors, by the
/// fit's `model` (loaded already when the documents needed it).
fn sentence_means(settings: &Settings, model: &Loaded) -> Result<Array2<f32>, PipelineError> {
    let named = settings.cluster.named();
    let texts: Vec<&str> = named.iter().flat_map(|t| t.texts()).collect();
    let bar = indicatif::ProgressBar::hidden();
    let (each, _) = crate::embed::sentence_vectors(
        &settings.embed,
        &texts,
        (None, model, 0),
        crate::progress::warn,
        &bar,
    )?;
    // Each text's vector at unit length (a static table gives sums), then their mean.
    let each = each.unit();
    let each = each.view();
    let mut out = Array2::<f32>::zeros((named.len(), each.ncols()));
    let mut at = 0;
    for (t, mut row) in named.iter().zip(out.axis_iter_mut(Axis(0))) {
        let n = t.texts().count();
        for i in at..at + n {
            row += &each.row(i);
        }
        at += n;
        crate::norm::unit(row);
    }
    Ok(out)
}
