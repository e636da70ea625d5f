// SPDX-License-Identifier: BSD-3-Clause
//! HDF5's filter-function protocol (`H5Z_func_t`) around a filter written in Rust, as HDF5 and
//! the NCZarr chain call it: `*buf` is a `malloc`'d block holding `nbytes` bytes, `*buf_size` its
//! size; a filter returns the bytes it produced (0 on failure, leaving `*buf` alone) and may
//! replace the block. HDF5 trusts that count (for an optional filter, as netcdf-c registers its
//! plugins, a 0 keeps the chunk's old length over whatever block is there), so no filter body
//! chooses it: the body says what it made ([`Filtered`]) and [`run_filter`] hands the result to C
//! with its own length, a [`Committed`] count that only the chunk's handle makes with the block
//! it leaves. The chunk's handle is the runtime's alone:
//!
//! ```compile_fail,E0603
//! use ncfilters_runtime::c_args::FilterChunk;
//! ```

use crate::c_args::{Committed, FilterChunk, FromRawArgument, Params};
use crate::c_heap::CVec;
use crate::c_types::{H5Z_FLAG_REVERSE, H5Z_FLAG_SKIP_EDC};
use crate::error::report;
use crate::ffi_boundary::CallersThread;
use std::fmt::Display;
use std::os::raw::{c_uint, c_void};

/// What a filter made of the chunk.
pub enum Filtered {
    /// A new block; the old one is freed.
    Replaced(CVec),
    /// The same block, of which the first `n` bytes are now the result.
    Shrunk(usize),
    /// The same block with these bytes appended (grown with `realloc` when needed).
    Appended([u8; 4]),
}

impl Filtered {
    /// The result's length, for an input of `nbytes`.
    fn len(&self, nbytes: usize) -> usize {
        match self {
            Filtered::Replaced(out) => out.len(),
            Filtered::Shrunk(len) => *len,
            Filtered::Appended(extra) => nbytes + extra.len(),
        }
    }
}

/// Runs `filter` (asked whether to decode, whether to skip checksums, the parameters and the
/// chunk's bytes) under the `H5Z_func_t` protocol, reporting a failure as `name`'s; never unwinds
/// into C.
///
/// # Safety
/// The `H5Z_func_t` contract: called by HDF5, on its caller's thread; `cd_values` is NULL or
/// readable for `cd_nelmts` words; `buf` and `buf_size` are valid; `*buf` is a `malloc`'d block
/// of at least `nbytes` bytes.
#[allow(clippy::too_many_arguments)] // H5Z_func_t's six, plus the filter's name and body
pub unsafe fn run_filter<E: Display>(
    name: &str,
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
    filter: impl FnOnce(bool, bool, &[u32], &[u8]) -> Result<Filtered, E>,
) -> usize {
    // SAFETY: HDF5 calls the filter on its caller's thread (this function's contract).
    let thread = unsafe { CallersThread::promise() };
    // The body yields a Committed count, made with the block it counts; a panic is 0.
    crate::ffi_export!(named name, thread, |call| {
        // SAFETY: the H5Z_func_t contract (this function's), for the call.
        let (params, chunk) =
            unsafe { (Params::from_raw(call, (cd_values, cd_nelmts)), FilterChunk::from_raw(call, (nbytes, buf_size, buf))) };
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(failed) => {
                report(format_args!("{name} filter: NULL buffer pointer"));
                return failed;
            }
        };
        let run = |chunk: &FilterChunk<'_>| {
            let params = params.map_err(|_| "NULL parameters")?;
            let input = chunk.bytes().ok_or("NULL chunk")?;
            let reverse = flags & H5Z_FLAG_REVERSE != 0;
            filter(reverse, flags & H5Z_FLAG_SKIP_EDC != 0, params, input).map_err(|why| why.to_string())
        };
        let committed = match run(&chunk) {
            Ok(result) => commit(result, chunk),
            Err(why) => Err((why, chunk)),
        };
        committed.unwrap_or_else(|(why, chunk)| {
            report(format_args!("{name} filter: {why}"));
            chunk.fail()
        })
    })
}

/// Hands the result to C. 0 is the protocol's failure, so an empty result (a valid stream of no
/// bytes) fails here, before the caller's block is freed or replaced; so does a shrunk result
/// longer than the chunk, which HDF5 would read past the block. A failure gives the chunk back
/// as it came.
fn commit<'a>(result: Filtered, chunk: FilterChunk<'a>) -> Result<Committed, (String, FilterChunk<'a>)> {
    let len = result.len(chunk.nbytes());
    if len == 0 {
        return Err(("the result is empty, which a filter cannot return".into(), chunk));
    }
    match result {
        Filtered::Replaced(out) => chunk.replace(out).map_err(|chunk| ("the result is empty".into(), chunk)),
        Filtered::Shrunk(_) => {
            let nbytes = chunk.nbytes();
            chunk.shrink(len).map_err(|chunk| (format!("a result of {len} bytes in a chunk of {nbytes}"), chunk))
        }
        Filtered::Appended(extra) => chunk.append(&extra).map_err(|chunk| ("out of memory".into(), chunk)),
    }
}
