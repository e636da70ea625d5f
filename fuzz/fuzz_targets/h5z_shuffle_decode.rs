// SPDX-License-Identifier: BSD-3-Clause
//! shuffle's decoder (unshuffle) on any chunk, with the element size picked by the first byte:
//! 0 (refused), 1 (nothing to do), the usual sizes, odd ones that leave a tail, sizes larger
//! than the chunk, or a missing parameter.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

/// `cd_values`, by the first byte.
const ELEMENT_SIZES: &[&[u32]] =
    &[&[4], &[0], &[1], &[2], &[3], &[8], &[16], &[5], &[7], &[12], &[32], &[255], &[65_536], &[u32::MAX], &[]];

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_shuffle), |input| Some(
    input.pick(ELEMENT_SIZES)?.into()
)));
