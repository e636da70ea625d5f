// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c status codes (`netcdf.h`) used by ncfilters, and the diagnostics channel.
#![forbid(unsafe_code)]

use std::io::Write;
use std::os::raw::c_int;

/// `NC_NOERR`: what a C function returns on success. Not an [`NcError`].
pub const NC_NOERR: c_int = 0;

/// A netcdf-c error status (`NC_E*`, or an HDF5-side failure code passed through): never
/// `NC_NOERR`, so `Err` always means failure.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NcError(std::num::NonZeroI32);

impl NcError {
    /// The error with status `code`, checked when the constant is built.
    const fn constant(code: c_int) -> Self {
        match std::num::NonZeroI32::new(code) {
            Some(code) => NcError(code),
            None => panic!("NC_NOERR is not an error"),
        }
    }

    /// The status code C gets.
    pub const fn code(self) -> c_int {
        self.0.get()
    }
}

/// The status number, as netcdf-c's messages print it.
impl std::fmt::Display for NcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl std::fmt::Debug for NcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NcError({})", self.code())
    }
}

/// A status from C as a result: `NC_NOERR` is `Ok`, any other code its error. The one place
/// where a C status becomes a Rust error.
pub fn check(status: c_int) -> NcResult<()> {
    match std::num::NonZeroI32::new(status) {
        None => Ok(()),
        Some(code) => Err(NcError(code)),
    }
}

/// A result as C's status: `NC_NOERR` or the error's code.
pub fn status_code(result: NcResult<()>) -> c_int {
    result.err().map_or(NC_NOERR, NcError::code)
}

pub const NC_EBADID: NcError = NcError::constant(-33);
pub const NC_EINVAL: NcError = NcError::constant(-36);
pub const NC_EINDEFINE: NcError = NcError::constant(-39);
pub const NC_ENOTATT: NcError = NcError::constant(-43);
pub const NC_ENOMEM: NcError = NcError::constant(-61);
pub const NC_EINTERNAL: NcError = NcError::constant(-92);
pub const NC_EHDFERR: NcError = NcError::constant(-101);
pub const NC_ELATEDEF: NcError = NcError::constant(-123);
pub const NC_ENOTBUILT: NcError = NcError::constant(-128);
pub const NC_EFILTER: NcError = NcError::constant(-132);
pub const NC_ENOFILTER: NcError = NcError::constant(-136);

/// Result of an operation that fails with a netcdf-c status code.
pub type NcResult<T> = Result<T, NcError>;

/// Writes one diagnostic line to stderr, prefixed with `ncfilters:`.
///
/// Only bad input and internal faults are reported; `NCFILTERS_QUIET=1` silences them
/// for callers that print their own message from the returned status code. In an MPI job only
/// rank 0 reports (see [`is_secondary_mpi_rank`]).
pub fn report(message: std::fmt::Arguments<'_>) {
    #[cfg(any(test, feature = "test-support"))]
    if captured(message) {
        return;
    }
    if std::env::var_os("NCFILTERS_QUIET").is_some_and(|v| v == "1") || is_secondary_mpi_rank() {
        return;
    }
    write_stderr("ncfilters: ", message);
}

#[cfg(any(test, feature = "test-support"))]
thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Whether a test on this thread is capturing reports (see [`capture_reports`]); if so, keeps it.
#[cfg(any(test, feature = "test-support"))]
fn captured(message: std::fmt::Arguments<'_>) -> bool {
    CAPTURE.with_borrow_mut(|capture| capture.as_mut().map(|lines| lines.push(message.to_string())).is_some())
}

/// The reports `body` makes on this thread, instead of writing them to stderr.
#[cfg(any(test, feature = "test-support"))]
pub fn capture_reports<T>(body: impl FnOnce() -> T) -> (T, Vec<String>) {
    CAPTURE.with_borrow_mut(|capture| *capture = Some(Vec::new()));
    let value = body();
    (value, CAPTURE.with_borrow_mut(Option::take).unwrap_or_default())
}

/// The variables MPI launchers set to each process's rank: OpenMPI's mpiexec, MPICH's and Intel
/// MPI's (PMI), PMIx launchers, Slurm's srun.
const MPI_RANK_VARIABLES: [&str; 4] = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"];

/// Whether this process is an MPI rank other than 0: every rank of a job meets the same bad
/// plugin or metadata, and one copy of the message says it (`NCFILTERS_ALL_RANKS=1`: all ranks
/// report). Read from the launcher's environment, so it holds before and without MPI_Init.
fn is_secondary_mpi_rank() -> bool {
    if std::env::var_os("NCFILTERS_ALL_RANKS").is_some_and(|v| v == "1") {
        return false;
    }
    let rank = MPI_RANK_VARIABLES.iter().find_map(|name| std::env::var(name).ok());
    rank.and_then(|rank| rank.trim().parse::<u64>().ok()).is_some_and(|rank| rank != 0)
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
