// SPDX-License-Identifier: BSD-3-Clause
//! blosc's decoder on any chunk (a c-blosc 1.x frame, decoded by libblosc after validation),
//! with `cd_values = {2, 2, type size, chunk bytes, level, shuffle, compressor}` picked by the
//! first six bytes, bad values and short lists included: the decoder reads the frame's own
//! header, but the parameters are checked first as H5Zblosc.c does.
#![no_main]

mod common;

use common::Params;
use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_blosc), |input| {
    let count = input.pick(&[7, 3, 5, 6, 2, 0])?;
    let cd_values = [
        2,
        2,
        input.pick(&[4, 1, 2, 8, 16, 0, 3, 255, 256])?,
        input.pick(&[4096, 0, 1, 65_536, u32::MAX])?,
        input.pick(&[5, 0, 1, 9, 10])?,
        input.pick(&[1, 0, 2, 3, 255])?,
        input.pick(&[0, 1, 2, 3, 4, 5, 6, 255])?,
    ];
    Some(Params::from(&cd_values[..count]))
}));
