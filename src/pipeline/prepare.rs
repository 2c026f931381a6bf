//! Prepare: ingest -> clean -> tokenize, for `run` and `assign` alike.
//!
//! [`Prepared`] is the one owner of row alignment: the corpus's documents and the tokenized
//! documents stay in step, and every document left out on the way (empty after cleaning, or
//! without a word the vocabulary knows) is dropped here, recorded with its file and row, or
//! stops the run in `fail` mode.

use super::PipelineError;
use crate::clean::Cleaner;
use crate::ingest::{self, Corpus, InputSpec, OnBadDocument, PeriodUnit, Skipped};
use crate::progress::{thousands, Progress};
use crate::tokenize::{languages, Analyzer, TokenizedCorpus, TokenizerValidParams};
use rayon::prelude::*;

/// Why documents were left out: names the stage that found them unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftOut {
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
            LeftOut::NoWords => "no words left after cleaning and stop-word removal",
            LeftOut::NotInVocabulary => "none of its words is in the vocabulary (min-df / max-df)",
            LeftOut::NotInModel => "no word in the model's vocabulary",
        })
    }
}

/// Documents, cleaned and tokenized, row for row.
#[derive(Debug)]
pub struct Prepared {
    pub corpus: Corpus,
    pub tokens: TokenizedCorpus,
    /// The tokenizer they were tokenized with: `language = "auto"` resolved (see
    /// [`resolve_language`]).
    pub tokenizer: TokenizerValidParams,
    /// What bad documents do: skipped and listed, or the run stops.
    on_bad: OnBadDocument,
}

/// Reads, cleans and tokenizes every input. Documents with no words left are dropped (or stop
/// the run, see [`Prepared::drop_rows`]).
pub fn prepare(
    inputs: &[InputSpec],
    on_bad: OnBadDocument,
    tokenizer: &TokenizerValidParams,
    progress: &mut Progress,
) -> Result<Prepared, PipelineError> {
    let corpus = ingest_stage(inputs, on_bad, progress)?;
    prepare_corpus(corpus, on_bad, tokenizer, progress)
}

/// Cleans and tokenizes documents already read (a chunk of a stream, an Arrow batch).
pub fn prepare_corpus(
    mut corpus: Corpus,
    on_bad: OnBadDocument,
    tokenizer: &TokenizerValidParams,
    progress: &mut Progress,
) -> Result<Prepared, PipelineError> {
    progress.stage(
        "clean",
        |_| -> Result<(), PipelineError> {
            clean_corpus(&mut corpus);
            Ok(())
        },
        |_| String::new(),
    )?;
    let tokenizer = resolve_language(&corpus, tokenizer, progress);
    let analyzer = Analyzer::new(&tokenizer);
    let tokens = progress.stage(
        "tokenize",
        |_| {
            let tokens = TokenizedCorpus::build(&corpus, &analyzer);
            // From here on the text is only shown as a snippet; the tokens carry the rest. (In
            // the stage, so the freed text is handed back to the system at its end.)
            corpus.shorten_texts(crate::ingest::SNIPPET_CHARS + 1);
            Ok::<_, PipelineError>(tokens)
        },
        |t: &TokenizedCorpus| format!("{} terms", thousands(t.terms.len())),
    )?;
    let mut prepared = Prepared {
        corpus,
        tokens,
        tokenizer,
        on_bad,
    };
    let empty = prepared.tokens.empty_docs();
    prepared.drop_rows(&empty, LeftOut::NoWords, progress)?;
    Ok(prepared)
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

/// Cleans and tokenizes one chunk of a stream with `analyzer`, as [`prepare_corpus`] does but
/// without recording stages (a chunk is a small part of one long stage). Documents left out are
/// recorded in the chunk's skipped list (or fail, in `fail` mode).
pub fn prepare_chunk(
    mut corpus: Corpus,
    on_bad: OnBadDocument,
    analyzer: &Analyzer,
    tokenizer: &TokenizerValidParams,
) -> Result<Prepared, PipelineError> {
    clean_corpus(&mut corpus);
    let tokens = TokenizedCorpus::build(&corpus, analyzer);
    corpus.shorten_texts(crate::ingest::SNIPPET_CHARS + 1);
    let mut prepared = Prepared {
        corpus,
        tokens,
        tokenizer: tokenizer.clone(),
        on_bad,
    };
    let empty = prepared.tokens.empty_docs();
    prepared.drop_rows(&empty, LeftOut::NoWords, &Progress::new(true))?;
    Ok(prepared)
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
        self.tokens.retain_docs(&keep);
        Ok(keep)
    }
}

/// Cleans every document's text and title; paper-list documents get a snippet as their title.
fn clean_corpus(corpus: &mut Corpus) {
    let cleaner = Cleaner::new();
    corpus
        .documents
        .par_iter_mut()
        .for_each_init(String::new, |buf, d| {
            clean_in_place(&cleaner, &mut d.text, buf);
            match &mut d.title {
                Some(t) => clean_in_place(&cleaner, t, buf),
                None => d.title = Some(crate::ingest::snippet(&d.text, 80)),
            }
        });
}

/// Cleans `text` through the reusable `buf` and copies the result back into `text`'s own
/// allocation (`clone_from` reuses it when it fits, nearly always: cleaning mostly removes).
/// Allocating a new string per document instead would leave the old ones as holes between live
/// data, memory the process could not hand back.
fn clean_in_place(cleaner: &Cleaner, text: &mut String, buf: &mut String) {
    cleaner.clean_into(text, buf);
    text.clone_from(buf);
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
            &crate::tokenize::TokenizerParams::new().check().unwrap(),
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
