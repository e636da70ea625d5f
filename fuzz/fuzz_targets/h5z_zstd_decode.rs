// SPDX-License-Identifier: BSD-3-Clause
//! zstd's decoder on any chunk, with the level picked by the first byte: usual, 0, the
//! highest, negative (as its 32-bit pattern), out of range, or missing (refused).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

/// `cd_values`, by the first byte.
const LEVELS: &[&[u32]] = &[&[3], &[1], &[0], &[22], &[-5i32 as u32], &[1000], &[u32::MAX], &[], &[3, 3]];

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_zstd), |input| Some(input.pick(LEVELS)?.into())));
