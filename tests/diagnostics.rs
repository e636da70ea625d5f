//! Diagnostics never panic: with stderr on `/dev/full` (ENOSPC) or on a pipe whose reader is
//! gone (EPIPE, SIGPIPE ignored as Python does), reporting returns and the process lives on.
//! Each case runs this test binary again as a child with its stderr redirected.
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

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
    let status = ncfilters::ffi_boundary::status_of("diagnostics test", || panic!("deliberate"));
    assert_eq!(status, ncfilters::error::NC_EINTERNAL.code());
    // The loader's debug account and skip messages.
    std::env::set_var("NCFILTERS_DEBUG", "1");
    std::env::set_var("HDF5_PLUGIN_PATH", "/nonexistent-ncfilters-dir:/dev/null");
    ncfilters::test_support::forget_plugins();
    assert!(ncfilters::test_support::registry_has(32015));
    println!("child survived");
}

fn run_child(stderr: Stdio) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_reports_to_a_failing_stderr", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove("NCFILTERS_QUIET")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .output()
        .unwrap()
}

fn assert_survived(output: std::process::Output, what: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("child survived"),
        "{what}: child failed ({:?}):\n{stdout}",
        output.status
    );
}

#[test]
fn reporting_to_dev_full_does_not_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    assert_survived(run_child(Stdio::from(full)), "stderr on /dev/full");
}

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
