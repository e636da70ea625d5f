// SPDX-License-Identifier: BSD-3-Clause
//! szip's encode then decode gives the chunk back, for the `cd_values` szip's `set_local` stores,
//! `{mask, pixels per block, bits per pixel, pixels per scanline}`, picked by the first five
//! bytes: EC or NN coding, LSB or MSB order; 8, 16 or 32 pixels per block (what libaec codes);
//! 8, 16, 32 or 64 bits per pixel (netCDF's types); a scanline of 1 to 128 blocks, at most the
//! chunk. The chunk is cut to whole pixels and must hold a block, as `set_local` requires.
//! Encoding fails, as H5Zszip.c's does, on data szip cannot shrink; a chunk of zeros must
//! encode, or libsz did not load.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;
use std::sync::Once;

/// ALLOW_K13 | RAW with EC or NN, and LSB or MSB (what `H5Pset_szip` and `set_local` store).
const MASKS: [u32; 4] = [141, 169, 149, 177];

fn choose(input: &mut Input) -> Option<[u32; 4]> {
    let mask = input.pick(&MASKS)?;
    let pixels_per_block = input.pick(&[8, 16, 32])?;
    let bits_per_pixel = input.pick(&[8, 16, 32, 64])?;
    let pixels_per_scanline = pixels_per_block + u32::from(input.u16()?) % (pixels_per_block * 127 + 1);
    Some([mask, pixels_per_block, bits_per_pixel, pixels_per_scanline])
}

fuzz_target!(|data: &[u8]| {
    static LIBSZ_LOADS: Once = Once::new();
    LIBSZ_LOADS.call_once(|| {
        let zeros = common::run_filter(Some(h5z::h5z_szip), 0, &[141, 32, 8, 4096], &[0; 4096]);
        assert!(zeros.is_some(), "szip cannot encode a chunk of zeros: libsz (libaec) did not load?");
    });
    let mut input = Input::new(data);
    let Some([mask, pixels_per_block, bits_per_pixel, scanline]) = choose(&mut input) else { return };
    let pixel_bytes = bits_per_pixel as usize / 8;
    let chunk = input.rest();
    let pixels = chunk.len() / pixel_bytes;
    let Ok(pixels) = u32::try_from(pixels) else { return };
    if pixels < pixels_per_block {
        return;
    }
    // A scanline is at most the chunk's length (its fastest dimension), as set_local computes it.
    let cd_values = [mask, pixels_per_block, bits_per_pixel, scanline.min(pixels)];
    common::round_trip(Some(h5z::h5z_szip), &cd_values, &chunk[..pixels as usize * pixel_bytes], Encoding::MayFail);
});
