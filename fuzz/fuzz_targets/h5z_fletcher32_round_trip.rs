// SPDX-License-Identifier: BSD-3-Clause
//! fletcher32 appends the checksum HDF5 computes, and decoding with the check on gives the chunk
//! back. The whole input is the chunk (fletcher32 has no parameters); the checksum is compared
//! with HDF5's own word-by-word loop (`fletcher32::word_by_word`), a second implementation of
//! what the filter computes block by block.
#![no_main]

mod common;

use common::Encoding;
use libfuzzer_sys::fuzz_target;
use ncfilters_core::filters::fletcher32;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| {
    let Some(encoded) = common::round_trip(Some(h5z::h5z_fletcher32), &[], data, Encoding::Succeeds) else { return };
    let (chunk, checksum) = encoded.split_at(data.len());
    assert_eq!(chunk, data, "fletcher32 keeps the data in front");
    assert_eq!(checksum, fletcher32::word_by_word(data).to_le_bytes(), "checksum of {} bytes", data.len());
});
