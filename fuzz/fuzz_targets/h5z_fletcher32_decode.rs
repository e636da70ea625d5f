// SPDX-License-Identifier: BSD-3-Clause
//! fletcher32's decoder on any chunk: checks the trailing checksum and drops it, or with
//! `H5Z_FLAG_SKIP_EDC` (first byte odd) drops it unchecked; chunks shorter than 4 bytes are refused.
#![no_main]

mod common;

use common::Params;
use libfuzzer_sys::fuzz_target;
use ncfilters_core::c_types::H5Z_FLAG_SKIP_EDC;
use ncfilters_plugin::h5z;

fuzz_target!(|data: &[u8]| common::decode(data, Some(h5z::h5z_fletcher32), |input| {
    Some(Params { flags: input.pick(&[0, H5Z_FLAG_SKIP_EDC])?, cd_values: Vec::new() })
}));
