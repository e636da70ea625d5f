// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c's ctest suite: how it is run (two halves, each test under a timeout)
//! and judged from ctest's log.
//!
//! A native suite must pass the expected count and fail exactly the known failures. A suite under
//! an emulator (qemu-user; Wine) is judged against stock's run under the same emulator instead:
//! its timeouts are scaled for emulation, a stock failure outside the known ones is run once more
//! and, if that run passes, reported and not counted, and ncfilters must fail nothing that stock
//! passes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{fail, log, read_to_string, Result};
use crate::process::succeeds_into_log;
use crate::text::print_matching;

/// Tests that race when run in parallel, run alone after the rest:
/// - tst_unknown and run_unknown both hide lib__nch5unknown.so by moving it out of the shared
///   plugins directory, and see each other's move;
/// - tst_h_scalar and ncdump_tst_h_scalar (which runs the same program) both write
///   ncdump/tst_h_scalar.nc, and one's nc_open fails while the other rewrites it.
const SERIAL_TESTS: &str = "_unknown$|tst_h_scalar$";

/// How long a test may run, and which runs once more, judged by that run.
pub struct TestLimits {
    pub timeout_seconds: u32,
    pub rerun: Rerun,
}

/// Which tests ctest runs a second time.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Rerun {
    Never,
    /// One that timed out (`--repeat after-timeout:2`).
    AfterTimeout,
    /// One that failed in any way (`--repeat until-pass:2`).
    AfterFailure,
}

/// A native test that runs longer is stopped and fails: the longest pass in about 30 s (the MPI
/// tests, oversubscribed), and a deadlocked MPI test would otherwise hold CI for ctest's default
/// 1500 s. It is not run again: the parallel suites' known deadlock would cost 300 s more.
pub const NATIVE: TestLimits = TestLimits { timeout_seconds: 300, rerun: Rerun::Never };

/// What runs a build's test programs when the machine cannot.
pub struct Emulator {
    pub name: &'static str,
    pub limits: TestLimits,
}

/// 3 × the native timeout, and a timed-out test runs once more: under qemu-user on 2 cores,
/// netcdf-c 4.9.3's nc_test (no filter) takes 290 s, and stock's hit the native 300 in CI.
pub const QEMU_USER: Emulator = Emulator {
    name: "qemu-user",
    limits: TestLimits { timeout_seconds: 3 * NATIVE.timeout_seconds, rerun: Rerun::AfterTimeout },
};

impl TestLimits {
    /// ctest's options for these limits.
    fn arguments(&self) -> Vec<String> {
        let mut arguments =
            vec!["--output-on-failure".to_string(), "--timeout".into(), self.timeout_seconds.to_string()];
        match self.rerun {
            Rerun::Never => {}
            Rerun::AfterTimeout => arguments.extend(["--repeat".to_string(), "after-timeout:2".into()]),
            Rerun::AfterFailure => arguments.extend(["--repeat".to_string(), "until-pass:2".into()]),
        }
        arguments
    }
}

/// ctest's arguments for the two halves of a suite under `limits`: the tests that may run side by
/// side, then those that must run alone.
pub fn ctest_halves(jobs: usize, limits: &TestLimits) -> [Vec<String>; 2] {
    let mut parallel = vec![format!("-j{jobs}"), "-E".into(), SERIAL_TESTS.into()];
    parallel.extend(limits.arguments());
    let mut serial = vec!["-R".to_string(), SERIAL_TESTS.into()];
    serial.extend(limits.arguments());
    [parallel, serial]
}

/// Runs both halves of a suite into `log_file` (`ctest` makes the command from ctest's
/// arguments); whether both exited 0.
pub fn run_halves(
    ctest: &dyn Fn(Vec<String>) -> Command,
    jobs: usize,
    limits: &TestLimits,
    log_file: &Path,
) -> Result<bool> {
    let mut succeeded = true;
    // Both halves run whatever the first gave: the failures are compared by name.
    for (i, half) in ctest_halves(jobs, limits).into_iter().enumerate() {
        succeeded &= succeeds_into_log(&mut ctest(half), log_file, i > 0)?;
    }
    Ok(succeeded)
}

/// Reads a suite's ctest log: prints `netcdf-c <label>: N tests passed, M failed` and fails unless
/// `expected` passed and exactly `failing` failed (`succeeded`: both ctest runs exited 0).
pub fn check_ctest_log(
    log_file: &Path,
    label: &str,
    succeeded: bool,
    expected: usize,
    failing: &[&str],
) -> Result<usize> {
    let build = log_file.display();
    let log = read_to_string(log_file)?;
    let (passed, failed) = (count_passed_tests(&log), count_failed_tests(&log));
    println!("netcdf-c {label}: {passed} tests passed, {failed} failed");
    let mut failed_names = failed_tests(&log);
    failed_names.sort_unstable();
    let mut expected_names = failing.to_vec();
    expected_names.sort_unstable();
    if failed_names != expected_names || succeeded != failing.is_empty() {
        print_matching(log_file, &["Failed", "***"], 40);
        fail!("ctest ({build}): failed {failed_names:?}, expected to fail {expected_names:?} (as on the stock build)");
    }
    if !failing.is_empty() {
        println!("  failed as expected: {}", failing.join(", "));
    }
    if passed != expected {
        fail!("expected {expected} ctest tests to pass ({build}), counted {passed}");
    }
    Ok(passed)
}

/// One build's suite under an emulator.
pub struct EmulatedSuite<'a> {
    /// How its summary line names it.
    pub label: String,
    pub log_file: PathBuf,
    /// ctest in the build's tree, given ctest's arguments.
    pub ctest: &'a dyn Fn(Vec<String>) -> Command,
}

/// What one ctest log says.
#[derive(Debug, Default)]
struct Outcome {
    passed: usize,
    total: usize,
    failed: BTreeSet<String>,
}

impl Outcome {
    fn read(log_file: &Path) -> Result<Outcome> {
        let log = read_to_string(log_file)?;
        let (passed, total) = ctest_counts(&log).unwrap_or((0, 0));
        Ok(Outcome { passed, total, failed: failed_tests(&log).into_iter().map(String::from).collect() })
    }
}

/// What the stock build's suite under an emulator sets as the bar.
#[derive(Debug, PartialEq)]
struct StockBaseline {
    /// Failed in its run and again when run once more (the known failures, and any new one).
    failing: BTreeSet<String>,
    /// Failed in its run, outside the known failures, and passed when run once more.
    flaky: BTreeSet<String>,
}

/// `first`: stock's suite; `again`: its failures outside `known`, run once more.
fn stock_baseline(first: &Outcome, again: &Outcome, known: &[&str]) -> StockBaseline {
    let unexpected = first.failed.iter().filter(|name| !known.contains(&name.as_str()));
    let (failing_again, flaky): (BTreeSet<String>, BTreeSet<String>) =
        unexpected.cloned().partition(|name| again.failed.contains(name));
    let failing = first.failed.iter().filter(|name| known.contains(&name.as_str())).cloned().chain(failing_again);
    StockBaseline { failing: failing.collect(), flaky }
}

/// The ncfilters build's failures that fail it: those stock passes, less the tests stock failed
/// once and that passed when ncfilters' own build ran them once more (`again`).
fn failures_stock_passes(ncfilters: &Outcome, again: &Outcome, stock: &StockBaseline) -> Vec<String> {
    ncfilters
        .failed
        .iter()
        .filter(|name| !stock.failing.contains(*name))
        .filter(|name| !stock.flaky.contains(*name) || again.failed.contains(*name))
        .cloned()
        .collect()
}

/// Runs `names` once more (a regular expression matching exactly them) into `log_file`, or
/// nothing: the outcome of that run.
fn run_again(suite: &EmulatedSuite, names: &[&String], limits: &TestLimits, log_file: &Path) -> Result<Outcome> {
    if names.is_empty() {
        return Ok(Outcome::default());
    }
    let pattern = format!("^({})$", names.iter().map(|name| regex_escaped(name)).collect::<Vec<_>>().join("|"));
    let mut arguments = vec!["-R".to_string(), pattern];
    arguments.extend(limits.arguments());
    succeeds_into_log(&mut (suite.ctest)(arguments), log_file, false)?;
    let outcome = Outcome::read(log_file)?;
    if outcome.total != names.len() {
        fail!("ctest ran {} tests when asked to run {} again ({})", outcome.total, names.len(), log_file.display());
    }
    Ok(outcome)
}

/// A test name as a literal in ctest's regular expressions.
fn regex_escaped(name: &str) -> String {
    name.chars().fold(String::new(), |mut escaped, c| {
        if "\\^$.|?*+()[]{}".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
        escaped
    })
}

/// The stock and ncfilters suites of one configuration under `emulator`: each of `registered`
/// tests runs, ncfilters fails nothing that stock's run fails only once, and a stock failure outside
/// `known` is reported (run once more: flaky if it then passes, stock's own if it fails again).
pub fn run_pair_under(
    emulator: &Emulator,
    jobs: usize,
    [stock, ncfilters]: [EmulatedSuite; 2],
    registered: usize,
    known: &[&str],
) -> Result {
    let limits = &emulator.limits;
    let emulated = emulator.name;
    let again_log = |suite: &EmulatedSuite| suite.log_file.with_extension("again.log");
    let mut outcomes = Vec::new();
    for suite in [&stock, &ncfilters] {
        log(format!("netcdf-c's ctest suite: {}, under {emulated}", suite.label));
        run_halves(suite.ctest, jobs, limits, &suite.log_file)?;
        let outcome = Outcome::read(&suite.log_file)?;
        println!(
            "netcdf-c {} under {emulated}: {} tests passed, {} failed",
            suite.label,
            outcome.passed,
            outcome.failed.len()
        );
        if outcome.total != registered {
            print_matching(&suite.log_file, &["***", "Errors"], 40);
            fail!(
                "{} ran {} of the suite's {registered} tests ({})",
                suite.label,
                outcome.total,
                suite.log_file.display()
            );
        }
        outcomes.push(outcome);
    }
    let (stock_outcome, ncfilters_outcome) = (&outcomes[0], &outcomes[1]);
    let unexpected: Vec<&String> = stock_outcome.failed.iter().filter(|name| !known.contains(&name.as_str())).collect();
    let stock_again = run_again(&stock, &unexpected, limits, &again_log(&stock))?;
    let baseline = stock_baseline(stock_outcome, &stock_again, known);
    for name in &baseline.flaky {
        println!("  reported, not counted: stock failed {name} under {emulated}, then passed when run again");
    }
    for name in baseline.failing.iter().filter(|name| !known.contains(&name.as_str())) {
        println!("  reported: stock fails {name} under {emulated}, again when run once more (not a known failure)");
    }
    for name in known.iter().filter(|name| !stock_outcome.failed.contains(**name)) {
        println!("  reported: stock passed {name} under {emulated}, a known failure");
    }
    let flaky_on_ncfilters: Vec<&String> = ncfilters_outcome.failed.intersection(&baseline.flaky).collect();
    let ncfilters_again = run_again(&ncfilters, &flaky_on_ncfilters, limits, &again_log(&ncfilters))?;
    let worse = failures_stock_passes(ncfilters_outcome, &ncfilters_again, &baseline);
    if !worse.is_empty() {
        print_matching(&ncfilters.log_file, &["Failed", "***"], 40);
        fail!(
            "{} fails {worse:?} under {emulated}, which stock passes ({})",
            ncfilters.label,
            ncfilters.log_file.display()
        );
    }
    let failing: Vec<&str> = baseline.failing.iter().map(String::as_str).collect();
    println!(
        "PASS under {emulated}: {} fails no test that stock passes (both fail: {})",
        ncfilters.label,
        if failing.is_empty() { "none".to_string() } else { failing.join(", ") }
    );
    Ok(())
}

/// The sum over ctest's summary lines ("100% tests passed, 0 tests failed out of 219") of the tests
/// that passed.
fn count_passed_tests(log: &str) -> usize {
    summaries(log).map(|(failed, total)| total - failed.min(total)).sum()
}

/// The sum over ctest's summary lines of the tests that failed.
fn count_failed_tests(log: &str) -> usize {
    summaries(log).map(|(failed, _)| failed).sum()
}

/// (passed, total) summed over ctest's summary lines, or `None` when the log has none.
pub fn ctest_counts(log: &str) -> Option<(usize, usize)> {
    let mut lines = summaries(log).peekable();
    lines.peek()?;
    Some(lines.fold((0, 0), |(passed, all), (failed, total)| (passed + total - failed.min(total), all + total)))
}

/// (failed, total) of each "N% tests passed, F tests failed out of T" line (CMake 4 says
/// "100% tests passed out of T" when none failed).
fn summaries(log: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    log.lines().filter(|line| line.contains("% tests passed") && line.contains(" out of ")).filter_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let failed = match words.iter().position(|w| *w == "failed") {
            Some(i) => words.get(i.checked_sub(2)?)?.parse().ok()?,
            None => 0,
        };
        Some((failed, words.last()?.parse().ok()?))
    })
}

/// The names ctest lists under "The following tests FAILED:" ("\t189 - name (Failed)").
pub fn failed_tests(log: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut in_list = false;
    for line in log.lines() {
        if line.starts_with("The following tests FAILED:") {
            in_list = true;
        } else if in_list {
            let Some((number, rest)) = line.trim_start().split_once(" - ") else {
                in_list = false;
                continue;
            };
            if number.trim().parse::<u32>().is_err() {
                in_list = false;
                continue;
            }
            names.extend(rest.split_whitespace().next());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmake_4_s_summary_without_failures_counts() {
        assert_eq!(
            count_passed_tests("100% tests passed out of 233\n100% tests passed, 0 tests failed out of 2\n"),
            235
        );
        assert_eq!(count_failed_tests("100% tests passed out of 233\n"), 0);
    }

    #[test]
    fn passed_tests_are_summed_over_both_ctest_runs() {
        let log = "100% tests passed, 0 tests failed out of 219\nnoise\n\
                   100% tests passed, 0 tests failed out of 2\n";
        assert_eq!((count_passed_tests(log), count_failed_tests(log)), (221, 0));
        let log = "98% tests passed, 3 tests failed out of 150\n";
        assert_eq!((count_passed_tests(log), count_failed_tests(log)), (147, 3));
    }

    #[test]
    fn dh_auto_test_counts_are_read_from_ctests_summary() {
        let log = "...\n98% tests passed, 4 tests failed out of 235\n\nTotal Test time (real) = 1.0 sec\n";
        assert_eq!(ctest_counts(log), Some((231, 235)));
        assert_eq!(ctest_counts("100% tests passed, 0 tests failed out of 7\n"), Some((7, 7)));
        assert!(ctest_counts("Ignoring test failures\n").is_none());
    }

    #[test]
    fn failed_tests_are_read_from_ctests_lists() {
        let log = "99% tests passed, 1 tests failed out of 236\n\nThe following tests FAILED:\n\
                   \t189 - h5_test_run_par_tests (Failed)\nErrors while running CTest\n\
                   The following tests FAILED:\n\t  7 - tst_a (Failed)\n\t 12 - tst_b (SEGFAULT)\n";
        assert_eq!(failed_tests(log), ["h5_test_run_par_tests", "tst_a", "tst_b"]);
        assert!(failed_tests("100% tests passed, 0 tests failed out of 3\n").is_empty());
    }

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    fn failing(list: &[&str]) -> Outcome {
        Outcome { failed: names(list), ..Outcome::default() }
    }

    #[test]
    fn a_stock_failure_that_passes_when_run_again_is_flaky_not_failing() {
        let baseline = stock_baseline(&failing(&["known", "flaky", "new"]), &failing(&["new"]), &["known", "other"]);
        assert_eq!(baseline, StockBaseline { failing: names(&["known", "new"]), flaky: names(&["flaky"]) });
    }

    #[test]
    fn ncfilters_may_fail_what_stock_fails_and_nothing_more() {
        let stock = StockBaseline { failing: names(&["both"]), flaky: names(&["flaky"]) };
        assert!(failures_stock_passes(&failing(&["both"]), &failing(&[]), &stock).is_empty());
        assert!(failures_stock_passes(&failing(&["flaky"]), &failing(&[]), &stock).is_empty());
        assert_eq!(failures_stock_passes(&failing(&["flaky"]), &failing(&["flaky"]), &stock), ["flaky"]);
        assert_eq!(failures_stock_passes(&failing(&["both", "mine"]), &failing(&[]), &stock), ["mine"]);
    }

    #[test]
    fn test_names_are_matched_literally() {
        assert_eq!(regex_escaped("nc_test4_tst_h5.x+y"), "nc_test4_tst_h5\\.x\\+y");
    }

    /// A CMake project of shell-script tests run as `stock` and `ncfilters` builds (the script
    /// sees `FLAVOUR`), each state file kept per build so that "once" means once per build.
    struct Project {
        dir: PathBuf,
    }

    impl Project {
        fn new(name: &str, tests: &[(&str, &str)]) -> Project {
            let dir = std::env::temp_dir().join(format!("ncfilters-ctest-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("state")).unwrap();
            let mut lists =
                String::from("cmake_minimum_required(VERSION 3.17)\nproject(suite NONE)\nenable_testing()\n");
            for (test, script) in tests {
                let path = dir.join(format!("{test}.sh"));
                std::fs::write(&path, format!("state=\"{}/state/$FLAVOUR-{test}\"\n{script}\n", dir.display()))
                    .unwrap();
                lists.push_str(&format!("add_test(NAME {test} COMMAND sh {})\n", path.display()));
            }
            std::fs::write(dir.join("CMakeLists.txt"), lists).unwrap();
            let configured = Command::new("cmake")
                .arg("-S")
                .arg(&dir)
                .arg("-B")
                .arg(dir.join("build"))
                .output()
                .expect("cmake is installed (`cargo xtask setup`)");
            assert!(configured.status.success(), "{}", String::from_utf8_lossy(&configured.stderr));
            Project { dir }
        }

        fn ctest(&self, flavour: &'static str) -> impl Fn(Vec<String>) -> Command + '_ {
            move |arguments| {
                let mut ctest = Command::new("ctest");
                ctest.arg("--test-dir").arg(self.dir.join("build")).args(arguments).env("FLAVOUR", flavour);
                ctest
            }
        }

        fn judge(&self, known: &[&str]) -> Result {
            let registered = std::fs::read_dir(&self.dir)
                .unwrap()
                .filter(|entry| entry.as_ref().unwrap().path().extension().is_some_and(|e| e == "sh"))
                .count();
            self.judge_registered(registered, known)
        }

        fn judge_registered(&self, registered: usize, known: &[&str]) -> Result {
            let (stock, ncfilters) = (self.ctest("stock"), self.ctest("ncfilters"));
            let suites = [("stock", &stock as &dyn Fn(Vec<String>) -> Command), ("ncfilters", &ncfilters)].map(
                |(flavour, ctest)| EmulatedSuite {
                    label: flavour.to_string(),
                    log_file: self.dir.join(format!("{flavour}.log")),
                    ctest,
                },
            );
            let limits = TestLimits { timeout_seconds: 2, rerun: Rerun::AfterTimeout };
            let emulator = Emulator { name: "a test emulator", limits };
            run_pair_under(&emulator, 2, suites, registered, known)
        }
    }

    impl Drop for Project {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// Sleeps past the timeout the first time it runs in a build, then passes.
    const TIMES_OUT_ONCE: &str = "if [ -e \"$state\" ]; then exit 0; fi; touch \"$state\"; sleep 10";
    /// [`TIMES_OUT_ONCE`] in the ncfilters build only: stock's pass gives it no second chance.
    const NCFILTERS_TIMES_OUT_ONCE: &str =
        "[ \"$FLAVOUR\" = stock ] && exit 0\nif [ -e \"$state\" ]; then exit 0; fi; touch \"$state\"; sleep 10";
    /// Fails the first time it runs in the stock build, then passes.
    const STOCK_FAILS_ONCE: &str =
        "if [ \"$FLAVOUR\" = stock ] && [ ! -e \"$state\" ]; then touch \"$state\"; exit 1; fi; exit 0";

    #[test]
    fn a_test_that_times_out_once_is_judged_by_its_second_run() {
        let project = Project::new(
            "once",
            &[
                ("times_out_once", TIMES_OUT_ONCE),
                ("ncfilters_times_out_once", NCFILTERS_TIMES_OUT_ONCE),
                ("stock_fails_once", STOCK_FAILS_ONCE),
                ("passes", "exit 0"),
            ],
        );
        project.judge(&[]).unwrap();
        let log = read_to_string(&project.dir.join("ncfilters.log")).unwrap();
        assert!(log.contains("***Timeout"), "the test timed out in its first run:\n{log}");
        assert!(project.dir.join("stock.again.log").is_file(), "stock's failure was run again");
    }

    #[test]
    fn what_fails_on_both_builds_each_time_is_stocks_own() {
        let project =
            Project::new("both", &[("always_times_out", "sleep 10"), ("always_fails", "exit 1"), ("passes", "exit 0")]);
        project.judge(&["always_fails"]).unwrap();
    }

    #[test]
    fn a_test_only_ncfilters_fails_fails_the_pair() {
        let project = Project::new(
            "worse",
            &[
                ("times_out_once", TIMES_OUT_ONCE),
                ("ncfilters_times_out", "[ \"$FLAVOUR\" = stock ] || sleep 10"),
                ("ncfilters_fails", "[ \"$FLAVOUR\" = stock ]"),
            ],
        );
        let Err(failure) = project.judge(&[]) else { panic!("ncfilters' failures passed") };
        assert!(failure.0.contains("[\"ncfilters_fails\", \"ncfilters_times_out\"]"), "{}", failure.0);
    }

    #[test]
    fn a_missing_test_fails_the_pair() {
        let project = Project::new("missing", &[("passes", "exit 0")]);
        let Err(failure) = project.judge_registered(2, &[]) else { panic!("a suite of 1 of 2 tests passed") };
        assert!(failure.0.contains("ran 1 of the suite's 2 tests"), "{}", failure.0);
    }
}
