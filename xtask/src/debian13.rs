// SPDX-License-Identifier: BSD-3-Clause
//! `debian13`: netcdf-c 4.9.3 as Debian 13 builds it, inside a Debian 13 root (`debian_root`, with
//! Debian's build dependencies, HDF5 1.14.5, NCO and CDO; cached in `<cache>/debian13-root`). Stock and ncfilters
//! are built with Debian's flags (the matrix's `debian13` configuration) against Debian's HDF5, the
//! suite runs on both, then Debian 13's own programs run on Debian's `libnetcdf22` and on
//! ncfilters' with no `HDF5_PLUGIN_PATH` (NCO and CDO: tests/debian13/clients.sh; netCDF4-python
//! 1.7.2's own test suite, from its sdist on PyPI). The Rust toolchain is the
//! host's, bind-mounted in a mount namespace that ends with each command.
//!
//! `debian13-i386`: the same two builds and suite in a Debian 13 i386 root (32-bit, run natively
//! under `linux32`, cached in `<cache>/debian13-i386-root`), the module from the release tarball
//! and the root's own cargo and rustc 1.85, as Debian's i386 buildd would build it.
//!
//! `debian13-arm64`: the same two builds cross-built for arm64 in a Debian 13 root (Debian's cross
//! compilers and arm64 libraries, the host's Rust with its aarch64 target, cached in
//! `<cache>/debian13-arm64-cross-root`), and the suite run with arm64's programs under qemu-user.

use std::path::Path;

use crate::configurations::Configuration;
use crate::ctest_suite::{check_ctest_log, run_halves, run_pair_under, EmulatedSuite, NATIVE, QEMU_USER};
use crate::debian_root::{inside, step, ClientCases, PytestOutcome, Suite, REPO_INSIDE, WORK_INSIDE};
use crate::harness::{self, fail, log, read_to_string, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};
use crate::release::KnownFailure;
use crate::text::print_tail;

/// The tools a root needs to build netcdf-c as Debian 13 does, natively.
const BUILD_TOOLS: [&str; 11] = [
    // Debian's own Rust (1.85), which builds the release tarball's crates (`debian_cargo_builds_the_tarball`).
    "cargo",
    "rustc",
    "xz-utils",
    "cmake",
    "make",
    "gcc",
    "g++",
    "m4",
    "pkg-config",
    "file",
    // Tests unpack zipped NCZarr stores.
    "unzip",
];

/// The libraries netcdf-c builds against, as Debian 13's package does.
const LIBRARIES: [&str; 7] =
    ["libhdf5-dev", "libcurl4-openssl-dev", "libxml2-dev", "libzstd-dev", "libbz2-dev", "libaec-dev", "zlib1g-dev"];

/// What a root needs to build netcdf-c natively.
fn build_packages() -> Vec<&'static str> {
    [BUILD_TOOLS.as_slice(), LIBRARIES.as_slice()].concat()
}

/// What the root adds for the build from Debian's crates: the crates, `patch` for
/// packaging/debian-crates.patch, and libblosc1, which the blosc filter's tests load.
fn debian_crates_packages() -> Vec<&'static str> {
    [crate::debian_crates::SHIPPED.as_slice(), &crate::debian_crates::TESTS, &["libblosc1", "patch"]].concat()
}

/// The programs whose use of libnetcdf is checked, in the root of the machine's architecture.
const CLIENT_PACKAGES: [&str; 6] = [
    "netcdf-bin",
    "nco",
    "cdo",
    "python3-netcdf4",
    "python3-pytest",
    // netCDF's headers, which pip's metadata step of the netCDF4-python sdist looks for (netcdf-c's
    // own builds include their source tree's headers first).
    "libnetcdf-dev",
];

/// The netCDF4-python whose sdist's test suite runs against Debian's python3-netcdf4 (the same
/// version) on each library.
const NETCDF4_PYTHON_VERSION: &str = "1.7.2";

/// The Debian 13 configuration of the matrix, whose flags the two builds use.
const CONFIGURATION: &str = "debian13";

/// The roots' names in the cache.
const ROOT: &str = "debian13-root";
const I386_ROOT: &str = "debian13-i386-root";

/// The test stock 4.9.3 fails on i386 with Debian 13's flags, and so ncfilters too: its expected
/// output is x86_64's.
const I386_STOCK_FAILURES: [KnownFailure; 1] = [KnownFailure {
    test: "ncdump_tst_netcdf4_4",
    on_ncfilters: true,
    why: "ref_tst_compounds4.nc's var5 is shuffled; HDF5 sets the shuffle's parameter, the element size, from \
          the compound type as the machine lays it out: 36 bytes on i386 (doubles 4-byte aligned), where the \
          expected CDL has x86_64's 40 (`_Filter = \"3|2,40|1,2\"`)",
}];

/// The cross build's architecture, and its root's name in the cache.
const ARM64: &str = "arm64";
const ARM64_ROOT: &str = "debian13-arm64-cross-root";

/// The tools the arm64 cross build needs, of the machine's architecture: its own compiler too,
/// with which cargo links build scripts (the cross compilers come with `crossbuild-essential-arm64`).
const CROSS_BUILD_TOOLS: [&str; 8] =
    ["build-essential", "cmake", "make", "m4", "pkg-config", "file", "unzip", "xz-utils"];

/// The tests stock 4.9.3 fails as an arm64 cross build under qemu-user, and so ncfilters too.
const ARM64_STOCK_FAILURES: [KnownFailure; 0] = [];

/// How many tests both builds pass on arm64: the 218 the suite registers, less [`ARM64_STOCK_FAILURES`].
const ARM64_EXPECTED: usize = 218;

/// How many tests both builds pass on i386: the 217 the suite registers, less [`I386_STOCK_FAILURES`].
const I386_EXPECTED: usize = 216;

fn debian13_configuration() -> &'static Configuration {
    crate::configurations::CONFIGURATIONS
        .iter()
        .find(|configuration| configuration.name == CONFIGURATION)
        .expect("the matrix has Debian 13's configuration")
}

pub fn test_debian13(h: &Harness) -> Result {
    let configuration = debian13_configuration();
    let h = h.for_release(configuration.release());
    crate::setup::setup(&h)?;
    let packages = [build_packages(), debian_crates_packages(), CLIENT_PACKAGES.to_vec()].concat();
    let root = crate::debian_root::ensure(&h, ROOT, Suite::native("trixie"), &packages)?;
    let tarball = crate::dist::make_tarball(&h)?;
    let _ = debian_cargo_builds_the_tarball(&h, &root, &tarball)?;
    let (tree, cargo_home) = debian_crates_build(&h, &root, &tarball)?;
    // The distribution build, as Debian's package would configure it: Debian's cargo and crates.
    let module = [
        format!("-DCMAKE_PROJECT_INCLUDE={tree}/cmake/ncfilters.cmake"),
        "-DNCFILTERS_SYSTEM_LIBS=ON".to_string(),
        "-DNCFILTERS_CARGO=/usr/bin/cargo".to_string(),
        format!("-DNCFILTERS_CARGO_HOME={cargo_home}"),
        format!("-DNCFILTERS_CARGO_TARGET_DIR={WORK_INSIDE}/cargo-debian-crates"),
    ];
    build_both(&h, &root, configuration, &[], &module)?;
    let build = root.join(WORK_INSIDE.trim_start_matches('/')).join("build-ncfilters");
    crate::netcdf::check_system_libs_of(&h.lib_dir_in(&build).join("libnetcdf.so"))?;
    suite_on_both(&h, &root, "Debian 13 flags, Debian's crates", configuration.ctest_expected, &[])?;
    clients(&h, &root)?;
    netcdf4_python_suite(&h, &root)
}

/// 4.9.3 with Debian 13's flags in a Debian 13 i386 root (32-bit), stock and with the module of
/// the release tarball built by the root's own cargo: the configure-time layout check meets a
/// 32-bit `size_t`, and ncfilters must fail exactly the tests stock fails there.
pub fn test_debian13_i386(h: &Harness) -> Result {
    let configuration = debian13_configuration();
    let h = h.for_release(configuration.release());
    crate::setup::setup(&h)?;
    let suite = Suite { name: "trixie", foreign_arch: Some("i386") };
    let root = crate::debian_root::ensure(&h, I386_ROOT, suite, &build_packages())?;
    let tree = debian_cargo_builds_the_tarball(&h, &root, &crate::dist::make_tarball(&h)?)?;
    build_both(&h, &root, configuration, &[], &[format!("-DCMAKE_PROJECT_INCLUDE={tree}/cmake/ncfilters.cmake")])?;
    suite_on_both(&h, &root, "Debian 13 flags, i386", I386_EXPECTED, &I386_STOCK_FAILURES)
}

/// 4.9.3 with Debian 13's flags cross-built for arm64 in a Debian 13 root, as `dpkg-buildpackage
/// -a arm64` would (crossbuild-essential-arm64, Debian's arm64 HDF5 and libraries through
/// multiarch), stock and with the module (cargo's `--target` from the cross compiler), then the
/// suite run with the kernel running arm64 programs under qemu-user (binfmt_misc): the layout check
/// meets aarch64, and ncfilters must fail exactly what stock fails there.
pub fn test_debian13_arm64(h: &Harness) -> Result {
    let configuration = debian13_configuration();
    let h = h.for_release(configuration.release());
    crate::setup::setup(&h)?;
    let target = crate::cross::target(ARM64)?;
    run(&mut cmd("rustup", ["target", "add", target.triple]))?;
    crate::cross::register_binfmt(&h, target)?;
    let packages: Vec<String> = CROSS_BUILD_TOOLS
        .iter()
        .map(|tool| tool.to_string())
        .chain(LIBRARIES.iter().map(|library| format!("{library}:{ARM64}")))
        .chain([format!("crossbuild-essential-{ARM64}")])
        .collect();
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let root = crate::debian_root::ensure(&h, ARM64_ROOT, Suite::native("trixie"), &packages)?;
    // What dh_auto_configure passes CMake for a cross build.
    let (processor, _) = target.gnu.split_once('-').unwrap_or((target.gnu, ""));
    let toolchain = format!(
        "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR {processor})\n\
         set(CMAKE_C_COMPILER {0}-gcc)\nset(CMAKE_CXX_COMPILER {0}-g++)\n\
         set(PKG_CONFIG_EXECUTABLE /usr/bin/{0}-pkg-config)\n",
        target.gnu
    );
    harness::create_dir_all(&root.join("work"))?;
    harness::write_file(&root.join("work/toolchain.cmake"), &toolchain)?;
    let both = [format!("-DCMAKE_TOOLCHAIN_FILE={WORK_INSIDE}/toolchain.cmake")];
    let module = [
        format!("-DCMAKE_PROJECT_INCLUDE={REPO_INSIDE}/cmake/ncfilters.cmake"),
        format!("-DNCFILTERS_CARGO_TARGET_DIR={WORK_INSIDE}/cargo"),
    ];
    build_both(&h, &root, configuration, &both, &module)?;
    suite_on_both_under_qemu(&h, &root, "Debian 13 flags, arm64", ARM64_EXPECTED, &ARM64_STOCK_FAILURES)
}

/// The suite on the root's stock and ncfilters builds (`built`: how, for the summary lines): both
/// must pass `expected` tests and fail exactly `failures`, stock's own there.
fn suite_on_both(h: &Harness, root: &Path, built: &str, expected: usize, failures: &[KnownFailure]) -> Result {
    let hdf5 = debian_hdf5_version(h, root)?;
    for failure in failures {
        println!("  expected to fail on both builds: {} ({})", failure.test, failure.why);
    }
    let failing: Vec<&str> = failures.iter().map(|failure| failure.test).collect();
    for flavour in crate::netcdf::FLAVOURS {
        let label = format!("{} ({built}) on HDF5 {hdf5} {flavour}", h.version());
        run_suite(h, root, flavour, &label, expected, &failing)?;
    }
    Ok(())
}

/// The suite on the root's two builds, run under qemu-user: judged against stock's run there
/// (`ctest_suite::run_pair_under`), `expected` passing on both but for `failures`, stock's own.
fn suite_on_both_under_qemu(
    h: &Harness,
    root: &Path,
    built: &str,
    expected: usize,
    failures: &[KnownFailure],
) -> Result {
    let hdf5 = debian_hdf5_version(h, root)?;
    for failure in failures {
        println!("  expected to fail on both builds: {} ({})", failure.test, failure.why);
    }
    let name = root.file_name().unwrap_or_default().to_string_lossy();
    let commands = crate::netcdf::FLAVOURS.map(|flavour| ctest_in_root(h, root, flavour));
    let suites = [0, 1].map(|i| {
        let flavour = crate::netcdf::FLAVOURS[i];
        EmulatedSuite {
            label: format!("{} ({built}) on HDF5 {hdf5} {flavour}", h.version()),
            log_file: h.work_file(&format!("{name}-ctest-{flavour}.log")),
            ctest: &commands[i],
        }
    });
    let known: Vec<&str> = failures.iter().map(|failure| failure.test).collect();
    run_pair_under(&QEMU_USER, h.jobs, suites, expected + known.len(), &known)
}

/// ctest in the root's `flavour` build, given ctest's arguments, with the release's suite dialect
/// (set inside the root: `inside` starts from an empty environment).
fn ctest_in_root<'a>(
    h: &'a Harness,
    root: &'a Path,
    flavour: &str,
) -> impl Fn(Vec<String>) -> std::process::Command + 'a {
    let dialect = format!("{}={}", crate::netcdf::SUITE_DIALECT_VARIABLE, h.release.suite_dialect);
    let build = format!("{WORK_INSIDE}/build-{flavour}");
    move |arguments| {
        let mut ctest = vec!["env".to_string(), dialect.clone(), "ctest".into(), "--test-dir".into(), build.clone()];
        ctest.extend(arguments);
        inside(h, root, &ctest)
    }
}

/// The version of the root's Debian HDF5 (1.14.5).
fn debian_hdf5_version(h: &Harness, root: &Path) -> Result<String> {
    let version_of_hdf5 = ["sh", "-c", "dpkg-query -W -f '${Version}' libhdf5-dev | cut -d+ -f1"];
    Ok(crate::process::output(&mut inside(h, root, &version_of_hdf5))?.trim().to_string())
}

/// Stock and ncfilters built with `configuration`'s flags and `both` (a cross build's toolchain
/// file) in the root, ncfilters configured with `module`, its options; and the verdict of the
/// module's layout check. Like the other builds, the root's are kept and rebuilt incrementally.
fn build_both(h: &Harness, root: &Path, configuration: &Configuration, both: &[String], module: &[String]) -> Result {
    let work = root.join(WORK_INSIDE.trim_start_matches('/'));
    harness::create_dir_all(&work)?;
    let source = format!("netcdf-c-{}", h.version());
    let flags = configuration.flags(h.release);
    let name = root.file_name().unwrap_or_default().to_string_lossy();
    for flavour in crate::netcdf::FLAVOURS {
        let source_copy = work.join(format!("src-{flavour}"));
        if !source_copy.is_dir() {
            let mut copy = cmd("cp", ["-a"]);
            copy.arg(h.work.join(&source)).arg(&source_copy);
            run(&mut copy)?;
        }
        let mut configure = vec!["cmake".to_string(), "-S".into(), format!("{WORK_INSIDE}/src-{flavour}")];
        configure.extend(["-B".to_string(), format!("{WORK_INSIDE}/build-{flavour}")]);
        configure.extend(flags.iter().cloned());
        configure.extend(both.iter().cloned());
        if flavour == "ncfilters" {
            configure.extend(module.iter().cloned());
        }
        // Configured on every run (again, on a kept tree), so that the layout check's verdict shows.
        let what = format!("configure netcdf-c {} ({flavour}, Debian 13 flags) in {name}", h.version());
        let configured = crate::debian_root::step_output(h, root, &what, &configure)?;
        if flavour == "ncfilters" {
            let Some(layout) = configured.lines().find(|line| line.contains("sizes and offsets of netcdf-c's structs"))
            else {
                fail!("configure in {name} printed no verdict of the layout check");
            };
            println!("PASS {}", layout.trim_start_matches("-- "));
        }
        let build = ["cmake", "--build", &format!("{WORK_INSIDE}/build-{flavour}"), &format!("-j{}", h.jobs)];
        step(h, root, &format!("build netcdf-c ({flavour}) in {name}"), &build)?;
    }
    Ok(())
}

/// netcdf-c's ctest suite on the root's `flavour` build: `expected` pass, and exactly `failing` fail.
fn run_suite(h: &Harness, root: &Path, flavour: &str, label: &str, expected: usize, failing: &[&str]) -> Result {
    let name = root.file_name().unwrap_or_default().to_string_lossy();
    log(format!("netcdf-c's ctest suite on the {flavour} build in {name}"));
    let log_file = h.work_file(&format!("{name}-ctest-{flavour}.log"));
    let succeeded = run_halves(&ctest_in_root(h, root, flavour), h.jobs, &NATIVE, &log_file)?;
    check_ctest_log(&log_file, label, succeeded, expected, failing)?;
    Ok(())
}

/// netCDF4-python 1.7.2's own tests (from its sdist) with Debian's python3-netcdf4 on Debian's
/// libnetcdf22 and on ncfilters'; ncfilters must fail none that Debian's passes.
fn netcdf4_python_suite(h: &Harness, root: &Path) -> Result {
    let sdist = crate::debian_root::netcdf4_python_sdist(h, root, NETCDF4_PYTHON_VERSION)?;
    let tests = root.join("work/netcdf4-python");
    harness::create_dir_all(&tests)?;
    let mut unpack = cmd("tar", ["-xzf"]);
    unpack.arg(&sdist).arg("-C").arg(&tests).arg("--strip-components=1");
    run(&mut unpack)?;
    log(format!("netCDF4-python {NETCDF4_PYTHON_VERSION}'s test suite (Debian's python3-netcdf4): Debian's libnetcdf22, then ncfilters'"));
    println!(
        "  note: netCDF4-python 1.7.2 inverts has_zstd_filter, has_bzip2_filter and has_blosc_filter (`if \
         __has_zstandard_support__: return False`), so its zstd, bzip2 and blosc tests skip on any library: \
         skipped, never counted as passes"
    );
    let mut outcomes = Vec::new();
    for (label, lib) in [("Debian's libnetcdf22", ""), ("ncfilters' libnetcdf", "/work/build-ncfilters")] {
        let log_file = h
            .work_file(&format!("debian13-netcdf4-python-{}.log", if lib.is_empty() { "debian" } else { "ncfilters" }));
        let script = format!(
            "cd /work/netcdf4-python/test && {} python3 -m pytest -q -rfs -p no:cacheprovider .",
            if lib.is_empty() { String::new() } else { format!("LD_LIBRARY_PATH={lib}") }
        );
        // pytest exits 1 when a test fails: the counts are compared below.
        succeeds_into_log(&mut inside(h, root, &["sh", "-c", script.as_str()]), &log_file, false)?;
        let outcome = PytestOutcome::read(&read_to_string(&log_file)?);
        println!("netCDF4-python {NETCDF4_PYTHON_VERSION} suite on {label}: {}", outcome.counts());
        if outcome.passed == 0 {
            print_tail(&log_file, 30);
            fail!("netCDF4-python's suite ran no test on {label}");
        }
        outcomes.push(outcome);
    }
    outcomes[1].must_fail_nothing_passing_on("ncfilters' libnetcdf", &outcomes[0], "Debian's libnetcdf22")?;
    println!("PASS netCDF4-python {NETCDF4_PYTHON_VERSION}: ncfilters' libnetcdf fails nothing Debian's passes");
    Ok(())
}

/// Debian 13's NCO and CDO on Debian's libnetcdf22 and on the ncfilters build's; ncfilters must
/// succeed in every case Debian's does, and in all of them.
fn clients(h: &Harness, root: &Path) -> Result {
    log("Debian 13's programs (NCO, CDO) with no HDF5_PLUGIN_PATH: Debian's libnetcdf22, then ncfilters'");
    for name in ["clients.sh", "topography.sh"] {
        std::fs::copy(h.repo.join("tests/debian13").join(name), root.join("work").join(name))
            .map_err(|e| harness::Failure(format!("cannot copy {name}: {e}")))?;
    }
    let mut results = Vec::new();
    for (label, lib) in [("Debian's libnetcdf22", ""), ("ncfilters' libnetcdf", "/work/build-ncfilters")] {
        let output =
            crate::process::output(&mut inside(h, root, &["bash", "/work/clients.sh", label, WORK_INSIDE, lib]))?;
        print!("{output}");
        results.push(ClientCases::read(&output));
    }
    results[1].must_have_run_each_of(&["nco", "cdo"])?;
    let counts = results[1].must_pass_all("ncfilters' libnetcdf", &results[0], "Debian's libnetcdf22", &[])?;
    println!("PASS Debian 13's programs: {counts}");
    Ok(())
}

/// The release tarball's top directory (`ncfilters-<version>`), and cargo's `-p` argument for each
/// shipped crate, which the builds in the root name.
fn tarball_and_packages(h: &Harness, tarball: &Path) -> Result<(String, Vec<String>)> {
    let name = tarball.file_name().unwrap_or_default().to_string_lossy().trim_end_matches(".tar.xz").to_string();
    let members = crate::licences::shipped_members(&h.repo, &crate::licences::metadata(&h.repo)?);
    Ok((name, members.iter().map(|(package, _)| format!("-p {package}")).collect()))
}

/// Debian 13's packaged cargo and rustc (1.85) build every shipped crate from the release tarball
/// (`dist`), offline (`unshare --net`) and with an empty HOME and cargo home, as a Debian builder would;
/// returns where the tarball's tree is, inside the root.
fn debian_cargo_builds_the_tarball(h: &Harness, root: &Path, tarball: &Path) -> Result<String> {
    let (name, packages) = tarball_and_packages(h, tarball)?;
    let dir = format!("{WORK_INSIDE}/tarball");
    let script = format!(
        "set -e; rm -rf {dir}; mkdir -p {dir}/home {dir}/cargo-home; \
         tar -xJf {REPO_INSIDE}/target/dist/{name}.tar.xz -C {dir}; cd {dir}/{name}; \
         export PATH=/usr/bin:/bin RUSTC=/usr/bin/rustc HOME={dir}/home CARGO_HOME={dir}/cargo-home CARGO_TARGET_DIR={dir}/target; \
         /usr/bin/cargo --version; /usr/bin/rustc --version; \
         /usr/bin/cargo build --offline --frozen --release -j {} {}",
        h.jobs,
        packages.join(" ")
    );
    let start = std::time::Instant::now();
    let what = "Debian 13's cargo builds the release tarball's crates, offline";
    let log = crate::debian_root::offline_step_output(h, root, what, &script)?;
    let versions: Vec<&str> =
        log.lines().filter(|line| line.starts_with("cargo ") || line.starts_with("rustc ")).collect();
    println!(
        "PASS {name} built offline by Debian 13's {} in {} s ({} packages)",
        versions.join(" and "),
        start.elapsed().as_secs(),
        packages.len()
    );
    Ok(format!("{dir}/{name}"))
}

/// The shipped crates as Debian's Rust team would build them (issue 47), offline (`unshare --net`)
/// with Debian 13's cargo and only Debian's crates: packaging/debian-crates.patch applied, first to
/// the repository's tracked files (the tarball has no tests), whose shipped crates are built and
/// tested, then to the release tarball without `vendor/`, its cargo configuration and
/// `Cargo.lock`, for the module's build. `--ignore-rust-version`: the dev-only crates state the
/// Rust the newest crates need; Debian's older ones build with its 1.85. The git tree's workspace
/// leaves out gen-headers and xtask, which nothing built here uses: cargo resolves every member's
/// dependencies, and xtask's clap_mangen (`man-page`) is not among the crates the root has.
/// Returns the tarball's tree and the cargo home, inside the root.
fn debian_crates_build(h: &Harness, root: &Path, tarball: &Path) -> Result<(String, String)> {
    let (name, packages) = tarball_and_packages(h, tarball)?;
    let dir = format!("{WORK_INSIDE}/debian-crates");
    let on_host = root.join(dir.trim_start_matches('/'));
    harness::remove_dir_all_if_exists(&on_host)?;
    harness::create_dir_all(&on_host.join("git"))?;
    let files = on_host.join("tracked-files");
    harness::write_file(&files, &crate::licences::tracked_files(&h.repo)?.join("\n"))?;
    let copy = format!(
        "tar -cf - -C '{}' -T '{}' | tar -xf - -C '{}'",
        h.repo.display(),
        files.display(),
        on_host.join("git").display()
    );
    run(&mut cmd("sh", ["-c", copy.as_str()]))?;
    let patch = crate::licences::DEBIAN_CRATES_PATCH;
    let cargo_home = format!("{dir}/cargo-home");
    let script = format!(
        "set -e; mkdir -p {dir}/home; {write_cargo_home}; \
         export PATH=/usr/bin:/bin HOME={dir}/home CARGO_HOME={cargo_home} CARGO_TARGET_DIR={dir}/target \
                NCFILTERS_NETCDF_VERSION={version}; \
         {prepare_git_tree}; sed -i '/\"tools\\/gen-headers\",/d; /\"xtask\",/d' {dir}/git/Cargo.toml; cd {dir}/git; \
         cargo build --release -j {jobs} {packages}; \
         cargo test --ignore-rust-version -j {jobs} -p ncfilters-logic -p ncfilters-runtime -p ncfilters-filters -p ncfilters-core -p ncfilters-plugin -p ncfilters; \
         tar -xJf {REPO_INSIDE}/target/dist/{name}.tar.xz -C {dir}; {prepare_tarball}",
        write_cargo_home = crate::debian_crates::write_cargo_home(&cargo_home),
        prepare_git_tree = crate::debian_crates::prepare_tree(&format!("{dir}/git")),
        prepare_tarball = crate::debian_crates::prepare_tree(&format!("{dir}/{name}")),
        version = h.version(),
        jobs = h.jobs,
        packages = packages.join(" ")
    );
    let start = std::time::Instant::now();
    let what = "Debian 13's cargo builds and tests the shipped crates from Debian's crates, offline";
    let log = crate::debian_root::offline_step_output(h, root, what, &script)?;
    let passed: usize = log
        .lines()
        .filter_map(|line| line.strip_prefix("test result: ok. "))
        .filter_map(|rest| rest.split_once(" passed")?.0.parse::<usize>().ok())
        .sum();
    if passed == 0 {
        fail!("the shipped crates' tests from Debian's crates ran no test");
    }
    println!(
        "PASS the shipped crates ({} packages), {patch} applied, built and tested from Debian 13's crates alone, \
         offline, in {} s: {passed} tests passed",
        packages.len(),
        start.elapsed().as_secs()
    );
    Ok((format!("{dir}/{name}"), cargo_home))
}
