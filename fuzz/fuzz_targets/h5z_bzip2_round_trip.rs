// SPDX-License-Identifier: BSD-3-Clause
//! bzip2's encode then decode gives the chunk back, for `cd_values = {block size}` (1..9) or
//! none (block size 9), picked by the first byte; from 128 on, that byte also makes the chunk
//! large enough for pieces on the worker pool, joined into one stream.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters_core::filters::bzip2::piece_size;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(choice) = input.byte() else { return };
    let block_size = match choice % 10 {
        0 => 9,
        block_size => block_size,
    };
    let cd_values: &[u32] = if choice % 10 == 0 { &[] } else { &[u32::from(block_size)] };
    let chunk = if choice >= 128 {
        common::large(input.rest(), piece_size(u32::from(block_size)))
    } else {
        input.rest().to_vec()
    };
    common::round_trip(Some(h5z::h5z_bzip2), cd_values, &chunk, Encoding::Succeeds);
});
