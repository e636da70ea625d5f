//! bzip2's encode then decode gives the chunk back, for `cd_values = {block size}` (1..9) or
//! none (block size 9), picked by the first byte.
#![no_main]

mod common;

use common::{Encoding, Input};
use libfuzzer_sys::fuzz_target;
use ncfilters::abi::h5z;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(choice) = input.byte() else { return };
    let cd_values: &[u32] = match choice % 10 {
        0 => &[],
        block_size => &[u32::from(block_size)],
    };
    common::round_trip(Some(h5z::h5z_bzip2), cd_values, input.rest(), Encoding::Succeeds);
});
