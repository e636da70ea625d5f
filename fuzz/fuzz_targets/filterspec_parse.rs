// SPDX-License-Identifier: BSD-3-Clause
//! `ncaux_h5filterspec_parse` and `ncaux_h5filterspec_parse_parameter` through the C ABI.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncfilters::abi::ncaux_filterspec::{ncaux_h5filterspec_parse, ncaux_h5filterspec_parse_parameter};
use std::ffi::CString;

fuzz_target!(|data: &[u8]| {
    let text = CString::new(data.split(|&b| b == 0).next().unwrap_or_default()).unwrap();
    let (mut id, mut n, mut params) = (0u32, 0usize, std::ptr::null_mut());
    // SAFETY: a valid C string and valid out-pointers.
    let status = unsafe { ncaux_h5filterspec_parse(text.as_ptr(), &mut id, &mut n, &mut params) };
    if status == 0 {
        // SAFETY: on success params holds n C-heap words, which we own.
        let words = unsafe { std::slice::from_raw_parts(params, n) };
        assert!(words.len() <= 2 * data.len());
        unsafe { libc::free(params.cast()) };
    } else {
        assert!(params.is_null());
        assert_eq!(status, -36);
    }
    let mut two = [0u32; 2];
    // SAFETY: two has room for the at most 2 words written.
    let status = unsafe { ncaux_h5filterspec_parse_parameter(text.as_ptr(), &mut n, two.as_mut_ptr()) };
    assert!(status == 0 && (n == 1 || n == 2) || status == -36);
});
