//! The standard filters themselves (issue: "The standard filters in Rust"): byte formats
//! identical to netcdf-c 4.9.0's C plugins and HDF5's built-in filters.
//!
//! Each filter works on byte slices and writes C-heap output ([`CVec`]), so the `H5Z_func_t`
//! adapter can hand results to C without a copy. Decoders never allocate without bound: output
//! stops at [`MAX_DECODED`] (HDF5's largest chunk) or a smaller limit the caller knows.

pub mod blosc;
pub mod bzip2;
pub mod deflate;
pub mod fletcher32;
mod native;
pub mod shuffle;
mod shuffle_simd;
pub mod szip;
pub mod zstd;

use crate::c_heap::CVec;
use std::fmt;

pub use native::load_error as native_library_error;

/// The most a decoder produces: HDF5 chunks are at most 2^32 - 1 bytes.
pub const MAX_DECODED: usize = u32::MAX as usize;

/// Why a filter failed; the adapter reports it and returns 0 to HDF5/NCZarr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(pub String);

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub type FilterResult<T> = Result<T, FilterError>;

pub fn fail<T>(message: impl Into<String>) -> FilterResult<T> {
    Err(FilterError(message.into()))
}

pub fn out_of_memory(_: i32) -> FilterError {
    FilterError("out of memory".into())
}

/// A new C-heap output buffer of `capacity` bytes.
pub fn output(capacity: usize) -> FilterResult<CVec> {
    CVec::with_capacity(capacity).map_err(out_of_memory)
}

/// A new C-heap output buffer of `capacity` uninitialised bytes, for a writer that fills it.
pub fn output_uninit(capacity: usize) -> FilterResult<CVec> {
    CVec::with_capacity_uninit(capacity).map_err(out_of_memory)
}

/// After a decoding step that did not reach the end of the stream: a truncated stream (input used
/// up with output room to spare) or output at `limit` is an error; otherwise the output doubles,
/// up to `limit`, so memory grows only with data actually decoded.
pub fn grow_decoded(name: &str, out: &mut CVec, input_used_up: bool, limit: usize) -> FilterResult<()> {
    if input_used_up && out.len() < out.capacity() {
        return fail(format!("{name}: truncated stream"));
    }
    if out.capacity() >= limit {
        return fail(format!("{name}: output exceeds {limit} bytes"));
    }
    out.reserve_total(out.capacity().saturating_mul(2).min(limit)).map_err(out_of_memory)
}

/// The first output buffer of a decoder: a guess from the input size, within `limit`.
pub fn decode_buffer(input_len: usize, ratio: usize, limit: usize) -> FilterResult<CVec> {
    output(input_len.saturating_mul(ratio).max(4096).min(limit.max(1)))
}
