//! The paper-list format of the seed files: a title line, then documents separated by blank lines.
//!
//! The first non-empty line is the list's title. After it, each run of non-blank lines is one
//! document (lines of a run are joined with a space). A UTF-8 BOM, CRLF line endings and trailing
//! spaces are tolerated; a line holding only whitespace counts as blank. Documents get the id
//! `<file-stem>:<n>`, counting from 1. The papers have no title field, so the display title is
//! made later, from the cleaned text.

use super::InputSpec;
use super::{file_stem, Document};
use std::path::Path;

/// A parsed paper list.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperList {
    pub title: Option<String>,
    pub documents: Vec<Document>,
}

/// Parses the text of one paper-list file (already checked to be UTF-8).
pub fn parse(text: &str, path: &Path, input: &InputSpec, source: usize) -> PaperList {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let stem = file_stem(path);
    let batch = input.batch.clone().unwrap_or_else(|| stem.clone());
    let mut title = None;
    let mut documents = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, documents: &mut Vec<Document>| {
        if !current.is_empty() {
            documents.push(Document {
                id: format!("{stem}:{}", documents.len() + 1),
                source,
                row: documents.len() + 1,
                title: None,
                text: std::mem::take(current),
                time: None,
                label: None,
                class: None,
                batch: batch.clone(),
            });
        }
    };
    for line in text.split('\n') {
        let line = line
            .trim_end_matches(['\r', ' ', '\t', '\u{a0}'])
            .trim_start_matches(' ');
        if line.trim().is_empty() {
            flush(&mut current, &mut documents);
            continue;
        }
        if title.is_none() {
            title = Some(line.trim().to_string());
            continue;
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
    }
    flush(&mut current, &mut documents);
    if let Some(limit) = input.limit {
        documents.truncate(limit);
    }
    PaperList { title, documents }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn input() -> InputSpec {
        InputSpec {
            pattern: "x.txt".into(),
            resolved: PathBuf::from("x.txt"),
            format: None,
            text: None,
            id: None,
            title: None,
            time: None,
            label: None,
            class: None,
            batch: None,
            filter: None,
            limit: None,
        }
    }

    #[test]
    fn title_then_blank_separated_documents() {
        let text = "\u{feff}NeurIPS 2026 论文列表\r\n\r\nFirst abstract here.  \r\n\r\n\r\nSecond one.\r\ncontinues\n   \nThird.";
        let list = parse(text, Path::new("dir/003_abc.txt"), &input(), 4);
        assert_eq!(list.title.as_deref(), Some("NeurIPS 2026 论文列表"));
        let ids: Vec<_> = list.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["003_abc:1", "003_abc:2", "003_abc:3"]);
        assert_eq!(list.documents[0].text, "First abstract here.");
        assert_eq!(list.documents[1].text, "Second one. continues");
        assert_eq!(list.documents[2].source, 4);
        assert_eq!(list.documents[2].batch, "003_abc");
    }

    #[test]
    fn leading_blank_lines_and_no_documents() {
        let list = parse("\n\n  \nOnly a title\n\n", Path::new("a.txt"), &input(), 0);
        assert_eq!(list.title.as_deref(), Some("Only a title"));
        assert!(list.documents.is_empty());
    }
}
