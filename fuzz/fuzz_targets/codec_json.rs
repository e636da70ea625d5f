// SPDX-License-Identifier: BSD-3-Clause
//! NCZarr codec JSON: what `.zarray` may hold (`readable_codec`) and what a plugin may return
//! (`written_codec`, both dialects). Any input gives a value or an error, never a panic, and
//! whatever is accepted re-reads to the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncfilters_core::codec_json::{readable_codec, written_codec, Dialect};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let type_size = data.first().map_or(4, |&b| usize::from(b % 9));
    if let Ok(readable) = readable_codec(text, type_size) {
        assert_eq!(readable_codec(&readable, type_size).as_deref(), Ok(readable.as_str()), "normal form is stable");
    }
    for dialect in [Dialect::Numeric, Dialect::Legacy] {
        if let Ok(written) = written_codec(text, dialect, type_size) {
            if dialect == Dialect::Legacy {
                assert_eq!(written, text);
            }
        }
    }
});
