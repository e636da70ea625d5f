//! What every decoder target shares. A target's first input bytes pick the filter's
//! parameters (valid ones and the bad metadata a file may hold); the rest is the chunk, which
//! the decoder gets through its `H5Z_func_t` entry point on a malloc'd copy, as HDF5 and the
//! NCZarr chain call it on a chunk read from disk. Any chunk gives a result or 0 — never a
//! crash, an unbounded allocation or a leak (libFuzzer's -rss_limit_mb and leak detection watch).
#![allow(dead_code)] // each target uses only part of it

use ncfilters::c_types::{H5Z_func_t, H5Z_FLAG_REVERSE};
use std::os::raw::c_void;

/// `H5Z_FLAG_SKIP_EDC`: fletcher32 drops its checksum unchecked.
pub const SKIP_EDC: u32 = 0x200;

/// The fuzz input, read from the front: parameter bytes, then the chunk.
pub struct Input<'a>(&'a [u8]);

impl Input<'_> {
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

/// Decodes the chunk at the end of `data` with `filter`; `choose` reads the parameters from
/// the front (None: the input is too short for them, nothing to do).
pub fn decode(data: &[u8], filter: H5Z_func_t, choose: impl FnOnce(&mut Input) -> Option<Params>) {
    let mut input = Input(data);
    let filter = filter.expect("a filter function");
    let Some(params) = choose(&mut input) else { return };
    let chunk = input.0;
    let cd_values = &params.cd_values;
    // SAFETY: a malloc'd copy of the chunk, handed to the filter as HDF5 does; `buf` is freed
    // once, whether the filter replaced it or not.
    unsafe {
        let mut buf: *mut c_void = libc::malloc(chunk.len().max(1));
        assert!(!buf.is_null(), "malloc failed");
        std::ptr::copy_nonoverlapping(chunk.as_ptr(), buf.cast::<u8>(), chunk.len());
        let mut buf_size = chunk.len();
        let flags = H5Z_FLAG_REVERSE | params.flags;
        let produced = filter(flags, cd_values.len(), cd_values.as_ptr(), chunk.len(), &mut buf_size, &mut buf);
        if produced > 0 {
            // The result is readable for its whole length.
            let out = std::slice::from_raw_parts(buf.cast::<u8>(), produced);
            std::hint::black_box(out.iter().fold(0u8, |a, &b| a ^ b));
        }
        libc::free(buf);
    }
}
