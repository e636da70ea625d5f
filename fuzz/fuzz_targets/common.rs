// SPDX-License-Identifier: BSD-3-Clause
//! What every filter target shares. A target's first input bytes pick the filter's parameters;
//! the rest is the chunk, which the filter gets through its `H5Z_func_t` entry point on a
//! malloc'd copy, as HDF5 and the NCZarr chain call it.
//!
//! Decode targets (`h5z_*_decode`) pick valid parameters and the bad metadata a file may hold:
//! any chunk gives a result or 0, never a crash, an unbounded allocation or a leak (libFuzzer's
//! -rss_limit_mb and leak detection watch). Round-trip targets (`h5z_*_round_trip`) pick only
//! parameters a writer can store: decoding what the filter encoded must give the chunk back.
#![allow(dead_code)] // each target uses only part of it

use ncfilters_core::c_types::{H5Z_func_t, H5Z_FLAG_REVERSE};
use std::os::raw::c_void;

/// The fuzz input, read from the front: parameter bytes, then the chunk.
pub struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input(data)
    }

    /// The next byte; None when the input has run out.
    pub fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    /// One of `choices`, by the next byte.
    pub fn pick<T: Copy>(&mut self, choices: &[T]) -> Option<T> {
        self.byte().map(|b| choices[usize::from(b) % choices.len()])
    }

    /// A number from the next two bytes (little-endian).
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    /// What is left: the chunk.
    pub fn rest(self) -> &'a [u8] {
        self.0
    }
}

/// `chunk` copied over and over until it is longer than `more_than` bytes, each copy with its
/// number added to its bytes: a chunk large enough for an encoder's pieces on the worker pool
/// (fuzz inputs are a few KiB), whose contents the fuzzer still drives. Empty stays empty.
pub fn large(chunk: &[u8], more_than: usize) -> Vec<u8> {
    if chunk.is_empty() {
        return Vec::new();
    }
    let copies = more_than / chunk.len() + 1;
    (0..copies).flat_map(|copy| chunk.iter().map(move |&b| b.wrapping_add(copy as u8))).collect()
}

/// The decode call: flags beside `H5Z_FLAG_REVERSE`, and `cd_values`.
pub struct Params {
    pub flags: u32,
    pub cd_values: Vec<u32>,
}

impl From<&[u32]> for Params {
    fn from(cd_values: &[u32]) -> Self {
        Params { flags: 0, cd_values: cd_values.to_vec() }
    }
}

/// Runs `filter` with `flags` and `cd_values` on a malloc'd copy of `chunk`, as HDF5 does: the
/// bytes it produced, or None when it returned 0.
pub fn run_filter(filter: H5Z_func_t, flags: u32, cd_values: &[u32], chunk: &[u8]) -> Option<Vec<u8>> {
    let filter = filter.expect("a filter function");
    // SAFETY: a malloc'd copy of the chunk, handed to the filter as HDF5 does; `buf` is freed
    // once, whether the filter replaced it or not; a result is readable for its whole length.
    unsafe {
        let mut buf: *mut c_void = libc::malloc(chunk.len().max(1));
        assert!(!buf.is_null(), "malloc failed");
        std::ptr::copy_nonoverlapping(chunk.as_ptr(), buf.cast::<u8>(), chunk.len());
        let mut buf_size = chunk.len();
        let produced = filter(flags, cd_values.len(), cd_values.as_ptr(), chunk.len(), &mut buf_size, &mut buf);
        let result = (produced > 0).then(|| std::slice::from_raw_parts(buf.cast::<u8>(), produced).to_vec());
        libc::free(buf);
        result
    }
}

/// Decodes the chunk at the end of `data` with `filter`; `choose` reads the parameters from
/// the front (None: the input is too short for them, nothing to do).
pub fn decode(data: &[u8], filter: H5Z_func_t, choose: impl FnOnce(&mut Input) -> Option<Params>) {
    let mut input = Input(data);
    let Some(params) = choose(&mut input) else { return };
    let decoded = run_filter(filter, H5Z_FLAG_REVERSE | params.flags, &params.cd_values, input.rest());
    std::hint::black_box(decoded);
}

/// Whether encoding may fail on valid parameters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Never (the compressors keep a chunk they cannot shrink, or store it raw).
    Succeeds,
    /// On data the filter cannot shrink (szip, as H5Zszip.c).
    MayFail,
}

/// Encodes `chunk` with `filter` and `cd_values`, decodes the result with the same parameters
/// and panics unless that gives `chunk` back. The encoded bytes, or None when encoding failed
/// and `encoding` allows it.
pub fn round_trip(filter: H5Z_func_t, cd_values: &[u32], chunk: &[u8], encoding: Encoding) -> Option<Vec<u8>> {
    // A filter reports failure by producing 0 bytes, so an empty chunk cannot come back; a real
    // chunk holds at least one element.
    if chunk.is_empty() {
        return None;
    }
    let Some(encoded) = run_filter(filter, 0, cd_values, chunk) else {
        assert!(
            encoding == Encoding::MayFail,
            "encoding {} bytes with valid parameters {cd_values:?} failed",
            chunk.len()
        );
        return None;
    };
    let decoded = run_filter(filter, H5Z_FLAG_REVERSE, cd_values, &encoded);
    let decoded = decoded.unwrap_or_else(|| {
        panic!("decoding what {cd_values:?} encoded ({} of {} bytes) failed", encoded.len(), chunk.len())
    });
    assert!(decoded == chunk, "{cd_values:?}: {} bytes decode to {} other bytes", chunk.len(), decoded.len());
    Some(encoded)
}
