//! netcdf-c status codes (`netcdf.h`) used by ncfilters, and the diagnostics channel.
#![forbid(unsafe_code)]

use std::io::Write;
use std::os::raw::c_int;

pub const NC_NOERR: c_int = 0;
pub const NC_EBADID: c_int = -33;
pub const NC_EINVAL: c_int = -36;
pub const NC_ENOMEM: c_int = -61;
pub const NC_EFILTER: c_int = -132;
pub const NC_ENOFILTER: c_int = -136;
pub const NC_ENOTBUILT: c_int = -128;
pub const NC_EINTERNAL: c_int = -92;

/// Result of an operation that fails with a netcdf-c status code.
pub type NcResult<T> = Result<T, c_int>;

/// Writes one diagnostic line to stderr, prefixed with `ncfilters:`.
///
/// Only bad input and internal faults are reported; `NCFILTERS_QUIET=1` silences them
/// for callers that print their own message from the returned status code.
pub fn report(message: std::fmt::Arguments<'_>) {
    if std::env::var_os("NCFILTERS_QUIET").is_some_and(|v| v == "1") {
        return;
    }
    write_stderr("ncfilters: ", message);
}

/// Writes `prefix`, `message` and a newline to stderr in one write, ignoring every failure.
///
/// `eprintln!` panics when stderr fails (`ENOSPC` on `/dev/full`, `EPIPE` with SIGPIPE ignored,
/// `EAGAIN` on a non-blocking pipe); a diagnostic must never turn into a panic, nor may a
/// `Display` that panics while formatting.
pub fn write_stderr(prefix: &str, message: std::fmt::Arguments<'_>) {
    let write = || {
        let mut line = String::from(prefix);
        // A failing Display leaves the line as far as it got.
        let _ = std::fmt::Write::write_fmt(&mut line, message);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(write));
}

pub const NC_EINDEFINE: c_int = -39;
pub const NC_EHDFERR: c_int = -101;
pub const NC_ELATEDEF: c_int = -123;
pub const NC_ENOTATT: c_int = -43;
