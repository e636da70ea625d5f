// SPDX-License-Identifier: BSD-3-Clause
//! blosc's encode then decode gives the chunk back, for the `cd_values` blosc's `set_local`
//! stores, `{2, 2, type size, chunk bytes, level, shuffle, compressor}`, with 4 to 7 of them
//! (the rest default) picked by the first five bytes: type size 1..=255, level 0..9, no, byte
//! or bit shuffle, and each of the six compressors; from 128 on, the first byte also makes the
//! chunk large enough for pieces on the worker pool. Needs libblosc: encoding never fails with
//! valid parameters (a chunk blosc cannot shrink is stored), so without it every run fails.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters_core::filters::blosc::PIECES_FROM;
use ncfilters_plugin::h5z;

/// The `cd_values`, and whether the chunk is made large.
fn choose(input: &mut Input) -> Option<(Vec<u32>, bool)> {
    let first = input.byte()?;
    let count = [7, 4, 5, 6][usize::from(first % 4)];
    let type_size = u32::from(input.byte()?.max(1));
    let level = u32::from(input.byte()? % 10);
    let shuffle = u32::from(input.byte()? % 3);
    let compressor = u32::from(input.byte()? % 6);
    let mut cd_values = vec![2, 2, type_size, 0, level, shuffle, compressor];
    cd_values.truncate(count);
    Some((cd_values, first >= 128))
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some((mut cd_values, large)) = choose(&mut input) else { return };
    let chunk = if large { common::large(input.rest(), PIECES_FROM) } else { input.rest().to_vec() };
    cd_values[3] = u32::try_from(chunk.len()).expect("fuzz chunks are at most a few MiB");
    common::round_trip(Some(h5z::h5z_blosc), &cd_values, &chunk, Encoding::Succeeds);
});
