//! The panic boundary and the pointer helpers of the C interfaces.

use crate::error::{report, NcResult, NC_EINTERNAL, NC_EINVAL, NC_NOERR};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of an `int`-returning export: `Ok(())` becomes `NC_NOERR`, `Err(code)` the
/// code, and a panic `NC_EINTERNAL`, so no unwind ever reaches C.
pub fn status_of(name: &str, body: impl FnOnce() -> NcResult<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => NC_NOERR,
        Ok(Err(code)) => code,
        Err(_) => {
            report(format_args!("internal error (panic) in {name}; returning NC_EINTERNAL"));
            NC_EINTERNAL
        }
    }
}

/// Runs the body of a `void` export, swallowing (and reporting) any panic.
pub fn void_of(name: &str, body: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(body)).is_err() {
        report(format_args!("internal error (panic) in {name}; ignored"));
    }
}

/// The bytes of a NUL-terminated C string, or `None` for NULL.
///
/// # Safety
/// `text` is NULL or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn c_str_bytes<'a>(text: *const c_char) -> Option<&'a [u8]> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated per this function's contract.
    Some(unsafe { CStr::from_ptr(text) }.to_bytes())
}

/// Stores `value` through an optional out-pointer (netcdf-c's "ignored if NULL" convention).
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
pub unsafe fn write_opt<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL and writable per this function's contract.
        unsafe { out.write(value) }
    }
}

/// A filter's `(params, nparams)` as a slice (`NC_EINVAL` for NULL with `nparams > 0`).
///
/// # Safety
/// `params` is NULL or readable for `nparams` words for the returned lifetime.
pub unsafe fn params_slice<'a>(params: *const c_uint, nparams: usize) -> NcResult<&'a [u32]> {
    match (nparams, params.is_null()) {
        (0, _) => Ok(&[]),
        (_, true) => Err(NC_EINVAL),
        // SAFETY: non-NULL and readable for nparams words per the contract.
        _ => Ok(unsafe { std::slice::from_raw_parts(params, nparams) }),
    }
}
