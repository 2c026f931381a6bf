//! The clean stage: what every document goes through before it is tokenized, fitted once on
//! the corpus and saved with the model, so `assign`, streaming runs and Spark clean new
//! documents exactly as the fit did.
//!
//! For each document, in this order:
//! 1. [`boilerplate`]: repeated segments, rights statements, quoted headers and signatures are
//!    cut from the raw text (lines and sentences are still whole there);
//! 2. [`links`]: URLs, e-mail addresses, DOIs and arXiv identifiers go, then [`injected`] HTML
//!    tags and spreadsheet formulas (both under `links`);
//! 3. the markup [`Cleaner`] (`markup/`): LaTeX, Markdown, entities, PDF codes, whitespace.
//!
//! The result is the text features and labels are built from. A document keeps its original
//! text (markup-cleaned only) for its title, snippets and exports: steps 1 and 2 remove what is
//! not the paper from the topics, not from what people read.
//!
//! This file holds the stage's parameters ([`CleanParams`] -> [`CleanValidParams`]), the
//! fitted [`TextCleaner`] that runs the three steps, and the [`CleanTally`] of what they removed.

pub mod boilerplate;
pub mod injected;
pub mod links;
mod markup;

pub use boilerplate::{BackOff, BoilerplateParams, BoilerplateParamsError};
pub use markup::Cleaner;

use boilerplate::{Boilerplate, BoilerplateValidParams, Removed, Scanner};
use links::LinkCounts;
use serde::{Deserialize, Serialize};

/// The `[clean]` section (linfa style: defaults in [`CleanParams::new`], rules in `check`).
#[derive(Debug, Clone, PartialEq)]
pub struct CleanParams {
    boilerplate: BoilerplateParams,
    links: bool,
}

/// Checked [`CleanParams`], ready to [`fit`](CleanValidParams::fit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CleanValidParams {
    boilerplate: BoilerplateValidParams,
    links: bool,
}

impl Default for CleanParams {
    fn default() -> Self {
        Self::new()
    }
}

impl CleanParams {
    /// Defaults: boilerplate on (automatic threshold, nothing kept), links removed.
    pub fn new() -> Self {
        CleanParams {
            boilerplate: BoilerplateParams::new(),
            links: true,
        }
    }
    /// The boilerplate rules (`boilerplate`, `boilerplate-min-docs`, `keep`).
    pub fn boilerplate(mut self, p: BoilerplateParams) -> Self {
        self.boilerplate = p;
        self
    }
    /// Whether URLs, e-mail addresses, DOIs and arXiv identifiers are removed, and HTML tags and
    /// spreadsheet formulas (`links`).
    pub fn links(mut self, on: bool) -> Self {
        self.links = on;
        self
    }
    pub fn check(self) -> Result<CleanValidParams, BoilerplateParamsError> {
        Ok(CleanValidParams {
            boilerplate: self.boilerplate.check()?,
            links: self.links,
        })
    }
}

impl Default for CleanValidParams {
    fn default() -> Self {
        CleanParams::new().check().expect("the defaults are valid")
    }
}

impl CleanValidParams {
    /// Fits the boilerplate rules on the documents' raw texts.
    pub fn fit<S: AsRef<str> + Sync>(&self, raw: &[S]) -> TextCleaner {
        TextCleaner {
            boilerplate: self.boilerplate.fit(raw),
            links: self.links,
            markup: Cleaner::new(),
        }
    }
}

/// The fitted clean stage (saved in `model.json` as `clean`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TextCleaner {
    pub boilerplate: Boilerplate,
    pub links: bool,
    #[serde(skip)]
    markup: Cleaner,
}

/// What the boilerplate and link rules removed from a set of documents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleanTally {
    #[serde(flatten)]
    pub removed: Removed,
    #[serde(flatten)]
    pub links: LinkCounts,
    /// Documents whose features text differs from their original text.
    pub documents_changed: u64,
    /// HTML tags and spreadsheet formulas removed (see [`injected`]).
    #[serde(default)]
    pub markup: u64,
    /// Documents left with no word once these rules ran (left out of the analysis).
    #[serde(default)]
    pub documents_left_out: u64,
    /// Documents whose whole text repeats an earlier document's (kept; listed in
    /// `duplicates.csv`). Counted within what was prepared together: a streaming run's chunk.
    #[serde(default)]
    pub duplicates: u64,
}

impl CleanTally {
    pub fn add(&mut self, o: &CleanTally) {
        self.removed.add(&o.removed);
        self.links.add(&o.links);
        self.documents_changed += o.documents_changed;
        self.markup += o.markup;
        self.documents_left_out += o.documents_left_out;
        self.duplicates += o.duplicates;
    }
}

/// What `run.json` and the report say about the clean stage: the rules, the repeated segments
/// found (the most frequent [`LISTED`](boilerplate::LISTED)) and what was removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CleanReport {
    pub boilerplate: bool,
    pub links: bool,
    /// The repetition threshold used (documents).
    pub min_docs: usize,
    /// Documents the repetition rule was fitted on.
    pub documents_examined: usize,
    /// Repeated segments found (all of them; `repeated` lists the first ones).
    pub repeated_found: usize,
    pub repeated: Vec<ShownSegment>,
    /// `keep` entries that matched no segment of the fit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmatched_keep: Vec<String>,
    /// Set when the repetition rule backed off for this corpus (it removed nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetition_backed_off: Option<BackOff>,
    /// What the rules removed from this run's documents (absent for a report built from sums).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<CleanTally>,
}

/// A repeated segment as listed: its text and the documents holding it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShownSegment {
    pub text: String,
    pub documents: usize,
}

/// Per-thread buffers for [`TextCleaner::clean`].
#[derive(Debug, Default)]
pub struct CleanBuffers {
    scanner: Scanner,
    stripped: String,
    linked: String,
    injected: String,
}

/// One document after the clean stage.
#[derive(Debug, PartialEq)]
pub enum Cleaned {
    /// Only markup was cleaned: the features text is the original text (in `out`).
    Same,
    /// Boilerplate or links were removed: `out` holds the features text, and this the
    /// original text, markup-cleaned, for titles and snippets.
    Changed(String),
}

impl TextCleaner {
    /// What a model without a `clean` section (written before these rules) applies: markup
    /// cleaning only, so its documents are tokenized as they were when it was fitted.
    pub fn markup_only() -> Self {
        TextCleaner {
            boilerplate: Boilerplate::disabled(),
            links: false,
            markup: Cleaner::new(),
        }
    }

    /// The fitted state, after reading it from a model.
    pub fn indexed(mut self) -> Self {
        self.boilerplate = self.boilerplate.indexed();
        self
    }

    /// Cleans the raw text `raw`: the features text goes into `out`; what was removed is
    /// added to `tally`.
    pub fn clean(
        &self,
        raw: &str,
        out: &mut String,
        bufs: &mut CleanBuffers,
        tally: &mut CleanTally,
    ) -> Cleaned {
        bufs.stripped.clear();
        let stripped = self.boilerplate.strip(
            raw,
            &mut bufs.stripped,
            &mut tally.removed,
            &mut bufs.scanner,
        );
        let source = if stripped { &bufs.stripped } else { raw };
        let mut linked = false;
        if self.links && links::may_hold_links(source) {
            bufs.linked.clear();
            linked = links::strip_links(source, &mut bufs.linked, &mut tally.links);
        }
        let source = if linked { &bufs.linked } else { source };
        let mut injected = false;
        if self.links && injected::may_hold(source) {
            bufs.injected.clear();
            injected = injected::strip(source, &mut bufs.injected, &mut tally.markup);
        }
        if !stripped && !linked && !injected {
            self.markup.clean_into(raw, out);
            return Cleaned::Same;
        }
        tally.documents_changed += 1;
        self.markup
            .clean_into(if injected { &bufs.injected } else { source }, out);
        let mut original = String::with_capacity(raw.len());
        self.markup.clean_into(raw, &mut original);
        Cleaned::Changed(original)
    }

    /// What `run.json` and the report say, with what the rules removed from the documents.
    pub fn report(&self, removed: Option<CleanTally>) -> CleanReport {
        let b = &self.boilerplate;
        CleanReport {
            boilerplate: b.enabled,
            links: self.links,
            min_docs: b.min_docs,
            documents_examined: b.examined,
            repeated_found: b.repeated.len(),
            repeated: b
                .repeated
                .iter()
                .take(boilerplate::LISTED)
                .map(|r| ShownSegment {
                    text: r.text.clone(),
                    documents: r.documents,
                })
                .collect(),
            unmatched_keep: b.unmatched_keep.clone(),
            repetition_backed_off: b.backed_off,
            removed,
        }
    }

    /// The markup cleaner alone (titles).
    pub fn markup(&self) -> &Cleaner {
        &self.markup
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_lose_boilerplate_and_links_and_the_original_stays() {
        let raw = [
            "We study \\textbf{kernels}. Code: https://github.com/a/b. © 2018 Elsevier B.V. All rights reserved.",
            "Plain text about graphs.",
        ];
        let cleaner = CleanParams::new().check().unwrap().fit(&raw);
        let (mut out, mut bufs, mut tally) = (
            String::new(),
            CleanBuffers::default(),
            CleanTally::default(),
        );
        let got = cleaner.clean(raw[0], &mut out, &mut bufs, &mut tally);
        assert_eq!(out, "We study kernels. Code: .");
        assert_eq!(
            got,
            Cleaned::Changed("We study kernels. Code: https://github.com/a/b. © 2018 Elsevier B.V. All rights reserved.".into())
        );
        assert_eq!(
            (
                tally.removed.rights_statements,
                tally.links.urls,
                tally.documents_changed
            ),
            (2, 1, 1)
        );
        assert_eq!(
            cleaner.clean(raw[1], &mut out, &mut bufs, &mut tally),
            Cleaned::Same
        );
        assert_eq!(out, raw[1]);
    }

    #[test]
    fn markup_only_is_the_old_cleaning() {
        let c = TextCleaner::markup_only();
        let (mut out, mut bufs, mut tally) = (
            String::new(),
            CleanBuffers::default(),
            CleanTally::default(),
        );
        let raw = "See https://x.org/y. © 2019 IEEE.";
        assert_eq!(c.clean(raw, &mut out, &mut bufs, &mut tally), Cleaned::Same);
        assert_eq!(out, raw);
        assert_eq!(tally, CleanTally::default());
    }
}
