//! candle's CPU storage read as `f32` slices: what the encoder's fused passes (`bert.rs`) and its
//! dense products (`dense.rs`) work on, in place of tensor operations.

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
