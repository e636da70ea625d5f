// SPDX-License-Identifier: BSD-3-Clause
//! bzip2's decoder on any chunk, with the block size picked by the first byte: 1..9, 0 and 10
//! (bad, but only the encoder reads it), or missing (9).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

/// `cd_values`, by the first byte.
const BLOCK_SIZES: &[&[u32]] = &[&[9], &[1], &[5], &[0], &[10], &[u32::MAX], &[]];

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_bzip2), |input| Some(input.pick(BLOCK_SIZES)?.into())));
