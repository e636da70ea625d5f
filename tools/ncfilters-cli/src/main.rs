// SPDX-License-Identifier: BSD-3-Clause
//! `ncfilters`: the C calls into libnetcdf built with ncfilters (its public API and the three
//! functions of `ncfilters.h`); everything else is in the `ncfilters_cli` library.

use std::ffi::{c_char, c_int, CStr, CString};
use std::io::{self, Write};
use std::process::ExitCode;

use clap::FromArgMatches;
use ncfilters_cli::{command, run, Cli, Netcdf, Reply};

extern "C" {
    // netcdf.h (4.9.0), public.
    fn nc_inq_libvers() -> *const c_char;
    fn nc_initialize() -> c_int;
    fn nc_strerror(ncerr: c_int) -> *const c_char;
    // ncfilters.h: *json_out is a malloc'ed NUL-terminated UTF-8 JSON text, also on error.
    fn ncfilters_report(json_out: *mut *mut c_char) -> c_int;
    fn ncfilters_describe_spec(spec: *const c_char, json_out: *mut *mut c_char) -> c_int;
    fn ncfilters_describe_codec(codec_json: *const c_char, json_out: *mut *mut c_char) -> c_int;
}

/// A static C string from libnetcdf, or None for NULL.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string that lives for the rest of the process.
unsafe fn static_text(text: *const c_char) -> Option<String> {
    // SAFETY: the caller's contract.
    (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

/// Calls one `ncfilters_*` function with an out-pointer, takes its text and frees it.
fn call(function: impl FnOnce(*mut *mut c_char) -> c_int) -> Result<Reply, String> {
    let mut json: *mut c_char = std::ptr::null_mut();
    let status = function(&mut json);
    if json.is_null() {
        return Err(format!("returned status {status} and no JSON (NULL)"));
    }
    // SAFETY: a non-NULL *json_out is a NUL-terminated string the library allocated with malloc,
    // owned by the caller from here on; it is read once, then freed once.
    let text = unsafe { CStr::from_ptr(json) }.to_str().map(str::to_string);
    // SAFETY: as above; `text` is an owned copy.
    unsafe { libc::free(json.cast()) };
    match text {
        Ok(json) => Ok(Reply { status, json }),
        Err(error) => Err(format!("returned status {status} and JSON that is not UTF-8 ({error})")),
    }
}

/// An argument for C (a command-line argument never holds NUL, but say so if one does).
fn c_argument(text: &str) -> Result<CString, String> {
    CString::new(text).map_err(|_| format!("the input '{}' contains a NUL byte", text.escape_debug()))
}

struct Libnetcdf;

impl Netcdf for Libnetcdf {
    fn report(&mut self) -> Result<Reply, String> {
        // SAFETY: the contract: a valid out-pointer.
        call(|json| unsafe { ncfilters_report(json) })
    }

    fn describe_spec(&mut self, spec: &str) -> Result<Reply, String> {
        let spec = c_argument(spec)?;
        // SAFETY: a NUL-terminated input that outlives the call, and a valid out-pointer.
        call(|json| unsafe { ncfilters_describe_spec(spec.as_ptr(), json) })
    }

    fn describe_codec(&mut self, codec_json: &str) -> Result<Reply, String> {
        let codec_json = c_argument(codec_json)?;
        // SAFETY: as for describe_spec.
        call(|json| unsafe { ncfilters_describe_codec(codec_json.as_ptr(), json) })
    }

    fn strerror(&self, status: i32) -> String {
        // SAFETY: nc_strerror returns a static string for any code.
        unsafe { static_text(nc_strerror(status)) }.unwrap_or_else(|| format!("error {status}"))
    }
}

fn main() -> ExitCode {
    // SAFETY: nc_inq_libvers returns a static string.
    let libvers = unsafe { static_text(nc_inq_libvers()) };
    // Parses (exits 0 for --help/--version and 2 for usage errors, clap's way) before touching
    // anything else in libnetcdf.
    let matches = command(libvers.as_deref()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    let mut stderr = io::stderr().lock();
    // SAFETY: no arguments; initialises libnetcdf as its first nc_open would.
    let status = unsafe { nc_initialize() };
    if status != 0 {
        let message = Libnetcdf.strerror(status);
        let _ = writeln!(stderr, "ncfilters: error: nc_initialize: {message} (status {status})");
        return ExitCode::from(ncfilters_cli::Exit::Failure.code() as u8);
    }
    let status = run(&cli, &mut Libnetcdf, &mut io::stdout().lock(), &mut stderr);
    ExitCode::from(u8::try_from(status).unwrap_or(ncfilters_cli::Exit::Failure.code() as u8))
}
