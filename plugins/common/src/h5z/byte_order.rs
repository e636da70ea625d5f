// SPDX-License-Identifier: BSD-3-Clause
//! Chunks are the same bytes on every architecture: each standard filter, called as HDF5 calls
//! it, must decode the chunks in `testdata/chunks/` (written on x86_64, little-endian) and, where
//! the format or the bundled code fixes the bytes, encode the same ones again. `cargo xtask
//! cross` runs this on each architecture under qemu (s390x is big-endian, i386 and armhf
//! 32-bit), with `NCFILTERS_CHUNKS_OUT` set: the chunks written there are then decoded on
//! x86_64 (`NCFILTERS_CHUNKS_IN`), so each side reads the other's.
//!
//! `NCFILTERS_WRITE_CHUNKS=1` writes `testdata/chunks/` anew (on x86_64 only).

use super::tests::call;
use super::*;
use crate::c_types::H5Z_FLAG_REVERSE;
use crate::standard_filters::{szip_local_params, szip_user_mask};

/// `H5_SZIP_NN_OPTION_MASK`: nearest-neighbour preprocessing.
const SZIP_NN: u32 = 32;
use std::path::{Path, PathBuf};

/// How much of a chunk written here must equal the one written on x86_64.
#[derive(Clone, Copy, Debug)]
enum Fixed {
    /// Every byte: the format (shuffle, fletcher32) or the code bundled into ncfilters (zlib-rs,
    /// libbz2-rs, libzstd) decides them.
    Whole,
    /// blosc's 16-byte header but its compressed size (bytes 12..16): the payload is the system
    /// libblosc's, whose version differs between distributions.
    BloscHeader,
    /// None: the system's libaec writes the payload; the chunk must still decode everywhere.
    Decodes,
}

/// deflate's and zstd's: every byte, as zlib-rs and the bundled libzstd write them, but none in
/// the distribution build, whose system zlib and libzstd differ between distributions. (bzip2's
/// stay fixed: libbz2 has written the same bytes since 1.0.6, and libbz2-rs writes libbz2's.)
fn library_bytes() -> Fixed {
    if ncfilters_core::SYSTEM_LIBS {
        Fixed::Decodes
    } else {
        Fixed::Whole
    }
}

struct Case {
    name: &'static str,
    filter: H5Z_func_t,
    params: Vec<u32>,
    fixed: Fixed,
}

/// 64 KiB of 4-byte little-endian integers, smooth with a little noise: made of integer
/// arithmetic only, so the same bytes on every architecture.
fn chunk() -> Vec<u8> {
    (0..16_384u32)
        .flat_map(|i| {
            (100_000 + (i % 256) * 37 + (i / 256) * 1000 + (i.wrapping_mul(2_654_435_761) >> 29)).to_le_bytes()
        })
        .collect()
}

fn cases(len: usize) -> Vec<Case> {
    let len = len as u32;
    let szip = szip_local_params(&[szip_user_mask(SZIP_NN), 32], 32, 256, 16_384, true).unwrap().to_vec();
    let case = |name, filter: H5Z_func_t, params: &[u32], fixed| Case { name, filter, params: params.to_vec(), fixed };
    vec![
        case("deflate-6", Some(h5z_deflate), &[6], library_bytes()),
        case("shuffle-4", Some(h5z_shuffle), &[4], Fixed::Whole),
        case("shuffle-8", Some(h5z_shuffle), &[8], Fixed::Whole),
        case("fletcher32", Some(h5z_fletcher32), &[], Fixed::Whole),
        case("bzip2-9", Some(h5z_bzip2), &[9], Fixed::Whole),
        case("zstd-3", Some(h5z_zstd), &[3], library_bytes()),
        case("zstd-minus-5", Some(h5z_zstd), &[(-5i32) as u32], library_bytes()),
        case("blosc-blosclz-shuffle", Some(h5z_blosc), &[2, 2, 4, len, 5, 1, 0], Fixed::BloscHeader),
        case("blosc-lz4-bitshuffle", Some(h5z_blosc), &[2, 2, 4, len, 5, 2, 1], Fixed::BloscHeader),
        case("blosc-zstd-noshuffle", Some(h5z_blosc), &[2, 2, 4, len, 3, 0, 5], Fixed::BloscHeader),
        Case { name: "szip-nn-lsb", filter: Some(h5z_szip), params: szip, fixed: Fixed::Decodes },
    ]
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/chunks")
}

fn file(dir: &Path, case: &Case) -> PathBuf {
    dir.join(format!("{}.bin", case.name))
}

/// Decodes `encoded` with `case`'s filter, failing the test unless it gives `data`.
fn must_decode(case: &Case, encoded: &[u8], data: &[u8], whose: &str) {
    let (n, decoded) = call(case.filter, H5Z_FLAG_REVERSE, &case.params, encoded);
    assert!(n == data.len() && decoded == data, "{}: the chunk written {whose} does not decode here", case.name);
}

#[test]
fn chunks_are_the_same_bytes_on_every_architecture() {
    let data = chunk();
    let writing = std::env::var_os("NCFILTERS_WRITE_CHUNKS").is_some();
    assert!(!writing || cfg!(all(target_arch = "x86_64", target_endian = "little")), "goldens are written on x86_64");
    let out = std::env::var_os("NCFILTERS_CHUNKS_OUT").map(PathBuf::from);
    if let Some(out) = &out {
        std::fs::create_dir_all(out).unwrap();
    }
    for case in cases(data.len()) {
        let (n, encoded) = call(case.filter, 0, &case.params, &data);
        assert!(n > 0, "{}: encoding failed", case.name);
        let encoded = &encoded[..n];
        if let Some(out) = &out {
            std::fs::write(file(out, &case), encoded).unwrap();
        }
        let golden_file = file(&golden_dir(), &case);
        if writing {
            std::fs::write(&golden_file, encoded).unwrap();
            continue;
        }
        let golden = std::fs::read(&golden_file).unwrap_or_else(|e| panic!("{}: {e}", golden_file.display()));
        must_decode(&case, &golden, &data, "on x86_64");
        must_decode(&case, encoded, &data, "here");
        match case.fixed {
            Fixed::Whole => assert!(encoded == golden, "{}: other bytes than on x86_64", case.name),
            Fixed::BloscHeader => assert!(
                encoded.len() >= 16 && encoded[..12] == golden[..12],
                "{}: another blosc header than on x86_64: {:02x?} vs {:02x?}",
                case.name,
                &encoded[..16.min(encoded.len())],
                &golden[..16]
            ),
            Fixed::Decodes => {}
        }
    }
    // The other architecture's chunks, where `cargo xtask cross` left them.
    if let Some(dir) = std::env::var_os("NCFILTERS_CHUNKS_IN").map(PathBuf::from) {
        for case in cases(data.len()) {
            let theirs = std::fs::read(file(&dir, &case)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            must_decode(&case, &theirs, &data, &format!("in {}", dir.display()));
        }
    }
}
