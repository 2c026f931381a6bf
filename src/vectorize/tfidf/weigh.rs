//! Weighing: a corpus's feature streams become the rows of the TF-IDF matrix (TF x IDF,
//! sublinear TF if asked, then the row's norm), for the fit and for any new corpus alike.
//!
//! Why two passes: the first counts each row's entries, so the matrix is written once into
//! arrays of its final size, each chunk of documents filling its own slice in parallel
//! (building per-chunk pieces and joining them held the matrix twice at the memory peak). Each
//! row's columns are sorted before its norm is summed, so a document gets the same values in
//! the fit and in any later transform.

use super::streams::{FeatureStreams, StreamChunk};
use super::{Norm, TfIdfValidParams};
use crate::vectorize::CsrMatrix;
use ndarray::Array1;
use rayon::prelude::*;

impl TfIdfValidParams {
    /// Builds the weighted, normalised CSR matrix from feature streams. A first pass counts each
    /// row's entries, so the matrix is written once into arrays of its final size (building
    /// per-chunk pieces and joining them held the matrix twice at the memory peak).
    pub(super) fn weigh(
        &self,
        streams: &FeatureStreams,
        column: &[u32],
        idf: &Array1<f32>,
        n_cols: usize,
    ) -> CsrMatrix {
        self.weigh_counting(streams, column, idf, n_cols, None).0
    }

    /// [`Self::weigh`], and with `single` (a flag per column) each document's raw counts
    /// of the flagged columns, in column order.
    pub(super) fn weigh_counting(
        &self,
        streams: &FeatureStreams,
        column: &[u32],
        idf: &Array1<f32>,
        n_cols: usize,
        single: Option<&[bool]>,
    ) -> (CsrMatrix, Vec<Vec<(u32, u32)>>) {
        // Pass 1: each row's length, so the arrays are allocated once at their final size.
        let lens = row_lengths(streams, column);
        let indptr = row_offsets(&lens);
        let nnz = indptr.last().copied().unwrap_or(0);
        let mut indices = vec![0u32; nnz];
        let mut data = vec![0f32; nnz];
        // Pass 2: each chunk fills its own slice of the final arrays.
        let rows = RowWeights {
            column,
            idf,
            sublinear_tf: self.sublinear_tf,
            norm: self.norm,
            single,
        };
        let counted: Vec<Vec<Vec<(u32, u32)>>> = chunk_slices(&mut indices, &mut data, &lens)
            .into_par_iter()
            .zip(streams.chunks.par_iter())
            .map_init(
                || vec![u32::MAX; column.len()],
                |seen, ((idx, val), chunk)| rows.fill_chunk(chunk, seen, idx, val),
            )
            .collect();
        let matrix = CsrMatrix::new(n_cols, indptr, indices, data)
            .expect("rows are built sorted and in range");
        (matrix, counted.into_iter().flatten().collect())
    }
}

/// Distinct kept features (those with a `column`) of each document, chunk by chunk, by
/// stamping (no sorting).
fn row_lengths(streams: &FeatureStreams, column: &[u32]) -> Vec<Vec<usize>> {
    streams
        .chunks
        .par_iter()
        .map(|chunk| {
            let mut seen = vec![u32::MAX; column.len()];
            chunk
                .docs()
                .enumerate()
                .map(|(d, doc)| {
                    let mut n = 0;
                    for &f in doc {
                        if column[f as usize] != u32::MAX && seen[f as usize] != d as u32 {
                            seen[f as usize] = d as u32;
                            n += 1;
                        }
                    }
                    n
                })
                .collect()
        })
        .collect()
}

/// The CSR row offsets of rows of lengths `lens` (chunk by chunk): `0`, then each row's end.
fn row_offsets(lens: &[Vec<usize>]) -> Vec<usize> {
    let rows: usize = lens.iter().map(Vec::len).sum();
    let mut indptr = Vec::with_capacity(rows + 1);
    indptr.push(0usize);
    for &l in lens.iter().flatten() {
        indptr.push(indptr.last().copied().unwrap_or(0) + l);
    }
    indptr
}

/// The matrix's index and value arrays cut into one slice pair per chunk of rows.
fn chunk_slices<'a>(
    indices: &'a mut [u32],
    data: &'a mut [f32],
    lens: &[Vec<usize>],
) -> Vec<(&'a mut [u32], &'a mut [f32])> {
    let mut pieces = Vec::with_capacity(lens.len());
    let (mut idx_rest, mut val_rest) = (indices, data);
    for l in lens {
        let len: usize = l.iter().sum();
        let (ih, it) = idx_rest.split_at_mut(len);
        let (vh, vt) = val_rest.split_at_mut(len);
        pieces.push((ih, vh));
        idx_rest = it;
        val_rest = vt;
    }
    pieces
}

/// How a document's feature counts become its matrix row.
struct RowWeights<'a> {
    /// Each candidate's column, or `u32::MAX` (not a feature).
    column: &'a [u32],
    idf: &'a Array1<f32>,
    sublinear_tf: bool,
    norm: Norm,
    /// With a flag per column: keep each document's raw counts of the flagged columns.
    single: Option<&'a [bool]>,
}

impl RowWeights<'_> {
    /// Writes the rows of `chunk` into `idx` and `val` (the chunk's slices of the matrix), and
    /// returns each document's counts of the `single` columns (none without `single`). `seen`
    /// is [`count`]'s table, all `u32::MAX`.
    fn fill_chunk(
        &self,
        chunk: &StreamChunk,
        seen: &mut [u32],
        idx: &mut [u32],
        val: &mut [f32],
    ) -> Vec<Vec<(u32, u32)>> {
        let mut buf = Vec::new();
        // (column, weight, count)
        let mut row: Vec<(u32, f32, u32)> = Vec::new();
        let mut counts = Vec::new();
        let mut at = 0usize;
        for doc in chunk.docs() {
            count(doc, seen, &mut buf);
            self.weigh_row(&buf, &mut row);
            if let Some(single) = self.single {
                counts.push(
                    row.iter()
                        .filter(|&&(col, _, _)| single[col as usize])
                        .map(|&(col, _, c)| (col, c))
                        .collect::<Vec<_>>(),
                );
            }
            let end = at + row.len();
            for (k, &(col, v, _)) in row.iter().enumerate() {
                idx[at + k] = col;
                val[at + k] = v;
            }
            normalize(&mut val[at..end], self.norm);
            at = end;
        }
        counts
    }

    /// A document's row from its feature counts `counted` (id, count): (column, TF x IDF,
    /// count) for each feature with a column, in column order.
    #[inline]
    fn weigh_row(&self, counted: &[(u32, u32)], row: &mut Vec<(u32, f32, u32)>) {
        row.clear();
        for &(f, c) in counted {
            let col = self.column[f as usize];
            if col == u32::MAX {
                continue;
            }
            let tf = if self.sublinear_tf {
                sublinear(c)
            } else {
                c as f32
            };
            row.push((col, tf * self.idf[col as usize], c));
        }
        // Columns in order, so the norm is summed in the same order for the fit and any new
        // corpus: identical values.
        if !row.is_sorted_by_key(|&(col, _, _)| col) {
            row.sort_unstable_by_key(|&(col, _, _)| col);
        }
    }
}

/// `1 + ln(c)`, the sublinear term frequency, from a table for the small counts nearly every
/// entry has (one logarithm per matrix entry was a third of the weighing time).
#[inline]
fn sublinear(c: u32) -> f32 {
    const SMALL: usize = 64;
    static TABLE: std::sync::LazyLock<[f32; SMALL]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|c| 1.0 + (c as f32).ln()));
    match TABLE.get(c as usize) {
        Some(&v) => v,
        None => 1.0 + (c as f32).ln(),
    }
}

fn normalize(v: &mut [f32], norm: Norm) {
    let s: f32 = match norm {
        Norm::L2 => v.iter().map(|x| x * x).sum::<f32>().sqrt(),
        Norm::L1 => v.iter().map(|x| x.abs()).sum(),
        Norm::None => return,
    };
    if s > 0.0 {
        v.iter_mut().for_each(|x| *x /= s);
    }
}

/// Counts a document's feature ids into `out` as (id, count), in order of first occurrence.
/// `seen` maps an id to its place in `out`; it must hold `u32::MAX` for every id on entry, and
/// does again on return, so one array serves a whole chunk of documents. (The caller sorts the
/// row it builds from these once, by column.)
fn count(doc: &[u32], seen: &mut [u32], out: &mut Vec<(u32, u32)>) {
    out.clear();
    for &f in doc {
        let slot = &mut seen[f as usize];
        if *slot == u32::MAX {
            *slot = out.len() as u32;
            out.push((f, 1));
        } else {
            out[*slot as usize].1 += 1;
        }
    }
    for &(f, _) in out.iter() {
        seen[f as usize] = u32::MAX;
    }
}
