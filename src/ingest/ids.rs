//! Unique document ids across every file (and every chunk of a streamed file) of a read.
//!
//! A repeated id is an error in `fail` mode; in `skip` mode the later document keeps its text
//! and gets `<id>~2`, `<id>~3`, ..., recorded in the corpus's renamed list (nothing is lost).
//! The ids seen are kept as 128-bit hashes with the file and row of each (24 bytes per
//! document, whatever the ids' length), so a streamed corpus of any size is checked in
//! bounded memory. Ids are hashed with XXH3 (128 bits); two distinct ids of one read share a
//! hash with a chance of about n² / 2¹²⁹ (under 10⁻²⁴ for a billion documents), so in practice
//! a repeat is a repeat. The Spark driver (`distributed/spark`) numbers repeats by the same
//! rule, comparing the ids themselves, so both give the same names.

use super::{DocProblem, Document, IngestError, OnBadDocument, Renamed};
use std::collections::hash_map::{Entry, HashMap};
use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// The ids seen so far in one read.
#[derive(Debug, Default)]
pub struct Ids {
    /// Hash of an id -> (file index, row) where it was first seen.
    seen: HashMap<u128, (u32, u32), BuildIdentity>,
    /// Each file's path as outputs show it, by file index.
    files: Vec<PathBuf>,
}

impl Ids {
    /// XXH3, 128 bits: fast, and well mixed for ids that differ in a character or two.
    fn hash(id: &str) -> u128 {
        xxhash_rust::xxh3::xxh3_128(id.as_bytes())
    }

    /// Makes the ids of `docs` (documents of file `source`, read at `location` and shown as
    /// `shown`) unique against every id seen before, renaming repeats into `renamed` or
    /// failing on the first in `fail` mode.
    pub fn dedupe(
        &mut self,
        docs: &mut [Document],
        renamed: &mut Vec<Renamed>,
        source: usize,
        (location, shown): (&Path, &Path),
        on_bad: OnBadDocument,
    ) -> Result<(), IngestError> {
        if self.files.len() <= source {
            self.files.resize(source + 1, PathBuf::new());
        }
        self.files[source] = shown.to_path_buf();
        self.seen.reserve(docs.len());
        for d in docs {
            let at = (source as u32, d.row as u32);
            let (file, row) = match self.seen.entry(Self::hash(&d.id)) {
                Entry::Vacant(e) => {
                    e.insert(at);
                    continue;
                }
                Entry::Occupied(e) => *e.get(),
            };
            if on_bad == OnBadDocument::Fail {
                return Err(IngestError::BadDocument {
                    path: location.to_path_buf(),
                    row: d.row,
                    reason: DocProblem::DuplicateId {
                        id: d.id.clone(),
                        first_file: self.files[file as usize].clone(),
                        first_row: row as usize,
                    },
                });
            }
            let new = (2..)
                .map(|n| format!("{}~{n}", d.id))
                .find(|new| !self.seen.contains_key(&Self::hash(new)))
                .expect("an unused suffix");
            self.seen.insert(Self::hash(&new), at);
            renamed.push(Renamed {
                file: shown.to_path_buf(),
                row: d.row,
                id: std::mem::replace(&mut d.id, new.clone()),
                new_id: new,
            });
        }
        Ok(())
    }
}

/// The keys are hashes already: the map uses them as they are (their low 64 bits).
#[derive(Debug, Default, Clone, Copy)]
struct BuildIdentity;

impl std::hash::BuildHasher for BuildIdentity {
    type Hasher = Identity;
    fn build_hasher(&self) -> Identity {
        Identity(0)
    }
}

struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(rows: &[(usize, &str)]) -> Vec<Document> {
        rows.iter()
            .map(|&(row, id)| Document {
                id: id.into(),
                source: 0,
                row,
                title: None,
                text: "text".into(),
                time: None,
                label: None,
                class: None,
                batch: "b".into(),
            })
            .collect()
    }

    #[test]
    fn repeats_across_files_are_renamed_at_their_own_row_or_name_the_first() {
        let (a, b) = (Path::new("a.csv"), Path::new("b.csv"));
        let mut ids = Ids::default();
        let mut renamed = Vec::new();
        // Row 2 of a.csv was skipped: rows are the file's, not positions in the corpus.
        let mut first = docs(&[(1, "x"), (3, "y")]);
        ids.dedupe(&mut first, &mut renamed, 0, (a, a), OnBadDocument::Skip)
            .unwrap();
        let mut second = docs(&[(1, "y"), (2, "y"), (3, "y~2"), (4, "z")]);
        ids.dedupe(&mut second, &mut renamed, 1, (b, b), OnBadDocument::Skip)
            .unwrap();
        let got: Vec<&str> = second.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(got, ["y~2", "y~3", "y~2~2", "z"]);
        let rows: Vec<(usize, &str, &str)> = renamed
            .iter()
            .map(|r| (r.row, r.id.as_str(), r.new_id.as_str()))
            .collect();
        assert_eq!(
            rows,
            [(1, "y", "y~2"), (2, "y", "y~3"), (3, "y~2", "y~2~2")]
        );
        assert!(renamed.iter().all(|r| r.file == b));

        let mut third = docs(&[(7, "y")]);
        let err = ids
            .dedupe(
                &mut third,
                &mut renamed,
                2,
                (Path::new("/data/c.csv"), Path::new("c.csv")),
                OnBadDocument::Fail,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "input /data/c.csv: row 7: duplicate id \"y\" (first seen in a.csv row 3) (on-bad-document = \"fail\")"
        );
    }
}
