//! Boilerplate: the sentences and lines of a document that are not the paper, found across the
//! corpus and removed from the text that features and labels are built from.
//!
//! Exports from Scopus, Web of Science, PubMed or OpenReview append publisher lines to every
//! abstract ("© 2018 Elsevier B.V. All rights reserved."), mail archives repeat each sender's
//! signature, and paper lists repeat a venue note. Each of these becomes a topic or a label
//! unless removed. Three rules, applied to the raw text split into segments (lines, and
//! sentences within lines; see [`scan`]):
//!
//! 1. **Repetition.** A segment whose normalised form (letters and digits, lowercased, every
//!    run of digits as `0`, so "© 2017 IEEE" and "© 2019 IEEE" are one) occurs in at least
//!    `min-docs` distinct documents is boilerplate. Exact duplicate documents count once, so a
//!    paper listed twice is not boilerplate of itself. The set is fitted once ([`fit`]) on the
//!    corpus (or on an even sample of at most [`MAX_FIT_DOCUMENTS`] documents), saved in the
//!    model, and applied as it is by `assign`, streaming runs and Spark. The rule never takes
//!    a document's every word (its repeated segments stay when nothing else with words would),
//!    and it **backs off** for a corpus, with one warning, when it would empty or nearly empty
//!    more than [`BACK_OFF_SHARE`] of the documents: templated records ("neural network
//!    training 1 graph", "… 2 graph", …) differ only in numbers, and there the repetition is
//!    the content.
//! 2. **Rights statements**, even once: copyright and licence lines (`©`, "Copyright",
//!    "All rights reserved", "Published by …", "This article is protected by copyright", Creative
//!    Commons and permission notes; [`rights`]).
//! 3. **Message furniture**: a quoted header ("In article <…> … writes:") and everything after a
//!    signature delimiter line (`-- `).
//!
//! The `keep` list names segments that stay whatever the rules say (matched by their normalised
//! form). What was removed is summed for `run.json` and the report, so an analyst can check it.

mod rights;
mod scan;

use super::links;

pub use rights::{RIGHTS_ANYWHERE, RIGHTS_STARTS};
pub use scan::{Scanner, Segment};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

/// Most documents the repetition rule is fitted on; a larger corpus is fitted on an even sample
/// of this many (the counts are the sample's, and a `min-docs` given is scaled to it). A
/// segment in one document of 500 is expected 20 times in the sample, twice the automatic
/// threshold; publisher lines (one document in ten or more) and the 20 Newsgroups signatures
/// (74 of 18,846 documents: about 39 in the sample) lie far above it.
pub const MAX_FIT_DOCUMENTS: usize = 10_000;
/// A segment needs this many words and letters to count as repeated boilerplate: shorter ones
/// ("Introduction.", "Yes.") recur by chance.
const MIN_WORDS: usize = 3;
const MIN_LETTERS: usize = 12;
/// The repetition rule backs off for a corpus (removes nothing) when it would empty or nearly
/// empty more than this share of the documents it was fitted on: there the repeated text is the
/// content (templated records, short product or course lines), not publisher furniture. Real
/// boilerplate is a small part of each document it is in; see [`NEARLY_EMPTY`].
pub const BACK_OFF_SHARE: f64 = 0.05;
/// A document is nearly emptied by the repetition rule when its repeated segments hold at least
/// this share of the letters that the other rules leave.
pub const NEARLY_EMPTY: f64 = 0.8;
/// Longest segment text shown in the report (chars).
const SHOWN_CHARS: usize = 160;
/// Boilerplate segments listed in `run.json` and the report (the most frequent first).
pub const LISTED: usize = 50;

/// The repetition rule's parameters (linfa style: [`BoilerplateParams::new`] has the defaults,
/// [`BoilerplateParams::check`] the rules).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoilerplateParams {
    enabled: bool,
    min_docs: Option<usize>,
    keep: Vec<String>,
}

/// Checked [`BoilerplateParams`], ready to [`fit`](BoilerplateValidParams::fit).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct BoilerplateValidParams(BoilerplateParams);

/// A broken rule. The messages name the pipeline key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BoilerplateParamsError {
    #[error(
        "clean.boilerplate-min-docs must be at least 2 (a segment in one document is not repeated)"
    )]
    MinDocs,
}

impl Default for BoilerplateParams {
    fn default() -> Self {
        Self::new()
    }
}

impl BoilerplateParams {
    /// Defaults: on, `min-docs` automatic (see [`auto_min_docs`]), nothing kept.
    pub fn new() -> Self {
        BoilerplateParams {
            enabled: true,
            min_docs: None,
            keep: Vec::new(),
        }
    }
    /// `false` turns every rule off (links are a separate rule).
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = on;
        self
    }
    /// Fixed threshold; `None` is automatic.
    pub fn min_docs(mut self, n: Option<usize>) -> Self {
        self.min_docs = n;
        self
    }
    /// Segments that stay.
    pub fn keep(mut self, keep: Vec<String>) -> Self {
        self.keep = keep;
        self
    }
    pub fn check(self) -> Result<BoilerplateValidParams, BoilerplateParamsError> {
        if self.min_docs.is_some_and(|n| n < 2) {
            return Err(BoilerplateParamsError::MinDocs);
        }
        Ok(BoilerplateValidParams(self))
    }
}

/// The automatic threshold for `n` documents examined: 3, or one document in a thousand when
/// that is more. Three documents sharing a sentence in a 30-paper list is a venue note; in a
/// large corpus chance repeats of short sentences stay below one in a thousand, while
/// publisher lines (tens of percent) and mail signatures (74 posts of 18,846 in 20 Newsgroups)
/// lie above it.
pub fn auto_min_docs(n: usize) -> usize {
    n.div_ceil(1000).max(3)
}

/// A `min-docs` given for `n` documents, as a threshold on an even sample of `sampled` of them:
/// the same share, at least 2.
fn scaled_min_docs(min_docs: usize, sampled: usize, n: usize) -> usize {
    if sampled >= n {
        return min_docs;
    }
    ((min_docs as u128 * sampled as u128).div_ceil(n as u128) as usize).max(2)
}

/// One repeated segment found by [`fit`](BoilerplateValidParams::fit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeated {
    /// Its first occurrence, as written (shortened for display).
    pub text: String,
    /// Distinct documents holding it (of those examined).
    pub documents: usize,
    /// The hash of its normalised form.
    pub key: u64,
}

/// The fitted rules: the repeated segments and the kept ones. Saved in `model.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Boilerplate {
    pub enabled: bool,
    /// The threshold used.
    pub min_docs: usize,
    /// Documents the repetition rule was fitted on.
    pub examined: usize,
    /// Most frequent first.
    pub repeated: Vec<Repeated>,
    /// Normalised-form hashes of the `keep` entries.
    pub keep: Vec<u64>,
    /// Set when the repetition rule backed off for this corpus (see [`BACK_OFF_SHARE`]): it then
    /// removes nothing, and `repeated` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backed_off: Option<BackOff>,
    /// The `keep` entries that no document of the fit holds (warned about; not saved).
    #[serde(skip)]
    pub unmatched_keep: Vec<String>,
    #[serde(skip)]
    set: FxHashSet<u64>,
}

/// Why the repetition rule backed off: of `examined` distinct documents, it would have emptied
/// or nearly emptied `documents` with the `found` repeated segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackOff {
    pub documents: usize,
    pub examined: usize,
    pub found: usize,
}

impl BackOff {
    /// The share of the examined documents it would have (nearly) emptied.
    pub fn share(&self) -> f64 {
        self.documents as f64 / self.examined.max(1) as f64
    }
}

impl std::fmt::Display for BackOff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the repetition rule (clean.boilerplate) is off for this corpus: its {} repeated \
             segments would empty or nearly empty {} of {} documents ({:.0}%, more than {:.0}%), \
             so they are the content, not boilerplate",
            self.found,
            self.documents,
            self.examined,
            100.0 * self.share(),
            100.0 * BACK_OFF_SHARE
        )
    }
}

/// What [`Boilerplate::strip`] removed, summed over documents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removed {
    /// Repeated segments removed (occurrences).
    pub repeated: u64,
    pub rights_statements: u64,
    pub signatures: u64,
    pub quote_headers: u64,
    /// Documents that lost at least one segment.
    pub documents: u64,
}

impl Removed {
    pub fn add(&mut self, o: &Removed) {
        self.repeated += o.repeated;
        self.rights_statements += o.rights_statements;
        self.signatures += o.signatures;
        self.quote_headers += o.quote_headers;
        self.documents += o.documents;
    }
}

impl BoilerplateValidParams {
    /// Finds the repeated segments of `texts` (raw document texts).
    pub fn fit<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Boilerplate {
        let p = &self.0;
        let mut scanner = Scanner::default();
        let keep: Vec<u64> = p
            .keep
            .iter()
            .filter_map(|k| scanner.normalise_all(k).map(|n| n.0))
            .collect();
        if !p.enabled {
            return Boilerplate {
                enabled: false,
                keep,
                ..Boilerplate::default()
            }
            .indexed();
        }
        let sample = even_sample(texts.len(), MAX_FIT_DOCUMENTS);
        let min_docs = match p.min_docs {
            None => auto_min_docs(sample.len()),
            Some(m) => scaled_min_docs(m, sample.len(), texts.len()),
        };
        let distinct = distinct_documents(texts, &sample);
        let (counts, kept_seen) = count_segments(texts, &distinct, &keep);
        let unmatched_keep = p
            .keep
            .iter()
            .zip(&keep)
            .filter(|(_, k)| !kept_seen.contains(k))
            .map(|(text, _)| text.clone())
            .collect();
        let mut repeated: Vec<Repeated> = counts
            .into_iter()
            .filter(|(key, c)| c.documents >= min_docs && !keep.contains(key))
            .map(|(key, c)| Repeated {
                text: shown(&texts[c.doc].as_ref()[c.start..c.end]),
                documents: c.documents,
                key,
            })
            .collect();
        repeated.sort_by(|a, b| {
            b.documents
                .cmp(&a.documents)
                .then_with(|| a.text.cmp(&b.text))
                .then(a.key.cmp(&b.key))
        });
        Boilerplate {
            enabled: true,
            min_docs,
            examined: sample.len(),
            repeated,
            keep,
            backed_off: None,
            unmatched_keep,
            set: FxHashSet::default(),
        }
        .indexed()
        .backing_off(texts, &distinct)
    }
}

/// `take` indices spread evenly over `0..n` (all of them when `n <= take`), so a time-sorted
/// corpus is sampled over its whole span.
fn even_sample(n: usize, take: usize) -> Vec<usize> {
    if n <= take {
        return (0..n).collect();
    }
    (0..take)
        .map(|i| (i as u128 * n as u128 / take as u128) as usize)
        .collect()
}

/// A segment's count and first occurrence.
#[derive(Debug, Clone, Copy)]
struct SegmentCount {
    documents: usize,
    doc: usize,
    start: usize,
    end: usize,
}

/// Documents per segment key over the `distinct` documents (see [`distinct_documents`]).
/// Chunks are counted in parallel and merged in chunk order, so the first occurrence (and so
/// every output) is the same for any thread count.
fn count_segments<S: AsRef<str> + Sync>(
    texts: &[S],
    distinct: &[usize],
    keep: &[u64],
) -> (FxHashMap<u64, SegmentCount>, FxHashSet<u64>) {
    let partial: Vec<(FxHashMap<u64, SegmentCount>, FxHashSet<u64>)> = distinct
        .par_chunks(1024)
        .map(|chunk| {
            let mut counts: FxHashMap<u64, SegmentCount> = FxHashMap::default();
            let mut kept = FxHashSet::default();
            let mut seen = FxHashSet::default();
            let mut scanner = Scanner::default();
            for &doc in chunk {
                seen.clear();
                scanner.scan(texts[doc].as_ref(), |s| {
                    if keep.contains(&s.key) {
                        kept.insert(s.key);
                    }
                    if long_enough(s) && seen.insert(s.key) {
                        let e = counts.entry(s.key).or_insert(SegmentCount {
                            documents: 0,
                            doc,
                            start: s.start,
                            end: s.end,
                        });
                        e.documents += 1;
                    }
                });
            }
            (counts, kept)
        })
        .collect();
    let mut total: FxHashMap<u64, SegmentCount> = FxHashMap::default();
    let mut kept = FxHashSet::default();
    for (part, part_kept) in partial {
        kept.extend(part_kept);
        for (key, c) in part {
            total
                .entry(key)
                .and_modify(|t| t.documents += c.documents)
                .or_insert(c);
        }
    }
    (total, kept)
}

/// The sampled documents whose full text was not seen before (exact duplicates dropped).
fn distinct_documents<S: AsRef<str> + Sync>(texts: &[S], sample: &[usize]) -> Vec<usize> {
    let hashes: Vec<u64> = sample
        .par_iter()
        .map(|&i| xxh3_64(texts[i].as_ref().as_bytes()))
        .collect();
    let mut seen = FxHashSet::default();
    sample
        .iter()
        .zip(hashes)
        .filter(|(_, h)| seen.insert(*h))
        .map(|(&i, _)| i)
        .collect()
}

/// A segment's text for display: trimmed, at most [`SHOWN_CHARS`] chars.
fn shown(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= SHOWN_CHARS {
        return s;
    }
    let cut: String = s.chars().take(SHOWN_CHARS).collect();
    format!("{cut}…")
}

impl Boilerplate {
    /// Builds the lookup set (after deserializing).
    pub fn indexed(mut self) -> Self {
        self.set = self.repeated.iter().map(|r| r.key).collect();
        self
    }

    /// The rules off: what a model without boilerplate (an older one) applies.
    pub fn disabled() -> Self {
        Boilerplate::default()
    }

    /// Appends `text` to `out` without its boilerplate segments, adding what was removed to
    /// `removed`. Returns whether anything was removed; only then does `out` hold the text (a
    /// text kept whole is not copied).
    pub fn strip(
        &self,
        text: &str,
        out: &mut String,
        removed: &mut Removed,
        scanner: &mut Scanner,
    ) -> bool {
        if !self.enabled || (self.set.is_empty() && !rights::may_hold_furniture(text)) {
            return false;
        }
        let signature = rights::signature_start(text);
        let body = signature.map_or(text, |at| &text[..at]);
        let cuts = self.cuts(body, scanner);
        if signature.is_none() && cuts.is_empty() {
            return false;
        }
        removed.signatures += u64::from(signature.is_some());
        let mut copied = 0;
        for &(start, end, verdict) in &cuts {
            out.push_str(&body[copied..start]);
            copied = end;
            count(removed, verdict);
        }
        out.push_str(&body[copied..]);
        removed.documents += 1;
        true
    }

    /// The segments of `body` to cut (byte ranges, in order) and why. The repetition rule never
    /// takes a document's every word: when no segment with words besides links would stay,
    /// its repeated segments stay (a text that is all template is the content; a whole text
    /// repeated is a duplicate, reported as one).
    fn cuts(&self, body: &str, scanner: &mut Scanner) -> Vec<(usize, usize, Verdict)> {
        let mut cuts = Vec::new();
        scanner.scan(body, |s| match self.judge(body, s) {
            Verdict::Keep => {}
            verdict => cuts.push((s.start, s.end, verdict)),
        });
        // Only a document with a repeated segment asks what the cuts would leave.
        if cuts.iter().any(|c| c.2 == Verdict::Repeated) && !words_between(body, &cuts) {
            cuts.retain(|c| c.2 != Verdict::Repeated);
        }
        cuts
    }

    /// These rules with the repetition rule off when it would empty or nearly empty (see
    /// [`NEARLY_EMPTY`]) more than [`BACK_OFF_SHARE`] of the `distinct` documents it was
    /// fitted on.
    fn backing_off<S: AsRef<str> + Sync>(mut self, texts: &[S], distinct: &[usize]) -> Self {
        if self.set.is_empty() {
            return self;
        }
        let emptied: usize = distinct
            .par_chunks(1024)
            .map(|chunk| {
                let mut scanner = Scanner::default();
                chunk
                    .iter()
                    .filter(|&&d| self.nearly_emptied(texts[d].as_ref(), &mut scanner))
                    .count()
            })
            .sum();
        if emptied as f64 <= BACK_OFF_SHARE * distinct.len() as f64 {
            return self;
        }
        self.backed_off = Some(BackOff {
            documents: emptied,
            examined: distinct.len(),
            found: self.repeated.len(),
        });
        self.repeated.clear();
        self.indexed()
    }

    /// Whether the repetition rule would leave less than `1 - NEARLY_EMPTY` of the letters that
    /// the other rules leave in `text`.
    fn nearly_emptied(&self, text: &str, scanner: &mut Scanner) -> bool {
        let body = rights::signature_start(text).map_or(text, |at| &text[..at]);
        let (mut repeated, mut kept) = (0usize, 0usize);
        scanner.scan(body, |s| match self.judge(body, s) {
            Verdict::Repeated => repeated += s.letters,
            Verdict::Keep => kept += s.letters,
            Verdict::Rights | Verdict::QuoteHeader => {}
        });
        repeated > 0 && repeated as f64 >= NEARLY_EMPTY * (repeated + kept) as f64
    }

    /// What becomes of one segment of `text`.
    fn judge(&self, text: &str, s: &Segment<'_>) -> Verdict {
        let raw = &text[s.start..s.end];
        if self.keep.contains(&s.key) {
            return Verdict::Keep;
        }
        if rights::is_rights_statement(s.norm, s.anchored) {
            return Verdict::Rights;
        }
        if rights::is_quote_header(raw) {
            return Verdict::QuoteHeader;
        }
        if long_enough(s) && self.set.contains(&s.key) {
            return Verdict::Repeated;
        }
        Verdict::Keep
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Keep,
    Repeated,
    Rights,
    QuoteHeader,
}

fn count(r: &mut Removed, v: Verdict) {
    match v {
        Verdict::Repeated => r.repeated += 1,
        Verdict::Rights => r.rights_statements += 1,
        Verdict::QuoteHeader => r.quote_headers += 1,
        Verdict::Keep => {}
    }
}

/// Whether the text of `body` outside the `cuts` (ordered byte ranges) holds a word besides
/// links.
fn words_between(body: &str, cuts: &[(usize, usize, Verdict)]) -> bool {
    let mut from = 0;
    for &(start, end, _) in cuts {
        if links::has_words_besides_links(&body[from..start]) {
            return true;
        }
        from = end;
    }
    links::has_words_besides_links(&body[from..])
}

/// Long enough for the repetition rule (see [`MIN_WORDS`], [`MIN_LETTERS`]).
fn long_enough(s: &Segment<'_>) -> bool {
    s.words >= MIN_WORDS && s.letters >= MIN_LETTERS
}

#[cfg(test)]
mod tests;
