// SPDX-License-Identifier: BSD-3-Clause
//! shuffle's encode then decode gives the chunk back, for `cd_values = {element size}` picked by
//! the first byte: 1..=256, so the SIMD kernels' sizes, odd sizes, and sizes larger than the
//! chunk (left as is) are all reached, with chunks that are not a whole number of elements.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(element_size) = input.byte().map(|b| u32::from(b) + 1) else { return };
    common::round_trip(Some(h5z::h5z_shuffle), &[element_size], input.rest(), Encoding::Succeeds);
});
