//! Stream: read the inputs a chunk of documents at a time, so a corpus larger than memory can be
//! processed in passes (a streaming run, `[cluster] fit-sample`).
//!
//! CSV and TSV files are read in blocks (`text_table`) of about `chunk_bytes`, each cut after the last record
//! that ends in it (a line break outside quotes), and parsed by polars with the header in
//! front. Every check of a whole-file read is made on each block (UTF-8, NUL bytes, the lint
//! for broken quotes and ragged rows), and rows, lines and byte offsets in messages count from
//! the file's start, so an error reads as it would for the whole file. The sha256 is computed
//! as the bytes go by. Other formats (Parquet, JSON, paper lists) are read whole, one chunk per
//! file: split a large one into several files.
//!
//! Repeated ids are renamed (or fail the run) across every chunk and file by [`Ids`], as in a
//! whole read.
//!
//! The sample pass of a streaming run reads only seeded random windows of CSV and TSV files
//! ([`block_sample`]: stratified over the whole file, record starts found by parsing forward);
//! other inputs, and small ones, are sampled by a full pass.

mod block_sample;
mod text_table;

use super::{
    expand, format_of, read_file, Corpus, Document, Ids, IngestError, InputFormat, InputSpec,
    OnBadDocument, SourceFile,
};
use text_table::stream_text_table;

/// How the inputs are streamed.
#[derive(Debug, Clone, Copy)]
pub struct StreamOptions {
    /// About this many bytes of a CSV or TSV file per chunk.
    pub chunk_bytes: usize,
    pub on_bad: OnBadDocument,
    /// Rename (or refuse) repeated ids across the stream.
    pub dedupe: bool,
}

/// Why reading stopped early.
enum Stop {
    Ingest(IngestError),
    /// The consumer failed (its error is its own).
    Consumer,
}

impl From<IngestError> for Stop {
    fn from(e: IngestError) -> Self {
        Stop::Ingest(e)
    }
}

/// Decides, for a usable row of a file (file index, row), whether to build its document.
type Select<'a> = Option<&'a mut (dyn FnMut(usize, usize) -> bool + Send)>;

/// Reads every input in order and hands each chunk's documents to `f` with the index of its
/// file among all files read (the chunk is a corpus of that one source, at index 0, with the
/// chunk's skipped and renamed rows). Returns every input file read, with its size, sha256
/// and documents. The files are read on a thread of their own, a chunk ahead of `f`, so
/// reading and parsing overlap with what `f` does.
pub fn stream<E: From<IngestError> + Send>(
    inputs: &[InputSpec],
    opts: StreamOptions,
    f: impl FnMut(usize, Corpus) -> Result<(), E>,
) -> Result<Vec<SourceFile>, E> {
    stream_selected(inputs, opts, None, f)
}

fn stream_selected<E: From<IngestError> + Send>(
    inputs: &[InputSpec],
    opts: StreamOptions,
    select: Select<'_>,
    mut f: impl FnMut(usize, Corpus) -> Result<(), E>,
) -> Result<Vec<SourceFile>, E> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Corpus)>(1);
        let reader = scope.spawn(move || {
            read_all(inputs, opts, select, |i, c| {
                tx.send((i, c)).map_err(|_| Stop::Consumer)
            })
        });
        let mut failed = None;
        for (i, chunk) in rx.iter() {
            if let Err(e) = f(i, chunk) {
                failed = Some(e);
                break;
            }
        }
        // The reader stops at its next chunk once nobody receives.
        drop(rx);
        let read = reader.join().expect("the reader thread does not panic");
        match (failed, read) {
            (Some(e), _) => Err(e),
            (None, Ok(sources)) => Ok(sources),
            (None, Err(Stop::Ingest(e))) => Err(e.into()),
            (None, Err(Stop::Consumer)) => unreachable!("the consumer stopped without an error"),
        }
    })
}

/// The reading loop of [`stream`].
fn read_all(
    inputs: &[InputSpec],
    opts: StreamOptions,
    mut select: Select<'_>,
    mut f: impl FnMut(usize, Corpus) -> Result<(), Stop>,
) -> Result<Vec<SourceFile>, Stop> {
    let mut sources = Vec::new();
    let mut ids = Ids::default();
    for input in inputs {
        for (path, shown) in expand(input)? {
            let format = format_of(input, &path)?;
            let source_index = sources.len();
            let source = match format {
                InputFormat::Csv | InputFormat::Tsv => stream_text_table(
                    input,
                    &path,
                    &shown,
                    format,
                    opts,
                    select
                        .as_deref_mut()
                        .map(|s| move |row: usize| s(source_index, row)),
                    |mut chunk: Corpus| {
                        if opts.dedupe {
                            dedupe(&mut ids, &mut chunk, source_index, opts.on_bad)?;
                        }
                        f(source_index, chunk)
                    },
                )?,
                _ => {
                    let mut chunk = Corpus::default();
                    read_file(&mut chunk, input, path, shown, opts.on_bad, None)?;
                    if let Some(s) = select.as_deref_mut() {
                        chunk.documents.retain(|d| s(source_index, d.row));
                    }
                    if opts.dedupe {
                        dedupe(&mut ids, &mut chunk, source_index, opts.on_bad)?;
                    }
                    let source = chunk.sources[0].clone();
                    f(source_index, chunk)?;
                    source
                }
            };
            sources.push(source);
        }
    }
    Ok(sources)
}

/// How many documents the inputs hold, as the sample pass knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Every row was read.
    Exact(usize),
    /// Estimated from the bytes per row of the windows read.
    About(usize),
}

/// A seeded sample of `n` of the inputs' documents, in input order, and the number of
/// documents in the inputs (estimated when the sample is drawn from blocks).
///
/// When every input is a CSV or TSV file (without `limit`) and the sample is under a third of
/// the rows, it is drawn from seeded random windows of the files without parsing the rest
/// (see [`block_sample`]); otherwise, and whenever a window cannot be read cleanly, by a full
/// pass ([`sample_all`]).
pub fn sample(
    inputs: &[InputSpec],
    opts: StreamOptions,
    seed: u64,
    n: usize,
    progress: impl FnMut(usize),
) -> Result<(Corpus, Count), IngestError> {
    match sample_blocks(inputs, seed, n)? {
        Some((corpus, about)) => Ok((corpus, Count::About(about))),
        None => sample_all(inputs, opts, seed, n, progress)
            .map(|(corpus, seen)| (corpus, Count::Exact(seen))),
    }
}

/// The sample from windows of the files (see [`block_sample`]), or `None` when the inputs do
/// not suit it or a window does not read cleanly (the full pass then says why, by row).
fn sample_blocks(
    inputs: &[InputSpec],
    seed: u64,
    n: usize,
) -> Result<Option<(Corpus, usize)>, IngestError> {
    let mut files = Vec::new();
    for input in inputs {
        for (path, shown) in expand(input)? {
            let format = format_of(input, &path)?;
            if input.limit.is_some() || !matches!(format, InputFormat::Csv | InputFormat::Tsv) {
                return Ok(None);
            }
            files.push((input, path, shown, format));
        }
    }
    let sampled: Vec<block_sample::SampledFile> = files
        .iter()
        .map(|(input, path, shown, format)| block_sample::SampledFile {
            input,
            path,
            shown,
            format: *format,
        })
        .collect();
    let mut rows = 0.0;
    for f in &sampled {
        match block_sample::bytes_per_row(f) {
            Ok((span, Some(per_row))) => rows += span as f64 / per_row,
            _ => return Ok(None),
        }
    }
    // A frame of about 1.5 n rows; a third of the rows or more: the full pass is as cheap.
    let phi = 1.5 * n as f64 / rows.max(1.0);
    if phi >= 1.0 / 3.0 {
        return Ok(None);
    }
    let key = |file: usize, offset: usize| {
        splitmix(seed ^ splitmix(((file as u64) << 40) ^ offset as u64))
    };
    let mut kept: Vec<(u64, Document)> = Vec::new();
    let (mut seen, mut sources) = (0usize, Vec::new());
    for (i, f) in sampled.iter().enumerate() {
        let Ok(frame) = block_sample::frame(f, phi, seed, i) else {
            return Ok(None);
        };
        seen += frame.rows_estimate;
        for mut d in frame.documents {
            d.source = i;
            kept.push((key(i, d.row - 1), d));
        }
        sources.push(SourceFile {
            path: f.shown.to_path_buf(),
            location: f.path.to_path_buf(),
            format: f.format,
            bytes: std::fs::metadata(f.path).map_or(0, |m| m.len()),
            sha256: String::new(),
            list_title: None,
            documents: frame.rows_estimate,
        });
    }
    if kept.len() > n {
        kept.select_nth_unstable_by_key(n, |(k, _)| *k);
        kept.truncate(n);
    }
    kept.sort_by_key(|(_, d)| (d.source, d.row));
    let documents: Vec<Document> = kept
        .into_iter()
        .enumerate()
        .map(|(at, (_, d))| Document { row: at + 1, ..d })
        .collect();
    let corpus = Corpus {
        documents,
        sources,
        has_time: files.iter().any(|f| f.0.time.is_some()),
        has_label: files.iter().any(|f| f.0.label.is_some()),
        ..Corpus::default()
    };
    Ok(Some((corpus, seen)))
}

/// A seeded sample of `n` of the inputs' documents by a full pass, uniform without replacement
/// and in input order, and the number of documents read. Each usable row gets a key from the
/// seed, its file's index and its row (SplitMix64), and the `n` smallest keys are the sample
/// (bottom-k sampling): the same for any chunking, and only rows whose key is among the `n`
/// smallest so far are built at all (about `n (1 + ln(N / n))` of `N`). `progress` hears the
/// rows read so far after each chunk.
pub fn sample_all(
    inputs: &[InputSpec],
    opts: StreamOptions,
    seed: u64,
    n: usize,
    mut progress: impl FnMut(usize),
) -> Result<(Corpus, usize), IngestError> {
    use std::collections::BinaryHeap;
    let key = move |file: usize, row: usize| {
        splitmix(seed ^ splitmix(((file as u64) << 40) ^ row as u64))
    };
    // The reader's own view of the n smallest keys so far: a row above them is not built.
    let mut smallest: BinaryHeap<u64> = BinaryHeap::with_capacity(n + 1);
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let mut select = |file: usize, row: usize| -> bool {
        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let k = key(file, row);
        if smallest.len() < n {
            smallest.push(k);
            true
        } else if smallest.peek().is_some_and(|&top| k < top) {
            smallest.pop();
            smallest.push(k);
            true
        } else {
            false
        }
    };
    let mut kept: Vec<(u64, Document)> = Vec::new();
    let (mut has_time, mut has_label) = (false, false);
    let trim = |kept: &mut Vec<(u64, Document)>| {
        if kept.len() > n {
            kept.select_nth_unstable_by_key(n, |(k, _)| *k);
            kept.truncate(n);
        }
    };
    let sources = stream_selected(inputs, opts, Some(&mut select), |file, chunk: Corpus| {
        has_time |= chunk.has_time;
        has_label |= chunk.has_label;
        for mut d in chunk.documents {
            d.source = file;
            kept.push((key(file, d.row), d));
        }
        if kept.len() > 2 * n {
            trim(&mut kept);
        }
        progress(seen.load(std::sync::atomic::Ordering::Relaxed));
        Ok::<(), IngestError>(())
    })?;
    trim(&mut kept);
    kept.sort_by_key(|(_, d)| (d.source, d.row));
    let corpus = Corpus {
        documents: kept.into_iter().map(|(_, d)| d).collect(),
        sources,
        has_time,
        has_label,
        ..Corpus::default()
    };
    Ok((corpus, seen.into_inner()))
}

/// Makes a chunk's ids (all of one file, the read's file `source`) unique against the read's.
fn dedupe(
    ids: &mut Ids,
    chunk: &mut Corpus,
    source: usize,
    on_bad: OnBadDocument,
) -> Result<(), IngestError> {
    let file = &chunk.sources[0];
    let at = (file.location.as_path(), file.path.as_path());
    ids.dedupe(&mut chunk.documents, &mut chunk.renamed, source, at, on_bad)
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    fn spec(p: &Path) -> InputSpec {
        InputSpec {
            id: Some("id".into()),
            ..InputSpec::file(p)
        }
    }

    #[test]
    fn chunks_hold_every_row_once_with_file_row_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let mut body = String::from("id,abstract\r\n");
        for i in 0..500 {
            // Quoted fields with line breaks inside must not be cut.
            body.push_str(&format!("d{i},\"text {i}\nsecond line, with a comma\"\r\n"));
        }
        let p = write(dir.path(), "a.csv", &body);
        let mut seen = Vec::new();
        let mut chunks = 0;
        let opts = StreamOptions {
            chunk_bytes: 1 << 16,
            on_bad: OnBadDocument::Skip,
            dedupe: true,
        };
        // A tiny block size (the floor is 64 KiB; the file is ~25 KiB, so use two files).
        let q = write(dir.path(), "b.csv", &body.replace(",\"text", ",\"more"));
        let sources = stream(&[spec(&p), spec(&q)], opts, |_, c: Corpus| {
            chunks += 1;
            for d in &c.documents {
                seen.push((c.sources[0].path.clone(), d.row, d.id.clone()));
            }
            Ok::<(), IngestError>(())
        })
        .unwrap();
        assert_eq!(chunks, 2);
        assert_eq!(seen.len(), 1000);
        assert_eq!(seen[0].1, 1);
        assert_eq!(seen[499].1, 500);
        // The second file's ids repeat the first's: renamed, nothing lost.
        assert_eq!(seen[500].2, "d0~2");
        assert_eq!(sources[0].documents, 500);
        assert_eq!(sources[0].bytes, body.len() as u64);
        let whole = crate::ingest::sha256_hex(body.as_bytes());
        assert_eq!(sources[0].sha256, whole);
    }

    #[test]
    fn small_blocks_cut_at_record_ends_and_errors_name_the_files_row() {
        let dir = tempfile::tempdir().unwrap();
        let mut body = String::from("id,abstract\n");
        for i in 0..4000 {
            body.push_str(&format!("d{i},\"some text, quoted {i}\"\n"));
        }
        let good = write(dir.path(), "good.csv", &body);
        let opts = StreamOptions {
            chunk_bytes: 1 << 16,
            on_bad: OnBadDocument::Skip,
            dedupe: true,
        };
        let mut rows = Vec::new();
        let mut chunks = 0;
        stream(&[spec(&good)], opts, |_, c: Corpus| {
            chunks += 1;
            rows.extend(c.documents.iter().map(|d| d.row));
            Ok::<(), IngestError>(())
        })
        .unwrap();
        assert!(chunks >= 2, "{chunks} chunks");
        assert_eq!(rows, (1..=4000).collect::<Vec<_>>());
        // A ragged row deep in the file: reported at its own row and line.
        let bad_body = body.replacen("d3500,", "d3500,x,", 1);
        let bad = write(dir.path(), "bad.csv", &bad_body);
        let err = stream(&[spec(&bad)], opts, |_, _| Ok::<(), IngestError>(())).unwrap_err();
        match err {
            IngestError::Malformed { row, line, .. } => {
                assert_eq!(row, 3501);
                assert_eq!(line, 3502);
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_sample_from_blocks_holds_whole_records_spread_over_the_file_issue_23() {
        let dir = tempfile::tempdir().unwrap();
        let mut body = String::from("id,year,abstract\n");
        for i in 0..40_000 {
            // Quoted fields holding line breaks, commas and doubled quotes: a window that
            // starts inside one must not take its second line for a record.
            body.push_str(&format!(
                "d{i},{},\"words about thing {i},\nd{},2020,\"\"not a row\"\"\nend {i}\"\n",
                2000 + i / 2000,
                i + 1
            ));
        }
        let p = write(dir.path(), "s.csv", &body);
        let input = InputSpec {
            time: Some("year".into()),
            ..spec(&p)
        };
        let opts = StreamOptions {
            chunk_bytes: 1 << 16,
            on_bad: OnBadDocument::Skip,
            dedupe: false,
        };
        let take = |seed: u64| {
            let (corpus, seen) =
                sample(std::slice::from_ref(&input), opts, seed, 1000, |_| {}).unwrap();
            (corpus, seen)
        };
        let (a, Count::About(seen)) = take(7) else {
            panic!("a sample from windows estimates the count")
        };
        assert_eq!(a.len(), 1000);
        assert!(
            (30_000..=50_000).contains(&seen),
            "about 40,000 rows: {seen}"
        );
        let mut years = std::collections::BTreeMap::new();
        for d in &a.documents {
            let i: usize = d.id.strip_prefix('d').unwrap().parse().unwrap();
            assert_eq!(
                d.text,
                format!(
                    "words about thing {i},\nd{},2020,\"not a row\"\nend {i}",
                    i + 1
                ),
                "a whole record"
            );
            *years.entry(2000 + i / 2000).or_insert(0) += 1;
        }
        // Spread over the whole file: every twentieth of it (a year each) is represented.
        assert_eq!(years.len(), 20, "{years:?}");
        assert!(years.values().all(|&c| (20..=90).contains(&c)), "{years:?}");
        let ids = |c: &Corpus| c.documents.iter().map(|d| d.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&take(7).0), "the same seed, the same sample");
        assert_ne!(ids(&a), ids(&take(8).0), "another seed, another sample");
        // The full pass is still used with a limit.
        let limited = InputSpec {
            limit: Some(39_000),
            ..input.clone()
        };
        let (_, seen) = sample(&[limited], opts, 7, 1000, |_| {}).unwrap();
        assert_eq!(seen, Count::Exact(39_000));
    }

    #[test]
    fn the_full_pass_sample_is_seeded_uniform_and_the_same_for_any_block_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut body = String::from("id,abstract\n");
        for i in 0..6000 {
            body.push_str(&format!("d{i},\"words about thing {i}\"\n"));
        }
        let p = write(dir.path(), "s.csv", &body);
        let take = |chunk_bytes: usize, seed: u64| {
            let opts = StreamOptions {
                chunk_bytes,
                on_bad: OnBadDocument::Skip,
                dedupe: true,
            };
            let (corpus, seen) = sample_all(&[spec(&p)], opts, seed, 500, |_| {}).unwrap();
            assert_eq!(seen, 6000);
            corpus.documents.iter().map(|d| d.row).collect::<Vec<_>>()
        };
        let a = take(1 << 16, 7);
        assert_eq!(a.len(), 500);
        assert!(
            a.windows(2).all(|w| w[0] < w[1]),
            "in input order, no repeats"
        );
        assert_eq!(a, take(1 << 30, 7), "block size must not change the sample");
        assert_ne!(a, take(1 << 16, 8), "another seed, another sample");
        // Uniform: about a twelfth of the sample in each twelfth of the file.
        for part in 0..12 {
            let lo = part * 500 + 1;
            let inside = a.iter().filter(|&&r| (lo..lo + 500).contains(&r)).count();
            assert!((15..=70).contains(&inside), "part {part}: {inside} of 500");
        }
    }
}
