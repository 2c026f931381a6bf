//! Fuzzes the paper-list parser (`topicmap::ingest::paper_list::parse`) with arbitrary UTF-8.
//!
//! Besides "no panic", it checks what the parser guarantees by construction:
//! - the title, if any, is the first non-blank line, trimmed: non-empty, no surrounding
//!   whitespace, no line break; without a title there are no documents;
//! - every document's text is non-blank and holds no `\n`, does not start with a space, and
//!   does not end with a space, tab, `\r` or NBSP;
//! - ids are `<file-stem>:1`, `<file-stem>:2`, ... in order (so unique), `row` is the same
//!   number, and `source`, `batch`, `title`, `time`, `label` are what the parser sets;
//! - nothing visible is lost or invented: the non-whitespace chars of the title followed by every
//!   document equal the non-whitespace chars of the input (after a leading BOM is dropped);
//! - `limit = Some(n)` (with a `batch` name) keeps exactly the first `n` of the same documents.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;
use topicmap::config::options::InputOptions;
use topicmap::config::{Options, Settings};
use topicmap::ingest::paper_list::parse;
use topicmap::ingest::InputSpec;

const STEM: &str = "003_fuzz";
const LIMIT: usize = 3;

/// The input settings a pipeline gets for `[[input]] path = "003_fuzz.txt"`, through the same
/// `Settings::resolve` that fills in every default.
fn input() -> &'static InputSpec {
    static INPUT: OnceLock<InputSpec> = OnceLock::new();
    INPUT.get_or_init(|| {
        let options = Options {
            input: vec![InputOptions {
                path: Some(format!("{STEM}.txt")),
                format: Some("paper-list".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let settings =
            Settings::resolve(options, Path::new("fuzz.toml")).expect("default settings resolve");
        settings.inputs.into_iter().next().expect("one input")
    })
}

fn visible(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().filter(|c| !c.is_whitespace())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let input = input();
    assert!(input.limit.is_none() && input.batch.is_none());
    let path = Path::new("corpus").join(format!("{STEM}.txt"));
    let list = parse(text, &path, input, 7);

    match &list.title {
        Some(t) => {
            assert!(!t.is_empty(), "empty title");
            assert_eq!(t.trim(), t, "title not trimmed");
            assert!(!t.contains('\n'), "line break in title {t:?}");
        }
        None => assert!(list.documents.is_empty(), "documents without a title"),
    }
    for (n, d) in list.documents.iter().enumerate() {
        assert_eq!(d.id, format!("{STEM}:{}", n + 1));
        assert_eq!(d.source, 7);
        assert_eq!(d.row, n + 1);
        assert_eq!(d.batch, STEM);
        assert!(d.title.is_none() && d.time.is_none() && d.label.is_none());
        assert!(!d.text.trim().is_empty(), "blank document {:?}", d.text);
        assert!(!d.text.contains('\n'), "line break in {:?}", d.text);
        assert!(!d.text.starts_with(' '), "leading space in {:?}", d.text);
        assert!(
            !d.text.ends_with([' ', '\t', '\r', '\u{a0}']),
            "trailing blank in {:?}",
            d.text
        );
    }

    // Nothing visible lost or invented.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut got = visible(list.title.as_deref().unwrap_or(""))
        .chain(list.documents.iter().flat_map(|d| visible(&d.text)));
    let mut want = visible(body);
    loop {
        match (got.next(), want.next()) {
            (None, None) => break,
            (g, w) => assert_eq!(g, w, "visible text differs"),
        }
    }

    // `limit` truncates, `batch` renames, nothing else changes.
    let limited_settings = InputSpec {
        limit: Some(LIMIT),
        batch: Some("b".into()),
        ..input.clone()
    };
    let limited = parse(text, &path, &limited_settings, 7);
    assert_eq!(limited.title, list.title);
    assert_eq!(limited.documents.len(), list.documents.len().min(LIMIT));
    for (a, b) in limited.documents.iter().zip(&list.documents) {
        assert_eq!(a.batch, "b");
        assert_eq!((&a.id, &a.text), (&b.id, &b.text));
    }
});
