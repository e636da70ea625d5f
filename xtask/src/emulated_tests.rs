// SPDX-License-Identifier: BSD-3-Clause
//! The shipped crates' tests under an emulator (qemu-user for `cross`, Wine for `wine`). Emulation
//! fails a test now and then for reasons of its own (Wine once refused a test's child process with
//! OS error 1359), so a test that fails runs once more, alone, and one that then passes is reported
//! as flaky instead of failing the day. The netcdf-c suites have the same rule (`ctest_suite`).

use std::path::Path;
use std::process::Command;

use crate::harness::{read_to_string, Result};
use crate::process::succeeds_into_log;
use crate::text::{libtest_counts, print_tail};

/// What a run of the tests gave, once the failures have run once more.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub passed: usize,
    /// Failed in both runs; or 1 for a binary that ended without a result (a crash).
    pub failed: usize,
    /// Failed in the first run and passed when run once more.
    pub flaky: Vec<String>,
}

/// Runs `tests()` (a `cargo test … --no-fail-fast` under the emulator) into `log_file`. Its failed
/// tests then run once more with `tests()`, filtered to exactly them, into `<log_file>.again.log`.
pub fn run_with_failures_once_more(tests: impl Fn() -> Command, log_file: &Path) -> Result<Outcome> {
    let succeeded = succeeds_into_log(&mut tests(), log_file, false)?;
    let first = read_to_string(log_file)?;
    let (passed, failed) = libtest_counts(&first);
    let names = failed_tests(&first);
    if succeeded && failed == 0 {
        return Ok(Outcome { passed, failed: 0, flaky: Vec::new() });
    }
    // A binary that crashed names no failure: nothing to run again.
    if names.is_empty() || names.len() != failed {
        print_tail(log_file, 60);
        return Ok(Outcome { passed, failed: failed.max(1), flaky: Vec::new() });
    }
    println!("{} failed; run once more: {}", names.len(), names.join(" "));
    let again_log = log_file.with_extension("again.log");
    let mut again = tests();
    again.args(["--", "--exact"]).args(&names);
    let succeeded_again = succeeds_into_log(&mut again, &again_log, false)?;
    let again_text = read_to_string(&again_log)?;
    let (flaky, failing): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|name| succeeded_again && passed_tests(&again_text).any(|ok| ok == name));
    if !failing.is_empty() {
        print_tail(log_file, 60);
        print_tail(&again_log, 30);
    }
    Ok(Outcome { passed: passed + flaky.len(), failed: failing.len(), flaky })
}

/// The names of libtest's `test <name> ... FAILED` lines.
fn failed_tests(log: &str) -> Vec<String> {
    let mut names: Vec<String> = tests_ending(log, " ... FAILED").map(str::to_string).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn passed_tests(log: &str) -> impl Iterator<Item = &str> {
    tests_ending(log, " ... ok")
}

fn tests_ending<'a>(log: &'a str, ending: &'a str) -> impl Iterator<Item = &'a str> {
    log.lines().filter_map(move |line| line.strip_prefix("test ")?.strip_suffix(ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_and_passed_tests_are_read_from_libtest_lines() {
        let log = "running 3 tests\ntest a::b ... ok\ntest c ... FAILED\ntest d ... ignored\n\
                   failures:\n    c\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n\
                   test c ... FAILED\n";
        assert_eq!(failed_tests(log), ["c"]);
        assert_eq!(passed_tests(log).collect::<Vec<_>>(), ["a::b"]);
    }

    /// A shell script stands in for the emulated cargo: its first run prints `first`, later ones
    /// `again`, each failing when it reports a failure; it keeps the arguments of its last run.
    fn stand_in(dir: &Path, first: &str, again: &str) -> impl Fn() -> Command {
        let marker = dir.join("ran");
        let script = format!(
            "if [ -e {marker} ]; then out='{again}'; else out='{first}'; fi; touch {marker}; \
             echo \"$@\" > {marker}.args; printf '%b' \"$out\"; case \"$out\" in *FAILED*) exit 101;; esac",
            marker = marker.display()
        );
        move || {
            let mut command = Command::new("sh");
            command.args(["-c", &script, "sh"]);
            command
        }
    }

    fn first_run(failed: &str) -> String {
        format!("test ok_one ... ok\\ntest {failed} ... FAILED\\ntest result: FAILED. 1 passed; 1 failed;\\n")
    }

    #[test]
    fn a_failure_that_passes_once_more_is_flaky_and_one_that_fails_again_fails() {
        let dir = std::env::temp_dir().join(format!("ncfilters-emulated-{}", std::process::id()));
        for (again, expected) in [
            ("test flaky ... ok\\ntest result: ok. 1 passed; 0 failed;\\n", (2, 0, vec!["flaky".to_string()])),
            ("test flaky ... FAILED\\ntest result: FAILED. 0 passed; 1 failed;\\n", (1, 1, Vec::new())),
        ] {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let outcome = run_with_failures_once_more(stand_in(&dir, &first_run("flaky"), again), &dir.join("t.log"));
            let outcome = outcome.unwrap();
            assert_eq!((outcome.passed, outcome.failed, outcome.flaky), expected);
            assert_eq!(std::fs::read_to_string(dir.join("ran.args")).unwrap(), "-- --exact flaky\n");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
