// SPDX-License-Identifier: BSD-3-Clause
//! deflate's encode then decode gives the chunk back, for `cd_values = {level}` with the level
//! (0..9) picked by the first byte; from 128 on, that byte also makes the chunk large enough for
//! pigz-style blocks on the worker pool.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters_core::filters::deflate::PARALLEL_ABOVE;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(choice) = input.byte() else { return };
    let level = u32::from(choice % 10);
    let chunk = if choice >= 128 { common::large(input.rest(), PARALLEL_ABOVE) } else { input.rest().to_vec() };
    common::round_trip(Some(h5z::h5z_deflate), &[level], &chunk, Encoding::Succeeds);
});
