// SPDX-License-Identifier: BSD-3-Clause
//! deflate's decoder on any chunk, with the level parameter picked by the first byte: 0..9,
//! over 9 (bad metadata, refused in both directions as H5Zdeflate does), missing, or one too many.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

/// `cd_values`, by the first byte.
const LEVELS: &[&[u32]] = &[&[6], &[0], &[1], &[9], &[10], &[255], &[u32::MAX], &[], &[6, 6]];

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_deflate), |input| Some(input.pick(LEVELS)?.into())));
