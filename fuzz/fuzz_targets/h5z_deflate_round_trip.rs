//! deflate's encode then decode gives the chunk back, for `cd_values = {level}` with the level
//! (0..9) picked by the first byte.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters::abi::h5z;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(level) = input.byte().map(|b| u32::from(b % 10)) else { return };
    common::round_trip(Some(h5z::h5z_deflate), &[level], input.rest(), Encoding::Succeeds);
});
