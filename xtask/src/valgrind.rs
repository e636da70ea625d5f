// SPDX-License-Identifier: BSD-3-Clause
//! `valgrind`: the ctest tests that reach filter code (`VALGRIND_TESTS` below) under memcheck, every
//! netcdf-c program their scripts start traced, on the stock and the ncfilters builds; then the
//! damaged-chunk reads of tests/interop/test_damaged_chunks.py under memcheck, ncfilters build.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::harness::{fail, log, read_to_string, remove_dir_all_if_exists, Failure, Harness, Result};
use crate::interop::interop_pytest;
use crate::leaks::{leaks_allocated_by_ncfilters, DEFINITE_LEAK};
use crate::netcdf::{ctest, run_netcdf_ctest, suite_passed_in_this_run, FLAVOURS};
use crate::process::{output, succeeds_into_log};
use crate::text::{concatenate, count_matching_lines, glob, print_tail};

/// ncdump_tst_ncgen4 runs ncgen and ncdump on every reference CDL file: over 15 minutes per
/// build under memcheck with child tracing, so it joins only with NCFILTERS_VALGRIND_FULL=1.
/// The release's own filter tests are added to these (`Release::valgrind_tests`).
pub(crate) const VALGRIND_TESTS: [&str; 23] = [
    "ncdump_tst_netcdf4",
    "ncdump_tst_nccopy5",
    "ncdump_tst_fileinfo",
    "ncdump_tst_netcdf4_4",
    "ncdump_tst_nccopy4",
    "ncdump_test_unicode_path",
    "ncdump_test_scope",
    "nc_test_tst_formats",
    "nc_test4_tst_filter",
    "nc_test4_tst_specific_filters",
    "nc_test4_tst_szip",
    "nc_test4_tst_vars",
    "nc_test4_tst_vars2",
    "nc_test4_tst_vars3",
    "nc_test4_tst_vars4",
    "nc_test4_tst_chunks",
    "nc_test4_tst_interops5",
    "nczarr_test_run_interop",
    "nczarr_test_run_nczarr_fill",
    "nczarr_test_run_quantize",
    "nczarr_test_run_nczfilter",
    "nczarr_test_run_filter",
    "nczarr_test_run_specific_filters",
];
const VALGRIND_FULL_ONLY: &str = "ncdump_tst_ncgen4";

/// Shell utilities the test scripts call; not worth tracing.
const VALGRIND_SKIP: &str = "*/diff,*/sed,*/cat,*/grep,*/rm,*/cmp,*/mv,*/cp,*/ls,*/mkdir,*/tr,\
*/sort,*/head,*/tail,*/awk,*/mawk,*/find,*/touch,*/dirname,*/basename,*/wc,*/cut,*/uname,*/od,\
*/tee,*/xargs,*/env,*/expr,*/rmdir,*/chmod,*/pwd,*/cmake,*/uniq";

const INVALID_ACCESS: [&str; 4] = ["Invalid read", "Invalid write", "Invalid free", "Mismatched free"];

/// memcheck's reports of a decision or a system call made on bytes never written.
const UNINITIALISED_USE: [&str; 3] =
    ["depends on uninitialised value", "Use of uninitialised value", "points to uninitialised byte"];

fn valgrind_tests(h: &Harness) -> Vec<&'static str> {
    let mut tests = VALGRIND_TESTS.to_vec();
    tests.extend(h.release.valgrind_tests);
    if std::env::var("NCFILTERS_VALGRIND_FULL").as_deref() == Ok("1") {
        tests.push(VALGRIND_FULL_ONLY);
    }
    tests
}

/// A ctest regular expression matching exactly these test names.
fn exact_names_regex(tests: &[&str]) -> String {
    format!("^({})$", tests.join("|"))
}

/// The ncdump tests share one working directory and read each other's files (tst_nccopy4
/// copies every *.nc there while tst_netcdf4 rewrites them), and the *_unknown tests move a
/// shared plugin; slowed by memcheck they race, so they run one at a time, the rest in parallel.
fn must_run_serially(test: &str) -> bool {
    test.starts_with("ncdump_")
        || test == "tst_create_files"
        || test == "tst_special_atts"
        || test.ends_with("_unknown")
}

pub fn test_valgrind(h: &Harness) -> Result {
    let tests = valgrind_tests(h);
    log(format!(
        "valgrind: the {} filter-reaching ctest tests of netcdf-c {}, stock and ncfilters builds",
        tests.len(),
        h.version()
    ));
    let start = Instant::now();
    for flavour in FLAVOURS {
        let build = h.build_dir(flavour);
        check_tests_exist(h, &build, &tests)?;
        // Some tests read files other tests write (tst_nccopy4 needs tst_fillbug.nc).
        if !suite_passed_in_this_run(&build) {
            run_netcdf_ctest(h, flavour)?;
        }
    }
    memcheck_both_builds(h, &tests)?;
    let stock = concatenate(&glob(&logs_dir(h, "stock"), "vg.", ".log"))?;
    let ncf = no_invalid_access_or_leak_of_ours(
        "valgrind (ncfilters build)",
        &glob(&logs_dir(h, "ncfilters"), "vg.", ".log"),
    )?;
    let n_ncf = count_matching_lines(&ncf, &[DEFINITE_LEAK]);
    let n_stock = count_matching_lines(&stock, &[DEFINITE_LEAK]);
    if n_ncf > n_stock {
        fail!("valgrind: more definite leaks with ncfilters ({n_ncf}) than stock ({n_stock})");
    }
    let traced = std::fs::read_dir(logs_dir(h, "ncfilters")).map_or(0, |d| d.count());
    println!(
        "PASS valgrind: {traced} netcdf-c processes traced; 0 invalid accesses; definite leak records: \
         ncfilters {n_ncf}, stock {n_stock} ({} invalid accesses in stock), none from ncfilters code; {} s",
        count_matching_lines(&stock, &INVALID_ACCESS[..3]),
        start.elapsed().as_secs()
    );
    damaged_chunks_under_memcheck(h)
}

/// test_damaged_chunks.py on the ncfilters build with every read of a damaged file under memcheck:
/// no crash or hang (pytest), no invalid access and no definite leak from ncfilters code, and no
/// use of uninitialised bytes where ncfilters' filter decoded the chunk (`vg.ncfilters.*`; in
/// `vg.hdf5.*` HDF5's own filter did, and its uses are counted only).
fn damaged_chunks_under_memcheck(h: &Harness) -> Result {
    log("valgrind: ncdump and nccopy of damaged chunks (test_damaged_chunks.py) under memcheck, ncfilters build");
    let start = Instant::now();
    let logs = h.work.join("valgrind-damaged-chunks");
    remove_dir_all_if_exists(&logs)?;
    crate::harness::create_dir_all(&logs)?;
    let pytest_log = h.work_file("valgrind-damaged-chunks.log");
    let mut pytest = interop_pytest(h, "test_damaged_chunks.py")?;
    pytest.env("NCFILTERS_DAMAGE_MEMCHECK", &logs);
    if !succeeds_into_log(&mut pytest, &pytest_log, false)? {
        print_tail(&pytest_log, 40);
        fail!("damaged chunks under memcheck: the test failed");
    }
    let ours = glob(&logs, "vg.ncfilters.", ".log");
    let hdf5s = glob(&logs, "vg.hdf5.", ".log");
    let all =
        no_invalid_access_or_leak_of_ours("damaged chunks under memcheck", &[ours.clone(), hdf5s.clone()].concat())?;
    let uninitialised = count_matching_lines(&concatenate(&ours)?, &UNINITIALISED_USE);
    if uninitialised > 0 {
        fail!("damaged chunks under memcheck: {uninitialised} uses of uninitialised bytes after ncfilters' filters");
    }
    println!(
        "PASS valgrind, damaged chunks: {} reads traced ({} through ncfilters' filters); 0 invalid accesses; \
         {} definite leak records, none from ncfilters code; uses of uninitialised bytes: 0 after ncfilters' \
         filters, {} after HDF5's own; {} s",
        ours.len() + hdf5s.len(),
        ours.len(),
        count_matching_lines(&all, &[DEFINITE_LEAK]),
        count_matching_lines(&concatenate(&hdf5s)?, &UNINITIALISED_USE),
        start.elapsed().as_secs()
    );
    Ok(())
}

/// The memcheck logs' text, once none shows an invalid access or a definite leak allocated by
/// ncfilters code (`what` names them in the failure); a few offending files or records are printed.
fn no_invalid_access_or_leak_of_ours(what: &str, logs: &[PathBuf]) -> Result<String> {
    let text = concatenate(logs)?;
    let invalid = count_matching_lines(&text, &INVALID_ACCESS);
    if invalid > 0 {
        for log in files_with_invalid_access(logs).iter().take(3) {
            println!("{}", log.display());
        }
        fail!("{what}: {invalid} invalid accesses");
    }
    let ours = leaks_allocated_by_ncfilters(&text).join("\n");
    if !ours.is_empty() {
        for line in ours.lines().take(40) {
            println!("{line}");
        }
        fail!("{what}: definite leaks allocated by ncfilters");
    }
    Ok(text)
}

fn files_with_invalid_access(logs: &[PathBuf]) -> Vec<PathBuf> {
    logs.iter()
        .filter(|log| read_to_string(log).is_ok_and(|text| count_matching_lines(&text, &INVALID_ACCESS[..3]) > 0))
        .cloned()
        .collect()
}

/// Where a build's valgrind logs go, one per process.
fn logs_dir(h: &Harness, flavour: &str) -> PathBuf {
    h.work.join(format!("valgrind-{flavour}"))
}

/// The tests under memcheck in both builds. The builds are separate trees, so with two cores or
/// more they run side by side, each on half of them: a build's serial group runs on one core for
/// 10 to 12 minutes, which would otherwise leave the other idle.
fn memcheck_both_builds(h: &Harness, tests: &[&str]) -> Result {
    if h.jobs < 2 {
        return FLAVOURS.iter().try_for_each(|flavour| valgrind_suite(h, flavour, tests, h.jobs));
    }
    let jobs = h.jobs / 2;
    let results: Vec<Result> = std::thread::scope(|scope| {
        let runs: Vec<_> =
            FLAVOURS.iter().map(|flavour| scope.spawn(move || valgrind_suite(h, flavour, tests, jobs))).collect();
        runs.into_iter()
            .map(|run| run.join().unwrap_or_else(|_| Err(Failure("valgrind: a memcheck run panicked".into()))))
            .collect()
    });
    results.into_iter().collect()
}

/// The tests under memcheck in one build, the racing ones one at a time and the others on `jobs`
/// cores, one log per process in [`logs_dir`].
fn valgrind_suite(h: &Harness, flavour: &str, tests: &[&str], jobs: usize) -> Result {
    let build = h.build_dir(flavour);
    let logs = logs_dir(h, flavour);
    let (serial, parallel): (Vec<&str>, Vec<&str>) = tests.iter().partition(|t| must_run_serially(t));
    remove_dir_all_if_exists(&logs)?;
    crate::harness::create_dir_all(&logs)?;
    let ctest_log = h.work_file(&format!("valgrind-{flavour}.ctest.log"));
    crate::harness::write_file(&ctest_log, "")?;
    log(format!(
        "memcheck on the {flavour} build: {} tests one at a time, then {} with {jobs} at a time",
        serial.len(),
        parallel.len()
    ));
    memcheck_group(h, &build, &logs, &ctest_log, 1, flavour, &serial)?;
    memcheck_group(h, &build, &logs, &ctest_log, jobs, flavour, &parallel)?;
    keep_only_netcdf_program_logs(&build, &logs)
}

fn check_tests_exist(h: &Harness, build: &Path, tests: &[&str]) -> Result {
    let mut list = ctest(h, build);
    list.args(["-N", "-R", &exact_names_regex(tests)]);
    let listed = output(&mut list)?;
    let total =
        listed.lines().find_map(|line| line.strip_prefix("Total Tests: ")).and_then(|n| n.trim().parse::<usize>().ok());
    if total != Some(tests.len()) {
        fail!("not all {} valgrind tests exist in {}", tests.len(), build.display());
    }
    Ok(())
}

/// ctest memcheck on exactly these tests.
fn memcheck_group(
    h: &Harness,
    build: &Path,
    logs: &Path,
    ctest_log: &Path,
    jobs: usize,
    flavour: &str,
    tests: &[&str],
) -> Result {
    let options = format!(
        "MemoryCheckCommandOptions=--trace-children=yes --trace-children-skip={VALGRIND_SKIP} \
         --leak-check=full --num-callers=30 --log-file={}/vg.%p.log",
        logs.display()
    );
    let mut memcheck = ctest(h, build);
    memcheck.args(["-T", "memcheck"]).arg(format!("-j{jobs}")).args([
        "-R",
        &exact_names_regex(tests),
        "--overwrite",
        &options,
    ]);
    if !succeeds_into_log(&mut memcheck, ctest_log, true)? {
        print_tail(ctest_log, 30);
        fail!("tests failed under valgrind ({flavour})");
    }
    Ok(())
}

/// Keeps only the logs of netcdf-c's own programs (the test scripts' bash processes are traced
/// too).
fn keep_only_netcdf_program_logs(build: &Path, logs: &Path) -> Result {
    for log in glob(logs, "vg.", ".log") {
        if !is_netcdf_program_log(&read_to_string(&log)?, build) {
            std::fs::remove_file(&log).map_err(|e| Failure(format!("cannot remove {}: {e}", log.display())))?;
        }
    }
    Ok(())
}

/// Whether a valgrind log's command is a program of the build, and not one of its scripts.
fn is_netcdf_program_log(log: &str, build: &Path) -> bool {
    let command_prefix = format!("Command: {}/", build.display());
    let commands: Vec<&str> = log
        .lines()
        .filter_map(|line| {
            let at = line.find(&command_prefix)?;
            Some(&line[at + command_prefix.len()..])
        })
        .collect();
    !commands.is_empty() && !commands.iter().any(|rest| rest.contains(".sh"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_tests_are_the_racing_ones() {
        let (serial, _): (Vec<&str>, Vec<&str>) = VALGRIND_TESTS.iter().partition(|t| must_run_serially(t));
        assert_eq!(serial.len(), 7);
        let first = crate::release::RELEASES[0].valgrind_tests;
        assert!(first.contains(&"nczarr_test_run_unknown") && must_run_serially("nczarr_test_run_unknown"));
    }

    #[test]
    fn only_logs_of_the_build_s_programs_are_kept() {
        let build = Path::new("/w/build-ncfilters");
        let log = |command: &str| format!("==5== Memcheck\n==5== Command: {command}\n==5== \n");
        assert!(is_netcdf_program_log(&log("/w/build-ncfilters/ncdump/ncdump -hs x.nc"), build));
        assert!(!is_netcdf_program_log(&log("/bin/bash ./run_filter.sh"), build));
        assert!(!is_netcdf_program_log(&log("/w/build-ncfilters/nczarr_test/run_filter.sh"), build));
    }

    #[test]
    fn memcheck_logs_fail_on_an_invalid_access_and_pass_clean() {
        let dir = std::env::temp_dir().join(format!("ncfilters-memcheck-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let clean = dir.join("vg.1.log");
        let bad = dir.join("vg.2.log");
        std::fs::write(&clean, "==1== Memcheck\n==1== ERROR SUMMARY: 0 errors\n").unwrap();
        std::fs::write(&bad, "==2== Invalid read of size 4\n").unwrap();
        assert!(no_invalid_access_or_leak_of_ours("t", std::slice::from_ref(&clean)).is_ok());
        let failure = no_invalid_access_or_leak_of_ours("t", &[clean, bad]).unwrap_err();
        assert_eq!(failure.0, "t: 1 invalid accesses");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn regex_anchors_every_name() {
        assert_eq!(exact_names_regex(&["a", "b"]), "^(a|b)$");
    }
}
