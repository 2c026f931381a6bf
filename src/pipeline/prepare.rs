//! Prepare: ingest -> clean -> (embed) -> tokenize, for `run` and `assign` alike.
//!
//! With a sentence model ([`Embedder`]) the cleaned texts are embedded before the tokenizer
//! cuts each one to its snippet, so no second copy of the whole texts is kept for the model
//! (about 100 MB for 75,000 abstracts).
//!
//! [`Prepared`] is the one owner of row alignment: the corpus's documents, the tokenized
//! documents and the sentence vectors stay in step, and every document left out on the way
//! (empty after cleaning, or without a word the vocabulary knows) is dropped here, recorded
//! with its file and row, or stops the run in `fail` mode.

use super::PipelineError;
use crate::clean::{CleanBuffers, CleanTally, CleanValidParams, Cleaned, TextCleaner};
use crate::embed::{EmbedValidParams, Embedded, Loaded, Sentences};
use crate::ingest::{
    self, Corpus, Document, Duplicate, InputSpec, OnBadDocument, PeriodUnit, Skipped,
};
use crate::progress::{thousands, Progress};
use crate::tokenize::{languages, Analyzer, TokenizedCorpus, TokenizerValidParams};
use rayon::prelude::*;
use std::borrow::Cow;

/// Why documents were left out: names the stage that found them unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftOut {
    /// Nothing but boilerplate, rights statements, links or e-mail addresses.
    OnlyBoilerplate,
    /// Nothing but stop words, numbers or punctuation after cleaning.
    NoWords,
    /// None of its words is in the fitted vocabulary (min-df / max-df).
    NotInVocabulary,
    /// None of its words is in a saved model's vocabulary.
    NotInModel,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LeftOut::OnlyBoilerplate => {
                "nothing but boilerplate, links or e-mail addresses (see clean in run.json)"
            }
            LeftOut::NoWords => "no words left after cleaning and stop-word removal",
            LeftOut::NotInVocabulary => "none of its words is in the vocabulary (min-df / max-df)",
            LeftOut::NotInModel => "no word in the model's vocabulary",
        })
    }
}

/// Where the clean stage's rules come from.
#[derive(Debug, Clone, Copy)]
pub enum Cleaning<'a> {
    /// Fitted on the documents being prepared (a run, a stream's sample).
    Fit(&'a CleanValidParams),
    /// Already fitted (a saved model, a stream's sample), applied as they are.
    Apply(&'a TextCleaner),
}

/// How a preparation embeds the documents' whole cleaned texts (`[embed]` with a model): the
/// parameters, the vector cache's folder (a fit's; placement keeps none), the model (loaded
/// on first use, [`Loaded`]) and the columns each vector leaves before it for the LSA part
/// ([`Sentences`]).
#[derive(Debug, Clone, Copy)]
pub struct Embedder<'a> {
    pub params: &'a EmbedValidParams,
    pub cache: Option<&'a std::path::Path>,
    pub loaded: &'a Loaded,
    pub lead: usize,
}

impl<'a> Embedder<'a> {
    /// An embedder when the parameters read the texts (their features use the model).
    pub fn of(
        params: Option<&'a EmbedValidParams>,
        cache: Option<&'a std::path::Path>,
        loaded: &'a Loaded,
        lead: usize,
    ) -> Option<Embedder<'a>> {
        params.filter(|p| p.reads_texts()).map(|params| Embedder {
            params,
            cache,
            loaded,
            lead,
        })
    }

    /// Loads a static model now ([`Loaded::warm`]), beside other work.
    fn warm(&self) {
        if let Some(folder) = &self.params.folder {
            self.loaded.warm(folder);
        }
    }

    /// The documents' sentence vectors, from their texts as they are now (cleaned, whole).
    fn embed(
        &self,
        corpus: &Corpus,
        bar: &indicatif::ProgressBar,
    ) -> Result<(Sentences, Embedded), PipelineError> {
        let texts: Vec<&str> = corpus.documents.iter().map(|d| d.text.as_str()).collect();
        Ok(crate::embed::sentence_vectors(
            self.params,
            &texts,
            (self.cache, self.loaded, self.lead),
            crate::progress::warn,
            bar,
        )?)
    }
}

/// Documents, cleaned and tokenized, row for row.
#[derive(Debug)]
pub struct Prepared {
    pub corpus: Corpus,
    pub tokens: TokenizedCorpus,
    /// The clean stage's rules when fitted here (`Cleaning::Fit`), for the model; `None` when
    /// a model's were applied.
    pub fitted: Option<TextCleaner>,
    /// What the rules removed from these documents.
    pub cleaned: CleanTally,
    /// Each document's sentence vector, row for row, when prepared with an [`Embedder`].
    pub sentences: Option<Sentences>,
    /// The tokenizer they were tokenized with: `language = "auto"` resolved (see
    /// [`resolve_language`]).
    pub tokenizer: TokenizerValidParams,
    /// What bad documents do: skipped and listed, or the run stops.
    on_bad: OnBadDocument,
}

/// Reads, cleans, embeds (with an `embedder`) and tokenizes every input. Documents with no
/// words left are dropped (or stop the run, see [`Prepared::drop_rows`]). A static model is
/// loaded while the inputs are read.
pub fn prepare(
    inputs: &[InputSpec],
    on_bad: OnBadDocument,
    cleaning: Cleaning<'_>,
    tokenizer: &TokenizerValidParams,
    embedder: Option<Embedder<'_>>,
    progress: &mut Progress,
) -> Result<Prepared, PipelineError> {
    let corpus = std::thread::scope(|s| {
        if let Some(e) = embedder {
            s.spawn(move || e.warm());
        }
        ingest_stage(inputs, on_bad, progress)
    })?;
    prepare_corpus(corpus, on_bad, cleaning, tokenizer, embedder, progress)
}

/// Cleans, embeds (with an `embedder`) and tokenizes documents already read (a chunk of a
/// stream, an Arrow batch).
pub fn prepare_corpus(
    mut corpus: Corpus,
    on_bad: OnBadDocument,
    cleaning: Cleaning<'_>,
    tokenizer: &TokenizerValidParams,
    embedder: Option<Embedder<'_>>,
    progress: &mut Progress,
) -> Result<Prepared, PipelineError> {
    let (cleaner, mut changed) = progress.stage(
        "clean",
        |_| {
            let cleaner = match cleaning {
                Cleaning::Fit(params) => Cow::Owned(fit_cleaner(params, &corpus)),
                Cleaning::Apply(c) => Cow::Borrowed(c),
            };
            let changed = clean_corpus(&mut corpus, &cleaner);
            Ok::<_, PipelineError>((cleaner, changed))
        },
        |(c, ch): &(Cow<'_, TextCleaner>, Changed)| {
            format!(
                "{} docs changed, {} repeated segments",
                thousands(ch.tally.documents_changed as usize),
                c.boilerplate.repeated.len()
            )
        },
    )?;
    for k in &cleaner.boilerplate.unmatched_keep {
        progress.warn(&format!(
            "clean.keep entry {k:?} matches no segment of any document"
        ));
    }
    // Said once, when the rules are fitted (not again by every `assign` of the model).
    if let (Cow::Owned(_), Some(b)) = (&cleaner, &cleaner.boilerplate.backed_off) {
        progress.warn(&b.to_string());
    }
    let tokenizer = resolve_language(&corpus, tokenizer, progress);
    let sentences = match embedder {
        Some(e) => Some(
            progress
                .stage(
                    "embed",
                    |bar| {
                        crate::progress::count_on(bar, "embed", "texts");
                        e.embed(&corpus, bar)
                    },
                    |(v, done)| embed_detail(e.params, v, done),
                )?
                .0,
        ),
        None => None,
    };
    let analyzer = Analyzer::new(&tokenizer);
    let tokens = progress.stage(
        "tokenize",
        |_| Ok::<_, PipelineError>(tokenize(&mut corpus, &mut changed, &analyzer)),
        |t: &TokenizedCorpus| format!("{} terms", thousands(t.terms.len())),
    )?;
    finish(
        (corpus, tokens, sentences),
        tokenizer,
        on_bad,
        match cleaner {
            Cow::Owned(fitted) => Some(fitted),
            Cow::Borrowed(_) => None,
        },
        changed,
        progress,
    )
}

/// The embed stage's line: how many documents ran through the model, how many came from the
/// cache, and the rate.
fn embed_detail(params: &EmbedValidParams, v: &Sentences, done: &Embedded) -> String {
    use crate::embed::{EmbedMethod, Precision};
    let how = match (params.method, params.folder.as_ref().map(|f| f.precision())) {
        (EmbedMethod::Transformer, Some(Precision::Int8)) => {
            let kernel = crate::embed::int8::Kernel::best().map_or("", |k| k.name());
            format!("transformer, int8 on {kernel}")
        }
        (EmbedMethod::Transformer, _) => "transformer, f32".into(),
        (method, _) => method.name().into(),
    };
    let mut s = format!(
        "{} dims, {} texts embedded ({how})",
        v.view().ncols(),
        thousands(done.encoded),
    );
    if done.encoded > 0 && done.encode_seconds > 0.0 {
        s.push_str(&format!(
            " at {:.1} texts/s (model loaded in {:.2} s)",
            done.encoded as f64 / done.encode_seconds,
            done.load_seconds
        ));
    }
    if done.cached > 0 {
        s.push_str(&format!(", {} from the cache", thousands(done.cached)));
    }
    s
}

/// Tokenizes the cleaned texts. Chunk by chunk, as the tokenizer finishes with them
/// ([`TokenizedCorpus::build_releasing`]), changed documents get their original text back
/// (for their snippet and exports) and every text is cut to its snippet: from there on the
/// text is only shown, and the tokens carry the rest. So the full texts, most of the memory
/// going into the stage, are freed during it rather than after.
fn tokenize(corpus: &mut Corpus, changed: &mut Changed, analyzer: &Analyzer) -> TokenizedCorpus {
    // Each chunk's first row and its changed documents' originals (sorted by row).
    let mut rest: &mut [(usize, String)] = &mut changed.originals;
    let states: Vec<(usize, &mut [(usize, String)])> =
        TokenizedCorpus::chunk_bounds(corpus.documents.len())
            .map(|rows| {
                let split = rest.partition_point(|(row, _)| *row < rows.end);
                let (chunk, tail) = std::mem::take(&mut rest).split_at_mut(split);
                rest = tail;
                (rows.start, chunk)
            })
            .collect();
    TokenizedCorpus::build_releasing(
        &mut corpus.documents,
        analyzer,
        states,
        |docs, (first, originals)| {
            restore_originals(first, docs, originals);
            crate::ingest::shorten_texts(docs, crate::ingest::SNIPPET_CHARS + 1);
        },
    )
}

/// Seeds the sample `language = "auto"` detects the language on: fixed, so runs repeat.
pub const DETECTION_SEED: u64 = 20;

/// `tokenizer` with `language = "auto"` resolved on the cleaned documents (a seeded sample, see
/// [`languages::detect_sample`]), saying on stderr what it chose and how sure it is. Any other
/// language is kept as it is.
pub fn resolve_language(
    corpus: &Corpus,
    tokenizer: &TokenizerValidParams,
    progress: &Progress,
) -> TokenizerValidParams {
    if tokenizer.language() != languages::AUTO {
        return tokenizer.clone();
    }
    let texts: Vec<&str> = corpus.documents.iter().map(|d| d.text.as_str()).collect();
    let detection = languages::detect_sample(&texts, DETECTION_SEED);
    progress.info(&match &detection {
        Some(d) => format!("language: {d}"),
        None => "language: auto found no text to tell the language from; using english".into(),
    });
    tokenizer.resolved(detection)
}

/// Cleans, embeds and tokenizes one chunk of a stream with `analyzer`, as [`prepare_corpus`]
/// does but without recording stages (a chunk is a small part of one long stage). Documents
/// left out are recorded in the chunk's skipped list (or fail, in `fail` mode).
pub fn prepare_chunk(
    mut corpus: Corpus,
    on_bad: OnBadDocument,
    cleaner: &TextCleaner,
    analyzer: &Analyzer,
    tokenizer: &TokenizerValidParams,
    embedder: Option<Embedder<'_>>,
) -> Result<Prepared, PipelineError> {
    let mut changed = clean_corpus(&mut corpus, cleaner);
    let bar = indicatif::ProgressBar::hidden();
    let sentences = match embedder {
        Some(e) => Some(e.embed(&corpus, &bar)?.0),
        None => None,
    };
    let tokens = tokenize(&mut corpus, &mut changed, analyzer);
    finish(
        (corpus, tokens, sentences),
        tokenizer.clone(),
        on_bad,
        None,
        changed,
        &Progress::new(true),
    )
}

/// Leaves out the documents with no token: first those the boilerplate and link rules emptied
/// (counted in the tally), then those with nothing but stop words.
fn finish(
    (corpus, tokens, sentences): (Corpus, TokenizedCorpus, Option<Sentences>),
    tokenizer: TokenizerValidParams,
    on_bad: OnBadDocument,
    fitted: Option<TextCleaner>,
    changed: Changed,
    progress: &Progress,
) -> Result<Prepared, PipelineError> {
    let mut prepared = Prepared {
        corpus,
        tokens,
        tokenizer,
        fitted,
        cleaned: changed.tally,
        sentences,
        on_bad,
    };
    let empty = prepared.tokens.empty_docs();
    let emptied: Vec<usize> = empty
        .into_iter()
        .filter(|&i| {
            changed
                .originals
                .binary_search_by_key(&i, |(row, _)| *row)
                .is_ok()
        })
        .collect();
    let keep = prepared.drop_rows(&emptied, LeftOut::OnlyBoilerplate, progress)?;
    prepared.cleaned.documents_left_out = emptied.len() as u64;
    let hashes = retained(changed.hashes, &keep);
    // The rest are empty for want of words, at their rows after the drop.
    let no_words = prepared.tokens.empty_docs();
    let keep = prepared.drop_rows(&no_words, LeftOut::NoWords, progress)?;
    prepared.corpus.duplicates = duplicates(&prepared.corpus, &retained(hashes, &keep));
    prepared.cleaned.duplicates = prepared.corpus.duplicates.len() as u64;
    Ok(prepared)
}

/// The items of `v` whose `keep` is true.
fn retained<T>(v: Vec<T>, keep: &[bool]) -> Vec<T> {
    v.into_iter()
        .zip(keep)
        .filter_map(|(x, &k)| k.then_some(x))
        .collect()
}

/// The documents whose features text (by its `hashes`, row for row) repeats an earlier
/// document's, each with the first one's id.
fn duplicates(corpus: &Corpus, hashes: &[u64]) -> Vec<Duplicate> {
    let mut first: rustc_hash::FxHashMap<u64, usize> = Default::default();
    let mut found = Vec::new();
    for (i, &h) in hashes.iter().enumerate() {
        let of = *first.entry(h).or_insert(i);
        if of != i {
            let d = &corpus.documents[i];
            found.push(Duplicate {
                id: d.id.clone(),
                duplicate_of: corpus.documents[of].id.clone(),
                file: corpus.sources[d.source].path.clone(),
                row: d.row,
            });
        }
    }
    found
}

/// The ingest stage alone (`topicmap check` stops here), with its warnings.
pub fn ingest_stage(
    inputs: &[InputSpec],
    on_bad: OnBadDocument,
    progress: &mut Progress,
) -> Result<Corpus, PipelineError> {
    let corpus = progress.stage(
        "ingest",
        |_| ingest::ingest(inputs, on_bad),
        |c: &Corpus| format!("{} docs from {} files", thousands(c.len()), c.sources.len()),
    )?;
    for line in skipped_summary(&corpus.skipped) {
        progress.warn(&line);
    }
    for r in &corpus.renamed {
        progress.warn(&r.to_string());
    }
    Ok(corpus)
}

/// The first five skipped documents, then a count: what stderr and the report say about them
/// (`run.json` lists them all).
pub fn skipped_summary(skipped: &[Skipped]) -> Vec<String> {
    let mut lines: Vec<String> = skipped.iter().take(5).map(Skipped::to_string).collect();
    if skipped.len() > 5 {
        lines.push(format!(
            "... and {} more skipped documents (all are listed in run.json)",
            skipped.len() - 5
        ));
    }
    lines
}

impl Prepared {
    /// The documents' sentence vectors, taken out (the features k-means clusters are made in
    /// their rows); an error when the documents were prepared without an [`Embedder`].
    pub fn take_sentences(&mut self) -> Result<Sentences, PipelineError> {
        self.sentences.take().ok_or_else(|| {
            let why = "the documents were prepared without the model";
            crate::embed::EmbedError::Encode(why.into()).into()
        })
    }

    pub fn len(&self) -> usize {
        self.corpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.corpus.is_empty()
    }

    /// Each document's period: its time bucketed by `unit`, or its batch.
    pub fn periods(&self, unit: PeriodUnit) -> Vec<String> {
        self.corpus
            .documents
            .iter()
            .map(|d| d.period(unit))
            .collect()
    }

    /// Leaves out the documents at `rows` (ascending) from the corpus and the tokens, recording
    /// each in the corpus's skipped list with its file and row, and returns the keep mask over
    /// the rows as they were, for the caller's own row-aligned data (a TF-IDF matrix). Fails in
    /// `fail` mode, and always when no document would be left.
    pub fn drop_rows(
        &mut self,
        rows: &[usize],
        why: LeftOut,
        progress: &Progress,
    ) -> Result<Vec<bool>, PipelineError> {
        let n = self.corpus.len();
        let mut keep = vec![true; n];
        if rows.is_empty() {
            return Ok(keep);
        }
        let first = &self.corpus.documents[rows[0]];
        let bad = |all: bool| PipelineError::BadDocuments {
            count: rows.len(),
            all,
            id: first.id.clone(),
            file: self.corpus.sources[first.source].location.clone(),
            row: first.row,
            why,
        };
        if rows.len() == n {
            return Err(bad(true));
        }
        if self.on_bad == OnBadDocument::Fail {
            return Err(bad(false));
        }
        progress.warn(&format!("{} documents left out: {why}", rows.len()));
        for &i in rows {
            let d = &self.corpus.documents[i];
            self.corpus.skipped.push(Skipped {
                file: self.corpus.sources[d.source].path.clone(),
                row: d.row,
                reason: format!("{}: {why}", d.id),
            });
            keep[i] = false;
        }
        let mut it = keep.iter();
        self.corpus
            .documents
            .retain(|_| *it.next().unwrap_or(&true));
        if let Some(sentences) = &mut self.sentences {
            sentences.retain(&keep);
        }
        self.tokens.retain_docs(&keep);
        Ok(keep)
    }
}

/// The clean stage's rules fitted on the documents' raw texts.
fn fit_cleaner(params: &CleanValidParams, corpus: &Corpus) -> TextCleaner {
    let raw: Vec<&str> = corpus.documents.iter().map(|d| d.text.as_str()).collect();
    params.fit(&raw)
}

/// What the clean stage changed beyond markup.
#[derive(Debug, Default)]
struct Changed {
    tally: CleanTally,
    /// The documents whose features text lost boilerplate or links, by row (ascending), with
    /// their original text (markup-cleaned), put back once tokenized.
    originals: Vec<(usize, String)>,
    /// Each document's features text hashed (xxh3), row for row: equal hashes are duplicates.
    hashes: Vec<u64>,
}

/// Cleans every document's text and title; paper-list documents get a snippet of their
/// original text as their title.
fn clean_corpus(corpus: &mut Corpus, cleaner: &TextCleaner) -> Changed {
    let mut changed = corpus
        .documents
        .par_iter_mut()
        .enumerate()
        .fold(
            || (CleanBuffers::default(), String::new(), Changed::default()),
            |(mut bufs, mut out, mut acc), (row, d)| {
                let verdict = cleaner.clean(&d.text, &mut out, &mut bufs, &mut acc.tally);
                d.text.clone_from(&out);
                let shown = match &verdict {
                    Cleaned::Same => &d.text,
                    Cleaned::Changed(original) => original,
                };
                match &mut d.title {
                    Some(t) => clean_in_place(cleaner.markup(), t, &mut out),
                    None => d.title = Some(crate::ingest::snippet(shown, 80)),
                }
                if let Cleaned::Changed(mut original) = verdict {
                    keep_snippet(&mut original);
                    acc.originals.push((row, original));
                }
                (bufs, out, acc)
            },
        )
        .map(|(_, _, acc)| acc)
        .reduce(Changed::default, |mut a, b| {
            a.tally.add(&b.tally);
            a.originals.extend(b.originals);
            a
        });
    changed.originals.sort_unstable_by_key(|(row, _)| *row);
    changed.hashes = corpus
        .documents
        .par_iter()
        .map(|d| xxhash_rust::xxh3::xxh3_64(d.text.as_bytes()))
        .collect();
    changed
}

/// Cuts a changed document's original text to what is shown of it once the features text is
/// tokenized: its snippet (every text is cut to one then, see [`restore_originals`]). The rest
/// would only be held through tokenizing, the run's peak (about 15 MiB on arXiv).
fn keep_snippet(original: &mut String) {
    if let Some((cut, _)) = original
        .char_indices()
        .nth(crate::ingest::SNIPPET_CHARS + 1)
    {
        original.truncate(cut);
        original.shrink_to_fit();
    }
}

/// Cleans `text` (a title) through the reusable `buf` and copies the result back into
/// `text`'s own allocation (`clone_from` reuses it when it fits, nearly always: cleaning mostly
/// removes). A new string per document would leave the old ones as holes between live data,
/// memory the process could not hand back. The features text is copied back the same way.
fn clean_in_place(cleaner: &crate::clean::Cleaner, text: &mut String, buf: &mut String) {
    cleaner.clean_into(text, buf);
    text.clone_from(buf);
}

/// Puts the original text back into each changed document of `docs` (rows `first..`; the
/// `originals` are theirs), for its snippet and exports; the features text it replaces is
/// freed. (Only the rows of `originals` are read afterwards.)
fn restore_originals(first: usize, docs: &mut [Document], originals: &mut [(usize, String)]) {
    for (row, original) in originals {
        docs[*row - first].text = std::mem::take(original);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn prepared(texts: &[&str], on_bad: OnBadDocument) -> Prepared {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.txt");
        let mut body = String::from("A list\n");
        for t in texts {
            body.push_str(&format!("\n{t}\n"));
        }
        std::fs::write(&path, body).unwrap();
        let mut progress = Progress::new(true);
        prepare(
            &[InputSpec::file(&path)],
            on_bad,
            Cleaning::Fit(&crate::clean::CleanValidParams::default()),
            &crate::tokenize::TokenizerParams::new().check().unwrap(),
            None,
            &mut progress,
        )
        .unwrap()
    }

    #[test]
    fn rows_stay_aligned_and_left_out_documents_are_listed() {
        let texts = [
            "graph neural networks",
            "the of and",
            "protein folding models",
            "sparse attention",
        ];
        let mut p = prepared(&texts, OnBadDocument::Skip);
        // "the of and" has only stop words: dropped when prepared.
        assert_eq!(p.len(), 3);
        assert_eq!(p.tokens.n_docs(), 3);
        assert_eq!(p.corpus.skipped.len(), 1);
        assert_eq!(p.corpus.skipped[0].row, 2);
        let keep = p
            .drop_rows(&[1], LeftOut::NotInVocabulary, &Progress::new(true))
            .unwrap();
        assert_eq!(keep, [true, false, true]);
        let ids: Vec<&str> = p.corpus.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["p:1", "p:4"]);
        assert_eq!(p.tokens.n_docs(), 2);
        assert_eq!(p.corpus.skipped[1].row, 3);
        assert_eq!(
            p.corpus.skipped[1].file.file_name(),
            Some(PathBuf::from("p.txt").as_os_str())
        );
    }

    #[test]
    fn boilerplate_goes_from_the_features_and_stays_in_the_text() {
        let texts = [
            "graph neural networks for molecules. © 2018 Elsevier B.V. All rights reserved.",
            "https://openreview.net/forum?id=abc123",
            "protein folding models, code at https://github.com/x/y",
            "the of and",
        ];
        let p = prepared(&texts, OnBadDocument::Skip);
        assert_eq!(p.len(), 2);
        let reasons: Vec<&str> = p.corpus.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(
            reasons[0].contains("nothing but boilerplate"),
            "{reasons:?}"
        );
        assert_eq!(p.corpus.skipped[0].row, 2);
        assert!(reasons[1].contains("no words left"), "{reasons:?}");
        assert_eq!(p.corpus.skipped[1].row, 4);
        // The original text is kept for snippets and exports ...
        assert!(p.corpus.documents[0].text.contains("Elsevier"));
        assert!(p.corpus.documents[1].text.contains("github.com"));
        // ... while no feature comes from the boilerplate.
        for t in ["elsevi", "right", "github", "http", "com"] {
            assert!(!p.tokens.terms.iter().any(|x| x.stem == t), "{t} is a term");
        }
        assert_eq!(p.cleaned.documents_left_out, 1);
        assert_eq!(p.cleaned.links.urls, 2);
        assert_eq!(p.cleaned.removed.rights_statements, 2);
    }

    #[test]
    fn a_changed_document_shows_its_original_snippet() {
        let long = format!(
            "Code at https://github.com/a/b for sparse graph attention. {}",
            "Sparse graph attention scales to long inputs. ".repeat(12)
        );
        let p = prepared(
            &[&long, "graph attention for molecules and proteins"],
            OnBadDocument::Skip,
        );
        let text = &p.corpus.documents[0].text;
        // The original (with its link), cut to the snippet every text is cut to.
        assert!(
            text.starts_with("Code at https://github.com/a/b for sparse"),
            "{text}"
        );
        assert_eq!(text.chars().count(), crate::ingest::SNIPPET_CHARS + 1);
        assert!(!p.tokens.terms.iter().any(|t| t.stem == "github"));
    }

    #[test]
    fn fail_mode_and_an_empty_corpus_stop_with_the_first_row() {
        let mut p = prepared(&["graph networks", "sparse attention"], OnBadDocument::Fail);
        let e = p
            .drop_rows(&[1], LeftOut::NotInModel, &Progress::new(true))
            .unwrap_err();
        assert!(e.to_string().contains("row 2"), "{e}");
        let e = p
            .drop_rows(&[0, 1], LeftOut::NotInModel, &Progress::new(true))
            .unwrap_err();
        assert!(e.to_string().starts_with("no document can be used"), "{e}");
        let e = p
            .drop_rows(&[0, 1], LeftOut::NoWords, &Progress::new(true))
            .unwrap_err();
        assert!(e.to_string().starts_with("all documents are empty"), "{e}");
    }

    #[test]
    fn skipped_documents_are_summarised_after_five() {
        let s = |row| Skipped {
            file: PathBuf::from("a.csv"),
            row,
            reason: "empty text".into(),
        };
        let lines = skipped_summary(&(1..=7).map(s).collect::<Vec<_>>());
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], "skipped a.csv row 1: empty text");
        assert!(lines[5].contains("2 more"), "{}", lines[5]);
    }
}
