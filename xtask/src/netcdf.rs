// SPDX-License-Identifier: BSD-3-Clause
//! The two netcdf-c builds (`build`) and netcdf-c's own test suite on them (`netcdf-suite`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use crate::ctest_suite::{check_ctest_log, run_halves, NATIVE};
use crate::harness::{fail, log, read_to_string, remove_dir_all_if_exists, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};
use crate::release::KnownFailure;
use crate::setup;
use crate::text::{print_file, print_matching, print_tail};

/// netcdf-c 4.9.x's NCZarr tests diff _Codecs against their literal text, so their suites run
/// with the legacy codec dialect (the build's default, numeric, is what zarr-python and 4.10 write):
/// the environment variable the release's `suite_dialect` goes into.
pub const SUITE_DIALECT_VARIABLE: &str = "NCFILTERS_CODEC_DIALECT";

/// A release's two serial builds: its C as shipped, and with ncfilters.
pub const FLAVOURS: [&str; 2] = ["stock", "ncfilters"];

/// The build trees whose whole suite passed in this process: a later step that needs the files
/// its tests leave behind (`valgrind`) need not run it again.
static SUITE_PASSED_IN: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Whether this process ran the suite on `build` and it passed.
pub fn suite_passed_in_this_run(build: &Path) -> bool {
    SUITE_PASSED_IN.lock().is_ok_and(|builds| builds.iter().any(|b| b == build))
}

pub fn build(h: &Harness) -> Result {
    setup::setup(h)?;
    build_netcdf(h, "stock")?;
    build_netcdf(h, "ncfilters")
}

/// A private, writable source copy (netcdf-c's configure deletes and rewrites files in its
/// source tree) and a Release build next to it.
pub fn build_netcdf(h: &Harness, flavour: &str) -> Result {
    let src = h.work.join(format!("src-{flavour}"));
    let build = h.build_dir(flavour);
    if !src.is_dir() {
        let mut copy = cmd("cp", ["-a"]);
        copy.arg(h.work.join(format!("netcdf-c-{}", h.version()))).arg(&src);
        run(&mut copy)?;
    }
    if !build.join("CMakeCache.txt").is_file() {
        configure(h, flavour, &src, &build)?;
    }
    log(format!("build netcdf-c ({flavour})"));
    let start = Instant::now();
    let log_file = h.work_file(&format!("build-{flavour}.log"));
    let mut make = cmd("cmake", ["--build"]);
    make.arg(&build).arg(format!("-j{}", h.jobs));
    if !succeeds_into_log(&mut make, &log_file, false)? {
        print_matching(&log_file, &["error", "undefined"], 40);
        fail!("build ({flavour}) failed");
    }
    println!("built {flavour} in {} s", start.elapsed().as_secs());
    Ok(())
}

/// The flavour of `offline`'s build from the release tarball.
pub const OFFLINE_FLAVOUR: &str = "offline";
/// The flavour of `bench-nccopy`'s third build, the distribution build.
pub const SYSTEM_LIBS_BENCH_FLAVOUR: &str = "ncfilters-system-libs";

/// The builds configured as docs/packaging.md tells distributions, with `-DNCFILTERS_SYSTEM_LIBS=ON`.
pub const SYSTEM_LIBS_FLAVOURS: [&str; 2] = [OFFLINE_FLAVOUR, SYSTEM_LIBS_BENCH_FLAVOUR];

/// A system library the distribution build calls instead of compiling its own: the prefix of
/// the functions a bundled copy would define, one it must leave undefined, and its soname.
struct SystemLibrary {
    prefix: &'static str,
    called: &'static str,
    soname: &'static str,
}

const SYSTEM_LIBRARIES: [SystemLibrary; 3] = [
    SystemLibrary { prefix: "ZSTD_", called: "ZSTD_compress2", soname: "libzstd.so.1" },
    SystemLibrary { prefix: "BZ2_", called: "BZ2_bzCompress", soname: "libbz2.so.1.0" },
    // zlib's functions have no prefix: adler32_combine is the one only ncfilters calls.
    SystemLibrary { prefix: "adler32_combine", called: "adler32_combine", soname: "libz.so.1" },
];

/// That a build of [`SYSTEM_LIBS_FLAVOURS`] calls the system's libraries: [`check_system_libs_of`].
pub fn check_system_libs(h: &Harness, flavour: &str) -> Result {
    check_system_libs_of(&h.lib_dir(flavour).join("libnetcdf.so"))
}

/// That the distribution build's `library` (a libnetcdf.so) calls the system's libzstd, libbz2 and
/// zlib: it defines none of their functions (the bundled libzstd defines about 280) and leaves them
/// to the libraries it needs (its NEEDED entries).
pub fn check_system_libs_of(library: &Path) -> Result {
    let listing = crate::process::output(&mut cmd("nm", [library]))?;
    let needed = crate::process::output(cmd("readelf", ["-d"]).arg(library))?;
    // (kind, name) of each symbol nm lists; a versioned one without its version
    // (`adler32_combine@ZLIB_1.2.2`), and an undefined one with kind "U".
    let symbols: Vec<(&str, &str)> = listing
        .lines()
        .filter_map(|line| match line.split_whitespace().collect::<Vec<_>>()[..] {
            [_, kind, name] | [kind, name] => Some((kind, name.split('@').next().unwrap_or(name))),
            _ => None,
        })
        .collect();
    let mut wrong = Vec::new();
    for system in &SYSTEM_LIBRARIES {
        let defined =
            symbols.iter().filter(|(kind, name)| matches!(*kind, "T" | "t") && name.starts_with(system.prefix)).count();
        let undefined = symbols.contains(&("U", system.called));
        let is_needed = needed.contains(system.soname);
        if defined > 0 || !undefined || !is_needed {
            wrong.push(format!(
                "{defined} {}* functions defined (none expected), {} {} undefined, {} {} needed",
                system.prefix,
                system.called,
                if undefined { "is" } else { "is not" },
                system.soname,
                if is_needed { "is" } else { "is not" }
            ));
        }
    }
    if !wrong.is_empty() {
        fail!("{} with -DNCFILTERS_SYSTEM_LIBS=ON: {}", library.display(), wrong.join("; "));
    }
    let sonames: Vec<&str> = SYSTEM_LIBRARIES.iter().map(|system| system.soname).collect();
    println!("{}: the system's libraries (none compiled in; needs {})", library.display(), sonames.join(", "));
    Ok(())
}

/// The MPI-parallel flavours, `stock-parallel` and `ncfilters-parallel`.
pub fn is_parallel(flavour: &str) -> bool {
    flavour.ends_with("-parallel")
}

fn configure(h: &Harness, flavour: &str, src: &Path, build: &Path) -> Result {
    log(format!("configure netcdf-c ({flavour})"));
    let mut configure = cmd("cmake", ["-S"]);
    configure.arg(src).arg("-B").arg(build);
    let mut cargo_target = h.cargo_target();
    if flavour == "install" {
        configure.args(crate::build_flags::install_tree_flags(h));
    } else if is_parallel(flavour) {
        configure.args(crate::build_flags::parallel_flags(h)).env("CC", "mpicc");
        // Its own target directory: libncfilters of a parallel build mirrors other layouts.
        cargo_target = cargo_target.join("parallel");
    } else if let Some(configuration) = crate::configurations::configuration_of(flavour) {
        configure.args(configuration.flags(h.release)).args(configuration.hdf5_flags(h));
    } else {
        configure.args(h.release.flags);
    }
    if SYSTEM_LIBS_FLAVOURS.contains(&flavour) {
        configure.arg("-DNCFILTERS_SYSTEM_LIBS=ON");
        // Its own target directory: the crates built against the system's libraries.
        cargo_target = cargo_target.join("system-libs");
    }
    if !flavour.starts_with("stock") {
        configure.args(ncfilters_module_flags(h, &cargo_target));
        if let Some(like) = h.release.built_like {
            configure.arg(format!("-DNCFILTERS_NETCDF_LIKE={like}"));
        }
    }
    let log_file = h.work_file(&format!("configure-{flavour}.log"));
    if !succeeds_into_log(&mut configure, &log_file, false)? {
        print_tail(&log_file, 40);
        fail!("configure ({flavour}) failed");
    }
    Ok(())
}

/// The flags that load ncfilters into a netcdf-c configure, its cargo builds in `cargo_target`.
pub fn ncfilters_module_flags(h: &Harness, cargo_target: &Path) -> [String; 2] {
    [
        format!("-DCMAKE_PROJECT_INCLUDE={}", h.repo.join("cmake/ncfilters.cmake").display()),
        format!("-DNCFILTERS_CARGO_TARGET_DIR={}", cargo_target.display()),
    ]
}

/// Configures `src` with the module (the release's flags, its cargo target) into `build`, which
/// must fail saying `must_say`: returns the line that says it. `label` names the log,
/// `configure-<label>.log`; `build` is removed afterwards.
pub fn configure_must_stop(h: &Harness, src: &Path, label: &str, must_say: &str, extra: &[&str]) -> Result<String> {
    let build = h.build_dir(label);
    remove_dir_all_if_exists(&build)?;
    let mut configure = cmd("cmake", ["-S"]);
    configure.arg(src).arg("-B").arg(&build).args(h.release.flags).args(ncfilters_module_flags(h, &h.cargo_target()));
    configure.args(extra);
    let log_file = h.work_file(&format!("configure-{label}.log"));
    if succeeds_into_log(&mut configure, &log_file, false)? {
        fail!("configure ({label}) succeeded; it must stop saying {must_say:?}");
    }
    let said = read_to_string(&log_file)?.lines().find(|line| line.contains(must_say)).map(str::trim).map(String::from);
    let Some(line) = said else {
        print_tail(&log_file, 30);
        fail!("configure ({label}) failed, but without saying {must_say:?}");
    };
    remove_dir_all_if_exists(&build)?;
    Ok(line)
}

/// netcdf-c's whole suite in the `flavour` build, the plugin-moving tests serially, output in
/// `ctest-<flavour>.log`; the release's expected number of tests must pass, and none fail.
pub fn run_netcdf_ctest(h: &Harness, flavour: &str) -> Result {
    run_netcdf_ctest_expecting(h, flavour, h.release.ctest_expected, &[]).map(|_| ())
}

/// [`run_netcdf_ctest`] expecting `expected` tests to pass and exactly the tests `failing` (known
/// to fail on the stock build too) to fail; returns how many passed. Prints the summary line
/// `netcdf-c <version> <flavour>: N tests passed, M failed` ("-parallel" as " parallel"; a
/// configuration's builds as [`crate::configurations::describe`] names them).
pub fn run_netcdf_ctest_expecting(h: &Harness, flavour: &str, expected: usize, failing: &[&str]) -> Result<usize> {
    let build = &h.build_dir(flavour);
    let log_file = &h.work_file(&format!("ctest-{flavour}.log"));
    let succeeded = run_halves(&|arguments| with_args(ctest(h, build), arguments), h.jobs, &NATIVE, log_file)?;
    let passed = check_ctest_log(log_file, &crate::configurations::describe(h, flavour), succeeded, expected, failing)?;
    if let Ok(mut builds) = SUITE_PASSED_IN.lock() {
        builds.push(build.clone());
    }
    Ok(passed)
}

/// netcdf-c's suite on a stock and an ncfilters build of one configuration: stock passes
/// `expected` less the known failures ncfilters fixes and fails all `failures`; ncfilters passes
/// `expected` and fails only the failures outside its code.
pub fn run_suite_pair(h: &Harness, stock: &str, ncfilters: &str, expected: usize, failures: &[KnownFailure]) -> Result {
    let fixed_by_ncfilters = failures.iter().filter(|failure| !failure.on_ncfilters).count();
    for failure in failures {
        let on = if failure.on_ncfilters { "both builds" } else { "the stock build only" };
        println!("  expected to fail on {on}: {} ({})", failure.test, failure.why);
    }
    for (flavour, is_stock) in [(stock, true), (ncfilters, false)] {
        log(format!("netcdf-c's ctest suite on the {flavour} build"));
        let failing: Vec<&str> =
            failures.iter().filter(|failure| is_stock || failure.on_ncfilters).map(|failure| failure.test).collect();
        let expected = if is_stock { expected - fixed_by_ncfilters } else { expected };
        run_netcdf_ctest_expecting(h, flavour, expected, &failing)?;
    }
    Ok(())
}

/// `command` with `arguments` added.
fn with_args(mut command: Command, arguments: Vec<String>) -> Command {
    command.args(arguments);
    command
}

/// ctest in `build`, with the release's suite codec dialect (and OpenMPI's settings, for the
/// parallel builds).
pub fn ctest(h: &Harness, build: &Path) -> Command {
    let mut ctest = Command::new("ctest");
    ctest.current_dir(build).env(SUITE_DIALECT_VARIABLE, h.release.suite_dialect).envs(crate::build_flags::MPI_ENV);
    ctest
}

pub fn test_netcdf_suite(h: &Harness) -> Result {
    for flavour in FLAVOURS {
        log(format!("netcdf-c {}'s ctest suite on the {flavour} build", h.version()));
        run_netcdf_ctest(h, flavour)?;
    }
    let build = h.ncfilters_build();

    let plugins = build.join("plugins");
    log(format!("filter programs CMake builds but never runs (HDF5_PLUGIN_PATH={})", plugins.display()));
    for program in h.release.unrun_filter_programs {
        run_filter_program(h, &build, program)?;
        println!("PASS {program}");
    }

    log("tst_specific_filters.sh with HDF5_PLUGIN_PATH (bzip2, zstd and blosc must not be skipped)");
    let log_file = h.work_file("specific-filters.log");
    let mut specific = ctest(h, &build);
    specific.env("HDF5_PLUGIN_PATH", &plugins).args(["-V", "-R", "^nc_test4_tst_specific_filters$"]);
    if !succeeds_into_log(&mut specific, &log_file, false)? {
        print_tail(&log_file, 40);
        fail!("tst_specific_filters failed");
    }
    let text = crate::harness::read_to_string(&log_file)?;
    if text.contains("not available") {
        print_matching(&log_file, &["not available"], usize::MAX);
        fail!("tst_specific_filters skipped filters");
    }
    println!("PASS tst_specific_filters.sh (deflate, szip, bzip2, blosc, zstd)");

    for script in h.release.unregistered_scripts {
        log(format!("{script}, a filter test the release no longer registers (run alone)"));
        run_unregistered_script(h, &build, script)?;
        println!("PASS {script}");
    }
    Ok(())
}

/// A test script the release keeps but no longer registers with ctest, run as its `add_sh_test`
/// would run it (`srcdir`, `TOPSRCDIR`, from the build's copy of the script).
fn run_unregistered_script(h: &Harness, build: &Path, script: &str) -> Result {
    let copy = build.join(script);
    if !copy.is_file() {
        fail!("{} is missing (netcdf-c {} should have written it at configure)", copy.display(), h.version());
    }
    let dir = copy.parent().expect("a script path has a directory");
    let source = h.work.join("src-ncfilters");
    let source_dir = source.join(script).parent().expect("a script path has a directory").to_path_buf();
    let name = script.rsplit('/').next().unwrap_or(script);
    let log_file = h.work_file(&format!("{name}.log"));
    let mut command = Command::new("bash");
    command
        .arg(&copy)
        .current_dir(dir)
        .env("srcdir", &source_dir)
        .env("TOPSRCDIR", &source)
        .env(SUITE_DIALECT_VARIABLE, h.release.suite_dialect);
    if !succeeds_into_log(&mut command, &log_file, false)? {
        print_tail(&log_file, 40);
        fail!("{script} failed");
    }
    Ok(())
}

fn run_filter_program(h: &Harness, build: &Path, program: &str) -> Result {
    let path = build.join(program);
    let name = program.rsplit('/').next().unwrap_or(program);
    let log_file = h.work_file(&format!("{name}.log"));
    let mut command = Command::new(format!("./{name}"));
    command
        .current_dir(path.parent().expect("program path has a directory"))
        .env(SUITE_DIALECT_VARIABLE, h.release.suite_dialect)
        .env("HDF5_PLUGIN_PATH", build.join("plugins"));
    if !succeeds_into_log(&mut command, &log_file, false)? {
        print_file(&log_file);
        fail!("{program} failed");
    }
    Ok(())
}
