// SPDX-License-Identifier: BSD-3-Clause
//! Differential test: ncfilters' filters against netcdf-c 4.9.0's C plugins (the stock build's
//! `plugins/` directory, `NCFILTERS_STOCK_PLUGINS`), both through `H5Z_func_t`.
//!
//! On real-looking data of several sizes: what ours encodes, the C plugin decodes, and the
//! other way round; shuffle and fletcher32 output must be byte-identical (they are fully
//! specified); compressors may produce different bytes of the same format, and their sizes
//! are compared (ours at most 10% larger).

use libloading::Library;
use ncfilters::c_types::{H5Z_class2_t, H5Z_func_t, H5Z_FLAG_REVERSE};
use ncfilters_plugin::h5z;
use std::os::raw::c_uint;

fn c_filter(dir: &str, name: &str) -> H5Z_func_t {
    let path = format!("{dir}/lib__nch5{name}.so");
    // SAFETY: netcdf-c's own plugin, loaded as HDF5 would.
    let library = unsafe { Library::new(&path) }.unwrap_or_else(|e| panic!("{path}: {e}"));
    // SAFETY: the H5PL entry point returns the plugin's static H5Z_class2_t.
    let filter = unsafe {
        let info = library.get::<unsafe extern "C" fn() -> *const H5Z_class2_t>(b"H5PLget_plugin_info\0").unwrap();
        (*info()).filter
    };
    assert!(filter.is_some(), "{path}: H5Z_class2_t.filter is NULL");
    // Kept loaded for the whole process: netcdf-c's plugins are not written to be unloaded.
    std::mem::forget(library);
    filter
}

/// Runs one filter on a malloc'd copy of `data` with `*buf_size = nbytes`.
fn call(filter: H5Z_func_t, flags: c_uint, params: &[u32], data: &[u8]) -> Vec<u8> {
    let filter = filter.expect("a filter function");
    // SAFETY: a fresh malloc'd block holding data, as HDF5 passes chunks.
    unsafe {
        let mut buf = libc::malloc(data.len().max(1));
        std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast::<u8>(), data.len());
        let mut buf_size = data.len();
        let produced = filter(flags, params.len(), params.as_ptr(), data.len(), &mut buf_size, &mut buf);
        assert!(produced != 0 && produced != usize::MAX, "filter failed (flags {flags:#x}, params {params:?})");
        let out = std::slice::from_raw_parts(buf.cast::<u8>(), produced).to_vec();
        libc::free(buf);
        out
    }
}

/// A smooth float32 field with noise, like gridded model output (no repeats).
fn field(bytes: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..bytes / 4)
        .flat_map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state % 1000) as f32 / 1000.0;
            ((i as f32 / 97.0).sin() * 250.0 + noise).to_le_bytes()
        })
        .collect()
}

#[test]
#[ignore = "needs NCFILTERS_STOCK_PLUGINS (run by `cargo xtask differential`)"]
fn ours_and_netcdf_c_plugins_read_each_other() {
    let dir = std::env::var("NCFILTERS_STOCK_PLUGINS").expect("NCFILTERS_STOCK_PLUGINS");
    let cases: [(&str, H5Z_func_t, &[u32], bool); 9] = [
        ("shuffle", Some(h5z::h5z_shuffle), &[4], true),
        ("shuffle", Some(h5z::h5z_shuffle), &[3], true),
        ("fletcher32", Some(h5z::h5z_fletcher32), &[], true),
        ("deflate", Some(h5z::h5z_deflate), &[1], false),
        ("deflate", Some(h5z::h5z_deflate), &[6], false),
        ("bzip2", Some(h5z::h5z_bzip2), &[9], false),
        ("bzip2", Some(h5z::h5z_bzip2), &[1], false),
        ("zstd", Some(h5z::h5z_zstd), &[1], false),
        ("zstd", Some(h5z::h5z_zstd), &[(-3i32) as u32], false),
    ];
    let mut failures = Vec::new();
    for size in [8usize, 4099, 1 << 20] {
        let data = field(size);
        for (name, ours, params, identical) in cases {
            let theirs = c_filter(&dir, name);
            let ours_encoded = call(ours, 0, params, &data);
            let theirs_encoded = call(theirs, 0, params, &data);
            let case = format!("{name}{params:?} on {size} bytes");
            if call(theirs, H5Z_FLAG_REVERSE, params, &ours_encoded) != data {
                failures.push(format!("{case}: the C plugin does not decode ours"));
            }
            if call(ours, H5Z_FLAG_REVERSE, params, &theirs_encoded) != data {
                failures.push(format!("{case}: ours does not decode the C plugin's"));
            }
            if identical && ours_encoded != theirs_encoded {
                failures.push(format!("{case}: output differs from the C plugin's"));
            }
            if !identical && ours_encoded.len() * 10 > theirs_encoded.len() * 11 + 640 {
                failures.push(format!(
                    "{case}: {} bytes, the C plugin {} (more than 10% larger)",
                    ours_encoded.len(),
                    theirs_encoded.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
