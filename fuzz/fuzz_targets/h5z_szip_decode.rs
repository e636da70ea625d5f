// SPDX-License-Identifier: BSD-3-Clause
//! szip's decoder on any chunk (a 4-byte length, then libaec's output), with
//! `cd_values = {mask, pixels per block, bits per pixel, pixels per scanline}` picked by the
//! first five bytes: EC or NN coding, RAW, LSB or MSB, and bad masks; even block sizes and an
//! odd one; 8..64 bits and bad widths; 1..4096 pixels per scanline.
#![no_main]

mod common;

use common::Params;
use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

/// Option masks: NN|K13|RAW|LSB (169), EC|K13|RAW|LSB (141), the MSB twins, no RAW, none, not an int.
const MASKS: &[u32] = &[169, 141, 177, 149, 41, 0, u32::MAX];

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_szip), |input| {
    let mask = input.pick(MASKS)?;
    let pixels_per_block = input.pick(&[32, 8, 16, 7, 0, 64])?;
    let bits_per_pixel = input.pick(&[32, 8, 16, 64, 24, 1, 0, 33])?;
    let pixels_per_scanline = 1 + u32::from(input.u16()? % 4096);
    Some(Params::from(&[mask, pixels_per_block, bits_per_pixel, pixels_per_scanline][..]))
}));
