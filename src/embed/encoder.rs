//! The sentence encoder: a checked model folder's BERT (candle) and tokenizer, texts in, one
//! pooled (and, when the folder says so, L2-normalised) vector per text out.
//!
//! Why batches of equal length: texts are tokenized once, then sorted by their number of tokens
//! and run in batches whose texts all have the same length. Nothing is padded, so no time goes
//! into padding tokens (short lists of titles vary a lot in length) and no attention mask is
//! needed; and a text's vector does not depend on which other texts share its batch, so a
//! document embedded in a fit, in `assign` or in a streaming chunk gets the same vector. The
//! order of the batches is fixed by the texts, and each batch's arithmetic by its shape, so
//! reruns are byte-identical for a given thread count.

use super::bert::Bert;
use super::folder::{ModelFolder, Pooling};
use super::table::TokenTable;
use super::EmbedError;
use super::Folder;
use candle_core::{DType, Device, IndexOp, Tensor, D};
use candle_nn::VarBuilder;
use ndarray::{Array2, ArrayViewMut2};

/// Makes candle run each operation on the calling thread (`CANDLE_NUM_THREADS=1`, unless the
/// environment sets it), so that the encoder's batches, run side by side on the rayon pool,
/// do not queue for candle's own pool (which takes one call at a time): measured 252 against
/// 158 short texts/s on 2 cores. The binary (`src/main.rs`) and the encode bench call it first
/// thing.
///
/// # Safety
/// It sets the environment: no other thread may exist yet.
pub unsafe fn one_candle_thread_per_batch() {
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        // SAFETY: the caller's promise: no other thread reads the environment meanwhile.
        unsafe { std::env::set_var("CANDLE_NUM_THREADS", "1") };
    }
}

/// A loaded sentence model.
pub struct SentenceEncoder {
    model: Bert,
    tokenizer: tokenizers::Tokenizer,
    pooling: Pooling,
    normalize: bool,
    dims: usize,
}

impl std::fmt::Debug for SentenceEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEncoder")
            .field("pooling", &self.pooling)
            .field("normalize", &self.normalize)
            .field("dims", &self.dims)
            .finish()
    }
}

impl SentenceEncoder {
    /// Loads the folder's weights (on the CPU, in `f32`) and tokenizer.
    pub fn load(folder: &ModelFolder) -> Result<SentenceEncoder, EmbedError> {
        let path = folder.dir.join("model.safetensors");
        let bad = |e: candle_core::Error| EmbedError::Weights {
            path: path.clone(),
            why: e.to_string(),
        };
        let bytes = std::fs::read(&path).map_err(|source| EmbedError::Read {
            path: path.clone(),
            source,
        })?;
        let vb =
            VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).map_err(bad)?;
        let int8 = match folder.precision {
            super::Precision::Int8 => super::int8::Kernel::best(),
            super::Precision::F32 => None,
        };
        let model = Bert::load(vb, &folder.config, int8).map_err(bad)?;
        Ok(SentenceEncoder {
            model,
            tokenizer: folder.tokenizer()?,
            pooling: folder.pooling,
            normalize: folder.normalize,
            dims: folder.dims(),
        })
    }

    /// The sentence vector's length.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Each text's token ids, `[CLS]` and `[SEP]` included, cut at the folder's longest input.
    pub fn token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Encode(e.to_string()))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// One vector per text into `out` (row `i` is `texts[i]`'s, zero on entry), in batches of
    /// at most `batch` texts of equal length, as many batches at once as there are cores;
    /// `done(n)` is called after each batch with the number of texts it held.
    pub fn encode_into(
        &self,
        texts: &[&str],
        batch: usize,
        mut out: ArrayViewMut2<f32>,
        done: impl Fn(usize) + Sync,
    ) -> Result<(), EmbedError> {
        use rayon::prelude::*;
        let ids = self.token_ids(texts)?;
        let batches = batches(&ids, batch);
        // Every batch allocates and frees its activations: keep the freed memory for the next.
        let _keep = crate::heap::keep_freed();
        let pooled: Vec<Vec<f32>> = batches
            .par_iter()
            .map(|rows| {
                let tokens: Vec<&[u32]> = rows.iter().map(|&i| ids[i].as_slice()).collect();
                let v = self.forward(&tokens);
                done(rows.len());
                v
            })
            .collect::<candle_core::Result<_>>()
            .map_err(|e| EmbedError::Encode(e.to_string()))?;
        for (rows, vectors) in batches.iter().zip(&pooled) {
            for (&i, v) in rows.iter().zip(vectors.chunks_exact(self.dims)) {
                let mut row = out.row_mut(i);
                row.assign(&ndarray::ArrayView1::from(v));
                if self.normalize {
                    crate::norm::unit(row);
                }
            }
        }
        Ok(())
    }

    /// The pooled vectors of equal-length token rows, row after row.
    fn forward(&self, rows: &[&[u32]]) -> candle_core::Result<Vec<f32>> {
        let (b, len) = (rows.len(), rows[0].len());
        let hidden = self.model.forward(&rows.concat(), b, len)?;
        let mut parts = Vec::with_capacity(4);
        if self.pooling.cls {
            parts.push(hidden.i((.., 0, ..))?);
        }
        if self.pooling.max {
            parts.push(hidden.max(1)?);
        }
        if self.pooling.mean {
            parts.push(hidden.mean(1)?);
        }
        if self.pooling.mean_sqrt_len {
            parts.push((hidden.sum(1)? / (len as f64).sqrt())?);
        }
        Tensor::cat(&parts, D::Minus1)?
            .flatten_all()?
            .to_vec1::<f32>()
    }
}

/// A loaded model of either kind ([`Folder`]): texts in, one vector per text out. One is
/// loaded a run (or a stream), so the transformer's size is not worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Encoder {
    Transformer(SentenceEncoder),
    Static(TokenTable),
}

impl Encoder {
    pub fn load(folder: &Folder) -> Result<Encoder, EmbedError> {
        Ok(match folder {
            Folder::Transformer(f) => Encoder::Transformer(SentenceEncoder::load(f)?),
            Folder::Static(f) => Encoder::Static(TokenTable::load(f)?),
        })
    }

    /// One vector per text (row `i` is `texts[i]`'s), unit length as the model pools it (a
    /// static table's: its sums made unit length); `batch` texts per forward pass of the
    /// transformer; `done(n)` after every `n` texts.
    pub fn encode(
        &self,
        texts: &[&str],
        batch: usize,
        done: impl Fn(usize) + Sync,
    ) -> Result<Array2<f32>, EmbedError> {
        let mut out = Array2::<f32>::zeros((texts.len(), self.dims()));
        self.encode_into(texts, batch, out.view_mut(), done)?;
        if self.sums() {
            crate::norm::unit_rows(out.view_mut());
        }
        Ok(out)
    }

    /// [`Self::encode`] into `out`'s rows (zero on entry; its rows may lie apart, as the
    /// sentence part of the features k-means clusters does, [`super::Sentences`]), but a
    /// static table's vectors left as sums of their first `out.ncols()` values
    /// ([`Self::sums`]); a transformer fills rows of its whole width.
    pub fn encode_into(
        &self,
        texts: &[&str],
        batch: usize,
        out: ArrayViewMut2<f32>,
        done: impl Fn(usize) + Sync,
    ) -> Result<(), EmbedError> {
        match self {
            Encoder::Transformer(e) => e.encode_into(texts, batch, out, done),
            Encoder::Static(t) => t.encode_into(texts, out, done),
        }
    }

    /// The vector's length.
    pub fn dims(&self) -> usize {
        match self {
            Encoder::Transformer(e) => e.dims(),
            Encoder::Static(t) => t.dims(),
        }
    }

    /// Whether [`Self::encode_into`] leaves sums to be made unit length (a static table),
    /// rather than the model's pooled vectors.
    pub fn sums(&self) -> bool {
        matches!(self, Encoder::Static(_))
    }
}

/// Tokens a batch holds at most (beyond one text): long texts go in smaller batches, so that
/// two batches' attention scores (texts x 12 heads x length^2) stay in tens of megabytes.
pub const BATCH_TOKENS: usize = 2048;

/// Text indices in batches: sorted by length (then index), split where the length changes,
/// every `size` texts and every [`BATCH_TOKENS`] tokens. Texts without a token (none: `[CLS]`
/// and `[SEP]` are always added) would form no batch.
pub fn batches(ids: &[Vec<u32>], size: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..ids.len()).filter(|&i| !ids[i].is_empty()).collect();
    order.sort_by_key(|&i| (ids[i].len(), i));
    order
        .chunk_by(|&a, &b| ids[a].len() == ids[b].len())
        .flat_map(|same| {
            let fit = (BATCH_TOKENS / ids[same[0]].len()).clamp(1, size.max(1));
            same.chunks(fit).map(<[usize]>::to_vec)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_texts_of_one_length_in_a_fixed_order() {
        let ids = vec![
            vec![1, 2, 3],
            vec![1, 2],
            vec![4, 5, 6],
            vec![7, 8],
            vec![9, 9, 9],
        ];
        let b = batches(&ids, 2);
        assert_eq!(b, vec![vec![1, 3], vec![0, 2], vec![4]]);
        for batch in &b {
            assert!(batch.iter().all(|&i| ids[i].len() == ids[batch[0]].len()));
        }
        // Long texts go fewer to a batch.
        let long = vec![vec![1; BATCH_TOKENS / 2]; 5];
        assert_eq!(batches(&long, 32), vec![vec![0, 1], vec![2, 3], vec![4]]);
    }
}
