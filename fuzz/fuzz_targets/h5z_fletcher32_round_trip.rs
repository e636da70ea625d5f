// SPDX-License-Identifier: BSD-3-Clause
//! fletcher32 appends the checksum HDF5 computes, and decoding with the check on gives the chunk
//! back. The whole input is the chunk (fletcher32 has no parameters); the checksum is compared
//! with HDF5's own word-by-word loop (H5checksum.c's `H5_checksum_fletcher32`), a second
//! implementation of what `filters/src/fletcher32.rs` computes block by block.
#![no_main]

mod common;

use common::Encoding;
use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

/// `H5_checksum_fletcher32`, as HDF5 writes it: big-endian 16-bit words, folded every 360.
fn hdf5_fletcher32(data: &[u8]) -> u32 {
    let fold = |x: u32| (x & 0xffff) + (x >> 16);
    let (mut sum1, mut sum2) = (0u32, 0u32);
    for block in data.chunks(720) {
        for pair in block.chunks_exact(2) {
            sum1 = sum1.wrapping_add(u32::from(u16::from_be_bytes([pair[0], pair[1]])));
            sum2 = sum2.wrapping_add(sum1);
        }
        if block.len() >= 2 {
            sum1 = fold(sum1);
            sum2 = fold(sum2);
        }
    }
    if data.len() % 2 == 1 {
        sum1 = sum1.wrapping_add(u32::from(data[data.len() - 1]) << 8);
        sum2 = sum2.wrapping_add(sum1);
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    (fold(sum2) << 16) | fold(sum1)
}

fuzz_target!(|data: &[u8]| {
    let Some(encoded) = common::round_trip(Some(h5z::h5z_fletcher32), &[], data, Encoding::Succeeds) else { return };
    let (chunk, checksum) = encoded.split_at(data.len());
    assert_eq!(chunk, data, "fletcher32 keeps the data in front");
    assert_eq!(checksum, hdf5_fletcher32(data).to_le_bytes(), "checksum of {} bytes", data.len());
});
