// SPDX-License-Identifier: BSD-3-Clause
//! `ncaux_h5filterspec_parselist` and `ncaux_h5filterspec_free` through the C ABI.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncfilters::abi::ncaux_filterspec::{ncaux_h5filterspec_free, ncaux_h5filterspec_parselist};
use std::ffi::CString;

fuzz_target!(|data: &[u8]| {
    let text = CString::new(data.split(|&b| b == 0).next().unwrap_or_default()).unwrap();
    let (mut format, mut n, mut vector) = (0, 0usize, std::ptr::null_mut());
    // SAFETY: a valid C string and valid out-pointers.
    let status = unsafe { ncaux_h5filterspec_parselist(text.as_ptr(), &mut format, &mut n, &mut vector) };
    if status != 0 {
        assert_eq!(status, -36);
        assert!(vector.is_null());
        return;
    }
    for i in 0..n {
        // SAFETY: vector holds n C-heap specs, each with nparams words; we own them all.
        unsafe {
            let spec = *vector.add(i);
            let _ = std::slice::from_raw_parts((*spec).params, (*spec).nparams);
            ncaux_h5filterspec_free(spec);
        }
    }
    // SAFETY: the vector itself is C-heap (NULL when n == 0).
    unsafe { libc::free(vector.cast()) };
});
