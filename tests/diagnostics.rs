// SPDX-License-Identifier: BSD-3-Clause
//! Diagnostics never panic: with stderr on `/dev/full` (ENOSPC) or on a pipe whose reader is
//! gone (EPIPE, SIGPIPE ignored as Python does), reporting returns and the process lives on.
//! Each case runs this test binary again as a child with its stderr redirected. `/dev/full` and
//! SIGPIPE are unix's.
#[cfg(unix)]
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Command;
#[cfg(unix)]
use std::process::Stdio;

const CHILD: &str = "NCFILTERS_DIAGNOSTICS_CHILD";

/// In the child: every kind of diagnostic, many times. Returns normally only if none panicked.
#[test]
fn child_reports_to_a_failing_stderr() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    for i in 0..1000 {
        ncfilters::error::report(format_args!("report {i}"));
    }
    // A panic inside the boundary: its handler reports on a failing stderr too.
    // SAFETY: the test's own thread stands for C's: nothing else calls netcdf-c here.
    let thread = unsafe { ncfilters::ffi_boundary::CallersThread::promise() };
    let status: std::os::raw::c_int =
        ncfilters::ffi_export!(named "diagnostics test", thread, |_| panic!("deliberate"));
    assert_eq!(status, ncfilters::error::NC_EINTERNAL.code());
    // The loader's debug account and skip messages (`child` sets the debug flag and the path).
    // SAFETY: as above.
    let thread = unsafe { ncfilters::ffi_boundary::CallersThread::promise() };
    ncfilters::ffi_boundary::with_call(thread, |call| {
        ncfilters::test_support::forget_plugins(call);
        assert!(ncfilters::test_support::registry_has(call, 32015));
    });
    println!("child survived");
}

/// This test binary again, running only the child: through `NCFILTERS_TEST_RUNNER` when set (the
/// emulator of `cargo xtask cross`, which runs this binary for another architecture).
fn child() -> Command {
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("NCFILTERS_TEST_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    let mut command = match words.next() {
        Some(emulator) => {
            let mut command = Command::new(emulator);
            command.args(words).arg(exe);
            command
        }
        None => Command::new(exe),
    };
    command
        .args(["--exact", "child_reports_to_a_failing_stderr", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("NCFILTERS_DEBUG", "1")
        .env("HDF5_PLUGIN_PATH", "/nonexistent-ncfilters-dir:/dev/null")
        .env_remove("NCFILTERS_QUIET");
    command
}

#[cfg(unix)]
fn run_child(stderr: Stdio) -> std::process::Output {
    child().stdout(Stdio::piped()).stderr(stderr).output().unwrap()
}

#[cfg(unix)]
fn assert_survived(output: std::process::Output, what: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("child survived"),
        "{what}: child failed ({:?}):\n{stdout}",
        output.status
    );
}

#[cfg(unix)]
#[test]
fn reporting_to_dev_full_does_not_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    assert_survived(run_child(Stdio::from(full)), "stderr on /dev/full");
}

#[cfg(unix)]
#[test]
fn reporting_to_a_closed_pipe_does_not_panic() {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe() returns.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors are fresh and owned here; the reader is closed at once.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    assert_survived(run_child(Stdio::from(writer)), "stderr on a pipe without reader");
}

/// The child's stderr with `vars` set (its reports say "report N").
fn child_stderr(vars: &[(&str, &str)]) -> String {
    let output = child().env_remove("NCFILTERS_ALL_RANKS").envs(vars.iter().copied()).output().unwrap();
    assert!(output.status.success(), "child failed: {output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn in_an_mpi_job_only_rank_0_reports_unless_all_ranks_are_asked_for() {
    for rank_variable in ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"] {
        assert!(child_stderr(&[(rank_variable, "0")]).contains("ncfilters: report 999"), "{rank_variable}=0");
        assert!(!child_stderr(&[(rank_variable, "3")]).contains("ncfilters: report"), "{rank_variable}=3");
    }
    let all = child_stderr(&[("OMPI_COMM_WORLD_RANK", "3"), ("NCFILTERS_ALL_RANKS", "1")]);
    assert!(all.contains("ncfilters: report 999"));
}
