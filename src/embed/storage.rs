//! candle's CPU storage read as `f32` slices: what the encoder's fused passes (`bert.rs`) and its
//! dense products (`dense.rs`) work on, in place of tensor operations; and the rows a product's
//! tile reads in place.

use candle_core::{CpuStorage, Layout, Result};

/// The contiguous `f32` values a tensor's layout covers.
pub(super) fn values<'a>(storage: &'a mut CpuStorage, layout: &Layout) -> Result<&'a mut [f32]> {
    let (start, end) = layout
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg("not contiguous".into()))?;
    match storage {
        CpuStorage::F32(v) => Ok(&mut v[start..end]),
        _ => candle_core::bail!("not f32"),
    }
}

/// The contiguous `f32` values a tensor's layout covers, read only.
pub(super) fn values_of<'a>(storage: &'a CpuStorage, layout: &Layout) -> Result<&'a [f32]> {
    let (start, end) = layout
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg("not contiguous".into()))?;
    Ok(&storage.as_slice::<f32>()?[start..end])
}

/// A tile's `R` left-hand rows read in place: row `r` at `a + r lda`, the last of the `live`
/// rows standing in for the rows past it (their outputs are not stored): how the f32 tiles
/// (`dense.rs`) and the int8 ones (`int8.rs`) read rows in place.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn rows_at<T, const R: usize>(a: *const T, lda: usize, live: usize) -> [*const T; R] {
    std::array::from_fn(|r| a.wrapping_add(r.min(live - 1) * lda))
}
