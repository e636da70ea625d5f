// SPDX-License-Identifier: BSD-3-Clause
//! zstd's encode then decode gives the chunk back, for `cd_values = {level}` (a signed level as
//! its 32-bit pattern): -22..=22 from the first byte, the fast negative levels included.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(level) = input.byte().map(|b| i32::from(b as i8) % 23) else { return };
    common::round_trip(Some(h5z::h5z_zstd), &[level as u32], input.rest(), Encoding::Succeeds);
});
