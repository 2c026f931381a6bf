//! Static token vectors: a pretrained table with one vector per token of a tokenizer
//! (WordLlama's `l2_supercat_256`, or a model2vec folder), and a text's vector as the mean of
//! its tokens' rows, unit length.
//!
//! Why: the transformer costs milliseconds per abstract; a table lookup costs microseconds, so
//! the meaning a pretrained model learned comes at about TF-IDF's cost (the arXiv 75k run takes
//! 1.25 to 1.38 times as long in the medians measured, docs/benchmarks.md), in fits, `assign`,
//! streamed chunks and Spark executors alike. A text is tokenized without special tokens and
//! without a length limit (as WordLlama's own `embed` does), the tokenizer's special tokens
//! (WordLlama's ids 0-2) are left out of the mean, and a text is embedded alone, so its vector
//! never depends on the other texts, the batch or the thread count.
//!
//! The folder holds one `*.safetensors` file with one matrix (`embedding.weight`, WordLlama;
//! `embeddings`, model2vec) in f16, bf16 or f32, and one tokenizers JSON file (`tokenizer.json`,
//! or a single `*tokenizer*.json`). [`StaticFolder::open`] checks both before anything runs.

use super::bpe::{Merges, Scratch};
use super::folder::check_weights;
use super::rows::Rows;
use super::EmbedError;
use ndarray::ArrayViewMut2;
use std::path::{Path, PathBuf};

/// The tensor names a static table may have.
const TENSORS: [&str; 2] = ["embedding.weight", "embeddings"];

/// How the table's numbers are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F16,
    Bf16,
    F32,
}

impl Dtype {
    fn parse(s: &str) -> Option<Dtype> {
        match s {
            "F16" => Some(Dtype::F16),
            "BF16" => Some(Dtype::Bf16),
            "F32" => Some(Dtype::F32),
            _ => None,
        }
    }

    fn bytes(self) -> usize {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F32 => 4,
        }
    }
}

/// A checked static-vector folder: its two files, the table's shape and where its bytes lie,
/// the weights' SHA-256 (which names the model in saved models and caches), and the tokenizer
/// as the check read it (so loading the table does not read it again).
#[derive(Debug, Clone)]
pub struct StaticFolder {
    pub dir: PathBuf,
    pub weights: PathBuf,
    pub tokenizer: PathBuf,
    pub rows: usize,
    pub dims: usize,
    dtype: Dtype,
    /// Byte range of the table in the weights file.
    data: (usize, usize),
    pub weights_sha256: String,
    spelling: std::sync::Arc<Spelling>,
}

/// How a text becomes ids: the tokenizer, and its cuts into words when it has that shape
/// ([`SpaceWords`]).
struct Spelling {
    tokenizer: tokenizers::Tokenizer,
    words: Option<SpaceWords>,
}

impl std::fmt::Debug for Spelling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Spelling(cut into words: {})", self.words.is_some())
    }
}

impl StaticFolder {
    /// Whether `dir` looks like a static-vector folder: no BERT `config.json` (a model2vec
    /// `config.json` says `"model_type": "model2vec"`) and a `*.safetensors` file.
    pub fn looks_static(dir: &Path) -> bool {
        let config = dir.join("config.json");
        let model2vec = std::fs::read_to_string(&config)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v["model_type"] == "model2vec");
        (!config.exists() || model2vec) && !files_ending(dir, ".safetensors").is_empty()
    }

    /// Reads and checks the folder: one weights file, whole, holding one 2-D table under a
    /// known name; one tokenizer whose every id has a row in the table.
    pub fn open(dir: &Path) -> Result<StaticFolder, EmbedError> {
        let weights = only_file(dir, &files_ending(dir, ".safetensors"), "*.safetensors")?;
        let tokenizer = match dir.join("tokenizer.json") {
            p if p.is_file() => p,
            _ => {
                let found: Vec<PathBuf> = files_ending(dir, ".json")
                    .into_iter()
                    .filter(|p| {
                        p.file_name()
                            .is_some_and(|n| n.to_string_lossy().contains("tokenizer"))
                    })
                    .collect();
                only_file(dir, &found, "tokenizer.json (or one *tokenizer*.json)")?
            }
        };
        // The weights' hash and the tokenizer's parse (each tens of milliseconds) side by side.
        let (checked, spelling) = rayon::join(
            || {
                let sha256 = check_weights(&weights)?;
                Ok::<_, EmbedError>((sha256, table_header(&weights)?))
            },
            || read_spelling(&tokenizer),
        );
        let (weights_sha256, (dtype, rows, dims, data)) = checked?;
        let spelling = spelling?;
        let vocab = spelling.tokenizer.get_vocab_size(true);
        if vocab > rows {
            return Err(EmbedError::Tokenizer {
                path: tokenizer,
                why: format!(
                    "its vocabulary has {vocab} tokens, the table {rows} rows ({})",
                    weights.display()
                ),
            });
        }
        Ok(StaticFolder {
            dir: dir.into(),
            weights,
            tokenizer,
            rows,
            dims,
            dtype,
            data,
            weights_sha256,
            spelling: std::sync::Arc::new(spelling),
        })
    }
}

/// The tokenizer at `path`, cutting and padding nothing, with its cuts into words (the file's
/// shape read beside the tokenizer's own parse).
fn read_spelling(path: &Path) -> Result<Spelling, EmbedError> {
    let bad = |why: String| EmbedError::Tokenizer {
        path: path.into(),
        why,
    };
    let json = super::folder::read_text(path)?;
    let (tokenizer, words) = rayon::join(
        || json.parse::<tokenizers::Tokenizer>(),
        || SpaceWords::of(&json),
    );
    let mut tokenizer = tokenizer.map_err(|e| bad(e.to_string()))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(None)
        .map_err(|e| bad(e.to_string()))?;
    Ok(Spelling { tokenizer, words })
}

/// The files of `dir` whose names end in `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

/// The one file of `found`, or an error naming what the folder lacks or holds twice.
fn only_file(dir: &Path, found: &[PathBuf], what: &str) -> Result<PathBuf, EmbedError> {
    match found {
        [one] => Ok(one.clone()),
        [] => Err(EmbedError::Missing {
            path: dir.join(what),
        }),
        many => Err(EmbedError::Weights {
            path: dir.into(),
            why: format!(
                "a static model folder holds one {what}, this one {}",
                many.len()
            ),
        }),
    }
}

/// The table's dtype, shape and byte range from the safetensors header (the file is known to
/// be whole: [`check_weights`]).
fn table_header(path: &Path) -> Result<(Dtype, usize, usize, (usize, usize)), EmbedError> {
    let bad = |why: String| EmbedError::Weights {
        path: path.into(),
        why,
    };
    let bytes = std::fs::read(path).map_err(|source| EmbedError::Read {
        path: path.into(),
        source,
    })?;
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("checked")) as usize;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + header_len]).map_err(|e| bad(e.to_string()))?;
    let (name, t) = TENSORS
        .iter()
        .find_map(|n| header.get(*n).map(|t| (*n, t)))
        .ok_or_else(|| bad(format!("no tensor named {}", TENSORS.join(" or "))))?;
    let dtype = t["dtype"]
        .as_str()
        .and_then(Dtype::parse)
        .ok_or_else(|| bad(format!("{name} is {}, not F16, BF16 or F32", t["dtype"])))?;
    let usizes = |v: &serde_json::Value| -> Vec<usize> {
        v.as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|d| d.as_u64())
                    .map(|d| d as usize)
                    .collect()
            })
            .unwrap_or_default()
    };
    let shape = usizes(&t["shape"]);
    let [rows, dims] = shape[..] else {
        return Err(bad(format!("{name} has shape {shape:?}, not rows x dims")));
    };
    let offsets = usizes(&t["data_offsets"]);
    let [start, end] = offsets[..] else {
        return Err(bad(format!("{name} has no data_offsets")));
    };
    if end - start != rows * dims * dtype.bytes() || dims == 0 || rows == 0 {
        return Err(bad(format!(
            "{name}: {} bytes for a {rows} x {dims} table",
            end - start
        )));
    }
    let base = 8 + header_len;
    Ok((dtype, rows, dims, (base + start, base + end)))
}

/// A loaded static model: the table ([`Rows`]) and the tokenizer.
pub struct TokenTable {
    table: Rows,
    /// Ids left out of a text's mean: the tokenizer's special tokens.
    special: Vec<bool>,
    /// The tokenizer the folder's check read, with its cuts into words when the BPE never
    /// merges across a space (each word then looked up once, [`SpaceWords`]).
    spelling: std::sync::Arc<Spelling>,
    /// The threads' caches of words between calls (one per run at most), so a stream's
    /// chunks do not spell the same words again.
    seen: std::sync::Mutex<Vec<WordIds>>,
}

impl TokenTable {
    /// Reads the folder's table (f16 kept, bf16 widened to f32) and tokenizer.
    pub fn load(folder: &StaticFolder) -> Result<TokenTable, EmbedError> {
        let bytes = std::fs::read(&folder.weights).map_err(|source| EmbedError::Read {
            path: folder.weights.clone(),
            source,
        })?;
        let raw = bytes
            .get(folder.data.0..folder.data.1)
            .ok_or_else(|| EmbedError::Weights {
                path: folder.weights.clone(),
                why: "changed since it was checked".into(),
            })?;
        let table = match folder.dtype {
            Dtype::F32 => Rows::of_f32(
                raw.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
                folder.dims,
            ),
            Dtype::F16 => Rows::of_f16(
                raw.chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]))
                    .collect(),
                folder.dims,
            ),
            Dtype::Bf16 => Rows::of_f32(
                raw.chunks_exact(2)
                    .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
                    .collect(),
                folder.dims,
            ),
        };
        let spelling = folder.spelling.clone();
        let mut special = vec![false; folder.rows];
        for (id, token) in spelling.tokenizer.get_added_tokens_decoder() {
            if token.special {
                if let Some(s) = special.get_mut(id as usize) {
                    *s = true;
                }
            }
        }
        Ok(TokenTable {
            table,
            special,
            spelling,
            seen: std::sync::Mutex::default(),
        })
    }

    /// The vector's length.
    pub fn dims(&self) -> usize {
        self.table.dims()
    }

    /// Each text's token ids (no special tokens added, nothing cut).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let mut ids = Vec::new();
        self.cached_token_ids(text, &mut WordIds::default(), &mut ids)?;
        Ok(ids)
    }

    /// [`Self::token_ids`] into `ids` (emptied first), with the words already seen by this
    /// thread answered from `seen`.
    fn cached_token_ids(
        &self,
        text: &str,
        seen: &mut WordIds,
        ids: &mut Vec<u32>,
    ) -> Result<(), EmbedError> {
        ids.clear();
        let Spelling { tokenizer, words } = &*self.spelling;
        match words {
            Some(w) if !w.holds_added(text) => w.token_ids(tokenizer, text, seen, ids),
            _ => {
                ids.extend(self.whole_text_ids(text)?);
                Ok(())
            }
        }
    }

    /// Whether texts are cut into words before the BPE ([`SpaceWords`]).
    pub fn cuts_words(&self) -> bool {
        self.spelling.words.is_some()
    }

    /// The token ids from the tokenizer's own `encode`, the text as one piece.
    pub fn whole_text_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let e = self
            .spelling
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| EmbedError::Encode(e.to_string()))?;
        Ok(e.get_ids().to_vec())
    }

    /// The sum of each text's token rows into `out` (row `i` is `texts[i]`'s, zero on entry;
    /// zero for a text without a token), each row's first `out.ncols()` values (at most the
    /// table's width): not yet unit length, so that a sentence vector cut to its first values
    /// ([`super::Sentences::first`]) is the unit vector of those values' sums, to the bit,
    /// whether all the values were summed (a fit, which chooses its features after embedding)
    /// or only the kept ones (placement).
    /// The texts are cut into one run per worker thread, each with its own cache of words
    /// (kept for the whole run and for the next call, so each thread spells a word once), and each run goes in
    /// chunks; `done(n)` is called after each chunk. A text's vector depends on its text
    /// alone, never on the run or the thread.
    pub fn encode_into(
        &self,
        texts: &[&str],
        mut out: ArrayViewMut2<f32>,
        done: impl Fn(usize) + Sync,
    ) -> Result<(), EmbedError> {
        use rayon::prelude::*;
        const CHUNK: usize = 256;
        let per_run = texts.len().div_ceil(rayon::current_num_threads()).max(1);
        out.axis_chunks_iter_mut(ndarray::Axis(0), per_run)
            .into_par_iter()
            .zip(texts.par_chunks(per_run))
            .try_for_each(|(mut rows, run)| {
                let mut seen = self
                    .seen
                    .lock()
                    .expect("not poisoned")
                    .pop()
                    .unwrap_or_default();
                // Written before the sums read them: the rows are fresh zeros from the
                // allocator, and a page first read is mapped to the kernel's shared zero page,
                // so the first write to it copies the page and flushes the other core's TLB
                // (an interrupt on each core, per 4 KB). Written first, each page is mapped
                // once (docs/benchmarks.md has the figures).
                rows.fill(0.0);
                let (mut ids, mut kept) = (Vec::new(), Vec::new());
                for (i, text) in run.iter().enumerate() {
                    if let Some(next) = run.get(i + 1) {
                        ask_for_text(next);
                    }
                    self.cached_token_ids(text, &mut seen, &mut ids)?;
                    let mut row = rows.row_mut(i);
                    let row = row.as_slice_mut().expect("a row's values lie side by side");
                    self.sum_into(&ids, &mut kept, row);
                    if (i + 1) % CHUNK == 0 || i + 1 == run.len() {
                        done((i % CHUNK) + 1);
                    }
                }
                self.seen.lock().expect("not poisoned").push(seen);
                Ok::<(), EmbedError>(())
            })
    }

    /// The sum of the rows of `ids` (special tokens and ids past the table left out), their
    /// first `row.len()` values, into `row` (zero on entry); `kept` is scratch space, used only
    /// when some id is left out (rarely: a text's ids hold a special token only where the text
    /// spells one, and such a text goes through the tokenizer whole), so the ids are not
    /// copied one by one. The mean's direction: the sentence vector once made unit length.
    fn sum_into(&self, ids: &[u32], kept: &mut Vec<u32>, row: &mut [f32]) {
        let out = |id: u32| self.special.get(id as usize).copied().unwrap_or(true);
        let ids = match ids.iter().any(|&id| out(id)) {
            false => ids,
            true => {
                kept.clear();
                kept.extend(ids.iter().copied().filter(|&id| !out(id)));
                kept.as_slice()
            }
        };
        self.table.add(ids, row);
    }
}

/// Asks for a text's bytes (up to its first 4 KB, a cache line at a time) while the text
/// before it is cut: each text is its own allocation, long out of the cache by then, so that
/// its first read waits less on memory (docs/benchmarks.md has the figures).
fn ask_for_text(text: &str) {
    const LINE: usize = 64;
    let bytes = &text.as_bytes()[..text.len().min(4096)];
    for at in (0..bytes.len()).step_by(LINE) {
        crate::simd::prefetch(&bytes[at]);
    }
}

/// Llama-2's tokenizer as WordLlama ships it (SentencePiece BPE): the text gets a leading `▁`
/// and every space becomes `▁`, there is no pre-tokenizer, and the BPE model then works on the
/// whole text, which costs time that grows faster than the text. No token of the vocabulary
/// holds a `▁` after another character, so no merge joins the end of one word to the next
/// `▁`: a merge only ever joins neighbours, and cutting the text before each `▁` that follows
/// another character gives the same ids, word by word, with a cache of words ([`WordIds`])
/// answering the repeated ones. The same holds inside a word: a merge makes a token of the
/// vocabulary, so two characters that no token holds side by side (`l` then `,`; `)` then
/// `.`) are never joined, and the word is cut there too. "model," and "(model)" are then
/// "model" and its punctuation, spelled once: on 74,728 arXiv abstracts the distinct pieces
/// go from 531,748 to 159,054. [`SpaceWords::of`] checks the tokenizer file for exactly this
/// shape; any other tokenizer runs whole texts.
struct SpaceWords {
    /// The added tokens' texts: a text holding one runs whole, as the tokenizer cuts there.
    added: Vec<String>,
    /// Their distinct first characters: WordLlama's three ("<unk>", "<s>", "</s>") share
    /// theirs, so a text is scanned once, not once for each.
    firsts: Vec<char>,
    /// Whether a text is cut between the bytes `a` and `b`: bit `a * 256 + b`. It is before a
    /// space that follows another byte, and between two printable ASCII characters that no
    /// token holds side by side (between other bytes: never).
    cut: Box<[u64; 1024]>,
    /// The BPE's merges, to spell a new word without the crate ([`Merges`]), when the model
    /// is a plain BPE.
    merges: Option<Merges>,
}

impl SpaceWords {
    const SPACE: char = '\u{2581}';

    /// Whether `text` holds an added token's text (one scan for their first characters, and
    /// a search for each only when one is there).
    fn holds_added(&self, text: &str) -> bool {
        self.firsts.iter().any(|&c| text.contains(c))
            && self.added.iter().any(|a| text.contains(a.as_str()))
    }

    fn of(json: &str) -> Option<SpaceWords> {
        let v: serde_json::Value = serde_json::from_str(json).ok()?;
        let space = Self::SPACE.to_string();
        let normalizer = serde_json::json!({"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": space},
            {"type": "Replace", "pattern": {"String": " "}, "content": space},
        ]});
        let model = v.get("model")?;
        // `ignore_merges` would answer a piece found whole in the vocabulary without the
        // merges that the text around it goes through.
        let plain = v.get("normalizer") == Some(&normalizer)
            && v.get("pre_tokenizer").is_some_and(|p| p.is_null())
            && model.get("type")?.as_str()? == "BPE"
            && model.get("dropout").is_none_or(|d| d.is_null())
            && model.get("ignore_merges").is_none_or(|m| m == false);
        if !plain {
            return None;
        }
        let vocab = model.get("vocab")?.as_object()?;
        let mut joins = Box::new([0u128; 128]);
        for t in vocab.keys() {
            for (a, b) in t.chars().zip(t.chars().skip(1)) {
                if a.is_ascii() && b.is_ascii() {
                    joins[a as usize] |= 1 << (b as u32);
                }
            }
        }
        let joins_words = vocab.keys().any(|t| {
            let mut prev = Self::SPACE;
            t.chars().any(|c| {
                let after_char = c == Self::SPACE && prev != Self::SPACE;
                prev = c;
                after_char
            })
        });
        if joins_words {
            return None;
        }
        let added = v
            .get("added_tokens")?
            .as_array()?
            .iter()
            .map(|t| Some(t.get("content")?.as_str()?.to_string()))
            .collect::<Option<Vec<String>>>()?;
        let mut cut = Box::new([0u64; 1024]);
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let unjoined = a.is_ascii_graphic()
                    && b.is_ascii_graphic()
                    && (joins[a as usize] >> b) & 1 == 0;
                if (b == b' ' && a != b' ') || unjoined {
                    let bit = (a as usize) << 8 | b as usize;
                    cut[bit >> 6] |= 1 << (bit & 63);
                }
            }
        }
        let mut firsts: Vec<char> = added.iter().filter_map(|a| a.chars().next()).collect();
        firsts.sort_unstable();
        firsts.dedup();
        Some(SpaceWords {
            added,
            firsts,
            cut,
            merges: Merges::of(model),
        })
    }

    /// Whether the text is cut between the bytes `a` and `b` (a space, or any ASCII character,
    /// is one byte in UTF-8 and never part of another character).
    fn cuts(&self, a: u8, b: u8) -> bool {
        let bit = (a as usize) << 8 | b as usize;
        (self.cut[bit >> 6] >> (bit & 63)) & 1 == 1
    }

    /// `text`'s token ids into `ids`: the text is cut before each space that follows another
    /// character (the cuts of the normalized text, whose spaces are `▁` and which starts with
    /// one) and between two characters no token joins, and each piece is spelled by the BPE
    /// once per thread ([`WordIds`]).
    fn token_ids(
        &self,
        tokenizer: &tokenizers::Tokenizer,
        text: &str,
        seen: &mut WordIds,
        ids: &mut Vec<u32>,
    ) -> Result<(), EmbedError> {
        // The cuts of a block of bytes are found first, without a branch (a cut comes every
        // few bytes, where a branch would be mispredicted); then its pieces' keys, each asking
        // for its slot (a read from memory that would otherwise stall the lookup: 45% of the
        // lookups' samples sat on it); then the pieces are looked up.
        const BLOCK: usize = 4096;
        const AHEAD: usize = 16;
        let bytes = text.as_bytes();
        let mut at = [0u16; BLOCK];
        let mut keys = std::mem::take(&mut seen.keys);
        let mut start = 0;
        let mut from = 1;
        while from < bytes.len() {
            let to = (from + BLOCK).min(bytes.len());
            let mut n = 0;
            for (i, pair) in bytes[from - 1..to].windows(2).enumerate() {
                at[n] = i as u16;
                n += usize::from(self.cuts(pair[0], pair[1]));
            }
            keys.clear();
            let mut piece = start;
            for &i in &at[..n] {
                let cut = from + i as usize;
                let key = WordIds::key(text, piece, cut, piece == 0);
                if keys.len() < AHEAD {
                    seen.prefetch(key);
                }
                keys.push(key);
                piece = cut;
            }
            for (j, (&i, &key)) in at[..n].iter().zip(&keys).enumerate() {
                if let Some(&next) = keys.get(j + AHEAD) {
                    seen.prefetch(next);
                }
                let cut = from + i as usize;
                seen.push_keyed((tokenizer, self), &text[start..cut], start == 0, key, ids)?;
                start = cut;
            }
            from = to;
        }
        seen.keys = keys;
        if !text.is_empty() {
            let key = WordIds::key(text, start, text.len(), start == 0);
            seen.push_keyed((tokenizer, self), &text[start..], start == 0, key, ids)?;
        }
        Ok(())
    }
}

/// A thread's words already cut into ids (by [`SpaceWords`]): one open-addressed table of
/// slots, each holding a piece's key (its own bytes when it has at most 15, else its 128-bit
/// XXH3 hash; [`WordIds::key`]) and up to three of its ids (a longer word's ids lie in one
/// array beside it), so a known word costs a load of its bytes (a hash when long) and, mostly,
/// one read of one cache line. Most words of a text are frequent ones ("the",
/// "of", ",", "model"), whose slots stay in the core's cache; a rare word's slot is asked for
/// ahead ([`WordIds::prefetch`]). A map beside a direct-mapped table of hot words cost up to
/// three misses for a word the hot table had lost (docs/benchmarks.md). The table doubles
/// from 65,536 slots while more than 7 in 10 are taken, up to 524,288, then is emptied, so
/// memory stays bounded on any corpus (32 bytes a slot, 16 MB at most).
struct WordIds {
    /// Empty until the first word.
    slots: Vec<Slot>,
    /// The first table's slots, and the most it grows to (powers of two).
    first_slots: usize,
    max_slots: usize,
    /// Slots taken.
    words: usize,
    /// The ids of words of more than three.
    long: Vec<u32>,
    /// Scratch: the keys of a block's pieces.
    keys: Vec<u128>,
    /// Scratch: a new word's symbols while the merges spell it.
    merging: Scratch,
}

/// A word's slot: its key, how many ids it has (0: an empty slot), and its ids when at most
/// three (else `ids[0]` is where they start in [`WordIds::long`]).
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u128,
    len: u32,
    ids: [u32; 3],
}

impl Default for WordIds {
    fn default() -> Self {
        WordIds::with_sizes(Self::FIRST_SLOTS, Self::MAX_SLOTS)
    }
}

impl WordIds {
    const FIRST_SLOTS: usize = 1 << 16;
    const MAX_SLOTS: usize = 1 << 19;
    /// Marks the key of a piece that opens its text (digits of pi).
    const FIRST: u128 = 0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344;

    /// An empty table that starts at `first_slots` and grows to `max_slots` (tests use tiny ones).
    fn with_sizes(first_slots: usize, max_slots: usize) -> WordIds {
        WordIds {
            slots: Vec::new(),
            first_slots,
            max_slots,
            words: 0,
            long: Vec::new(),
            keys: Vec::new(),
            merging: Scratch::default(),
        }
    }

    /// The key of `text[from..to]` (`first` when it opens the text). A piece of at most 15
    /// bytes is its own key: its bytes, with its length and `first` in the top byte (0 to 31),
    /// so a short piece (most of them) costs a load, not a hash, and two short pieces never
    /// share a key. A longer one's key is its 128-bit XXH3 hash (as the vector cache knows
    /// texts) with the top bit set, so it never equals a short piece's.
    fn key(text: &str, from: usize, to: usize, first: bool) -> u128 {
        let bytes = text.as_bytes();
        let n = to - from;
        if n <= 15 {
            // Sixteen bytes read at once where the text has them, the piece's kept.
            let raw = match bytes.get(from..from + 16) {
                Some(b) => u128::from_le_bytes(b.try_into().expect("16 bytes")),
                None => {
                    let mut b = [0u8; 16];
                    b[..n].copy_from_slice(&bytes[from..to]);
                    u128::from_le_bytes(b)
                }
            };
            let tag = (n as u128 | (first as u128) << 4) << 120;
            return raw & ((1u128 << (8 * n)) - 1) | tag;
        }
        // Not a seed for `first`: on short inputs XXH3's seed acts as a change of a few input
        // bits, so "MIDAS" opening a text and "LIDAR" inside one had one key. A constant on the
        // output keeps the two keys apart as any two texts' hashes are.
        let hash = xxhash_rust::xxh3::xxh3_128(&bytes[from..to]);
        (hash ^ if first { Self::FIRST } else { 0 }) | 1 << 127
    }

    /// Where `key` starts its probe in a table of `mask + 1` slots: a short piece's key is
    /// its bytes, so they are mixed first (a multiply whose high and low halves are folded).
    fn home(key: u128, mask: usize) -> usize {
        let (lo, hi) = (key as u64, (key >> 64) as u64);
        let x = lo ^ hi.rotate_left(32).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let m = x as u128 * 0xd6e8_feb8_6659_fd93u128;
        (m as u64 ^ (m >> 64) as u64) as usize & mask
    }

    /// Asks for `key`'s first slot to be brought into the cache (a hint: nothing is read).
    fn prefetch(&self, key: u128) {
        if let Some(slot) = self
            .slots
            .get(Self::home(key, self.slots.len().wrapping_sub(1)))
        {
            crate::simd::prefetch(slot);
        }
    }

    /// The slot holding `key`, or the empty one where it would go (linear probing: some slot
    /// is always empty).
    fn find(slots: &[Slot], key: u128) -> usize {
        let mask = slots.len() - 1;
        let mut i = Self::home(key, mask);
        while slots[i].len != 0 && slots[i].key != key {
            i = (i + 1) & mask;
        }
        i
    }

    /// Room for one more word: the table doubled, or emptied when it is as large as it gets
    /// (or the long words' ids would pass what a `u32` counts).
    fn make_room(&mut self, more_ids: usize) {
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); self.first_slots];
        }
        let full = (self.words + 1) * 10 > self.slots.len() * 7;
        let long_full = self.long.len() + more_ids > u32::MAX as usize;
        if (full && self.slots.len() >= self.max_slots) || long_full {
            self.slots.fill(Slot::default());
            self.words = 0;
            self.long.clear();
        } else if full {
            let mut slots = vec![Slot::default(); self.slots.len() * 2];
            for s in self.slots.iter().filter(|s| s.len != 0) {
                let i = Self::find(&slots, s.key);
                slots[i] = *s;
            }
            self.slots = slots;
        }
    }

    /// Appends the ids of `piece` (a piece of the text as given: `first` when it opens the text,
    /// which then gets the tokenizer's leading `▁`; `key` its [`WordIds::key`]) to `out`.
    fn push_keyed(
        &mut self,
        (tokenizer, words): (&tokenizers::Tokenizer, &SpaceWords),
        piece: &str,
        first: bool,
        key: u128,
        out: &mut Vec<u32>,
    ) -> Result<(), EmbedError> {
        use tokenizers::Model;
        if !self.slots.is_empty() {
            let slot = self.slots[Self::find(&self.slots, key)];
            match slot.len {
                0 => {}
                1..=3 => {
                    // Three ids copied whatever the length (a fixed copy, not a call), then
                    // the spare ones dropped.
                    let n = out.len();
                    out.extend_from_slice(&slot.ids);
                    out.truncate(n + slot.len as usize);
                    return Ok(());
                }
                len => {
                    let at = slot.ids[0] as usize;
                    out.extend_from_slice(&self.long[at..at + len as usize]);
                    return Ok(());
                }
            }
        }
        // The piece as the tokenizer's normalizer leaves it: a leading `▁` on the text's
        // first, each space a `▁`.
        let chars = first
            .then_some(SpaceWords::SPACE)
            .into_iter()
            .chain(piece.chars())
            .map(|c| if c == ' ' { SpaceWords::SPACE } else { c });
        // At most one id a byte, and the leading `▁`.
        self.make_room(piece.len() + 3);
        let at = self.long.len();
        let spelled = (words.merges.as_ref())
            .is_some_and(|m| m.spell(chars.clone(), &mut self.merging, &mut self.long));
        if !spelled {
            let word: String = chars.collect();
            let tokens = tokenizer
                .get_model()
                .tokenize(&word)
                .map_err(|e| EmbedError::Encode(e.to_string()))?;
            self.long.extend(tokens.iter().map(|t| t.id));
        }
        let ids = &self.long[at..];
        out.extend_from_slice(ids);
        let mut slot = Slot {
            key,
            len: ids.len() as u32,
            ids: [at as u32, 0, 0],
        };
        if ids.len() <= 3 {
            slot.ids[..ids.len()].copy_from_slice(ids);
            self.long.truncate(at);
        }
        if slot.len > 0 {
            let i = Self::find(&self.slots, key);
            self.slots[i] = slot;
            self.words += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tokenizer of WordLlama's shape ([`SpaceWords`]): a `▁` before the text and for each
    /// space, a BPE over the letters with a few merges.
    fn spelling() -> Spelling {
        let mut vocab = serde_json::Map::new();
        let letters = "\u{2581}abcdefghijklmnopqrstuvwxyz0123456789";
        for (i, c) in letters.chars().enumerate() {
            vocab.insert(c.to_string(), i.into());
        }
        let merges = ["\u{2581} t", "h e", "\u{2581}t he", "o r", "w or"];
        for m in merges {
            let joined = m.replace(' ', "");
            let n = vocab.len();
            vocab.insert(joined, n.into());
        }
        // A token no merge makes: "x" beside "x" is then never cut, and "xxxxxx" is six ids.
        let n = vocab.len();
        vocab.insert("xxxx".into(), n.into());
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u{2581}"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"},
            ]},
            "pre_tokenizer": null, "post_processor": null, "decoder": null,
            "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false,
                      "byte_fallback": false, "vocab": vocab, "merges": merges},
        })
        .to_string();
        let words = SpaceWords::of(&json).expect("cut into words");
        assert!(words.merges.is_some());
        Spelling {
            tokenizer: json.parse().expect("a tokenizer"),
            words: Some(words),
        }
    }

    /// A table far too small for its words doubles, then is emptied, over and over: every text
    /// still gets the tokenizer's own ids, short words (in their slots) and long ones alike.
    #[test]
    fn the_words_table_grows_and_empties_and_keeps_every_id() {
        let spelling = spelling();
        let (tokenizer, words) = (&spelling.tokenizer, spelling.words.as_ref().unwrap());
        let mut seen = WordIds::with_sizes(4, 16);
        let (mut grew, mut long) = (false, false);
        for round in 0..2 {
            for i in 0..300 {
                let x = "x".repeat(i % 7);
                let text = format!("the w{i} worthy {x} {x} word{} theory", i % 5);
                let mut ids = Vec::new();
                words
                    .token_ids(tokenizer, &text, &mut seen, &mut ids)
                    .unwrap();
                let want = tokenizer.encode_fast(text.as_str(), false).unwrap();
                assert_eq!(ids, want.get_ids(), "round {round}: {text:?}");
                assert!(seen.words * 10 <= seen.slots.len() * 7);
                grew |= seen.slots.len() == 16;
                long |= seen.slots.iter().any(|s| s.len > 3);
            }
        }
        assert!(grew, "the table doubled up to its most");
        assert!(long, "words of more than three ids were kept");
    }

    /// A short piece's key is its bytes, its length and whether it opens the text: the same
    /// piece has one key wherever it lies (read whole from the text, or copied at its end),
    /// and pieces that differ in a byte, a length (a NUL byte is a byte) or `first` do not
    /// share one; a long piece's key is a hash, never equal to a short one's.
    #[test]
    fn word_keys_are_exact_for_short_pieces_and_hashed_for_long_ones() {
        let text = "model models model\0 a fifteen-bytes sixteen-bytes-x model";
        let at = |piece: &str, nth: usize| text.match_indices(piece).nth(nth).unwrap().0;
        let key = |piece: &str, nth: usize, first: bool| {
            let from = at(piece, nth);
            WordIds::key(text, from, from + piece.len(), first)
        };
        // "model" opens the text, lies inside it and ends it (the copied path).
        let last = text.len() - "model".len();
        assert_eq!(
            key("model", 1, false),
            WordIds::key(text, last, text.len(), false)
        );
        assert_ne!(key("model", 0, true), key("model", 0, false));
        assert_ne!(key("model", 0, false), key("models", 0, false));
        assert_ne!(key("model", 0, false), key("model\0", 0, false));
        assert_ne!(key("a", 0, false), key("a", 0, true));
        let fifteen = key("fifteen-bytes s", 0, false);
        let sixteen = key("sixteen-bytes-x ", 0, false);
        assert_eq!(fifteen >> 120, 15, "a short piece's top byte is its length");
        assert_eq!(sixteen >> 127, 1, "a long piece's key has its top bit set");
        assert_ne!(sixteen, key("sixteen-bytes-x ", 0, true));
        // Every key starts its probe inside the table.
        for k in [fifteen, sixteen, key("a", 0, false)] {
            assert!(WordIds::home(k, 63) < 64);
        }
    }
}
