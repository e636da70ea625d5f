//! The standard filters' decoders through their `H5Z_func_t` entry points, as HDF5 and the
//! NCZarr chain call them on a chunk read from disk: the first input byte picks the filter and
//! its parameters, the rest is the chunk. Any chunk gives a result or 0 — never a crash, an
//! unbounded allocation or a leak (libFuzzer's -rss_limit_mb and leak detection watch).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncfilters::abi::h5z;
use std::os::raw::c_void;

const REVERSE: u32 = 0x100;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, chunk)) = data.split_first() else { return };
    let (filter, params): (h5z::H5zFilterFn, &[u32]) = match selector % 7 {
        0 => (h5z::h5z_deflate, &[6]),
        1 => (h5z::h5z_shuffle, &[4]),
        2 => (h5z::h5z_shuffle, &[3]),
        3 => (h5z::h5z_fletcher32, &[]),
        4 => (h5z::h5z_bzip2, &[9]),
        5 => (h5z::h5z_zstd, &[3]),
        _ => (h5z::h5z_deflate, &[]),
    };
    // SAFETY: a malloc'd copy of the chunk, handed to the filter as HDF5 does.
    unsafe {
        let mut buf: *mut c_void = libc::malloc(chunk.len().max(1));
        std::ptr::copy_nonoverlapping(chunk.as_ptr(), buf.cast::<u8>(), chunk.len());
        let mut buf_size = chunk.len();
        let produced = filter(REVERSE, params.len(), params.as_ptr(), chunk.len(), &mut buf_size, &mut buf);
        if produced > 0 {
            // The result is readable for its whole length.
            let out = std::slice::from_raw_parts(buf.cast::<u8>(), produced);
            std::hint::black_box(out.iter().fold(0u8, |a, &b| a ^ b));
        }
        libc::free(buf);
    }
});
