// SPDX-License-Identifier: BSD-3-Clause
//! `debian13`: netcdf-c 4.9.3 as Debian 13 builds it, inside a Debian 13 root (`debian_root`, with
//! Debian's build dependencies, HDF5 1.14.5, NCO and CDO; cached in `<cache>/debian13-root`). Stock and ncfilters
//! are built with Debian's flags (the matrix's `debian13` configuration) against Debian's HDF5, the
//! suite runs on both, then Debian 13's own programs run on Debian's `libnetcdf22` and on
//! ncfilters' with no `HDF5_PLUGIN_PATH` (NCO and CDO: tests/debian13/clients.sh; netCDF4-python
//! 1.7.2's own test suite, from its sdist on PyPI). The Rust toolchain is the
//! host's, bind-mounted in a mount namespace that ends with each command.

use std::path::Path;

use crate::debian_root::{inside, step, ClientCases, PytestOutcome, REPO_INSIDE, WORK_INSIDE};
use crate::harness::{self, fail, log, read_to_string, Harness, Result};
use crate::netcdf::{check_ctest_log, ctest_halves};
use crate::process::{cmd, run, succeeds_into_log};
use crate::text::print_tail;

/// What the root installs: netcdf-c's build dependencies as Debian 13 builds it, and the programs
/// whose use of libnetcdf is checked.
const PACKAGES: [&str; 24] = [
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
    "libhdf5-dev",
    "libcurl4-openssl-dev",
    "libxml2-dev",
    "libzstd-dev",
    "libbz2-dev",
    "libaec-dev",
    "zlib1g-dev",
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

/// The root's name in the cache.
const ROOT: &str = "debian13-root";

pub fn test_debian13(h: &Harness) -> Result {
    let configuration = crate::configurations::CONFIGURATIONS
        .iter()
        .find(|configuration| configuration.name == CONFIGURATION)
        .expect("the matrix has Debian 13's configuration");
    let h = h.for_release(configuration.release());
    crate::setup::setup(&h)?;
    let root = crate::debian_root::ensure(&h, ROOT, "trixie", &PACKAGES)?;
    debian_cargo_builds_the_tarball(&h, &root)?;
    // Like the other builds, the root's are kept and rebuilt incrementally.
    let work = root.join(WORK_INSIDE.trim_start_matches('/'));
    harness::create_dir_all(&work)?;
    let source = format!("netcdf-c-{}", h.version());
    let flags = configuration.flags(h.release);
    let version_of_hdf5 = ["sh", "-c", "dpkg-query -W -f '${Version}' libhdf5-dev | cut -d+ -f1"];
    let hdf5 = crate::process::output(&mut inside(&h, &root, &version_of_hdf5))?.trim().to_string();
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
        if flavour == "ncfilters" {
            configure.push(format!("-DCMAKE_PROJECT_INCLUDE={REPO_INSIDE}/cmake/ncfilters.cmake"));
            configure.push(format!("-DNCFILTERS_CARGO_TARGET_DIR={WORK_INSIDE}/cargo"));
        }
        if !work.join(format!("build-{flavour}/CMakeCache.txt")).is_file() {
            step(&h, &root, &format!("configure netcdf-c {} ({flavour}, Debian 13 flags)", h.version()), &configure)?;
        }
        let build = ["cmake", "--build", &format!("{WORK_INSIDE}/build-{flavour}"), &format!("-j{}", h.jobs)];
        step(&h, &root, &format!("build netcdf-c ({flavour}) in the Debian 13 root"), &build)?;
    }
    for flavour in crate::netcdf::FLAVOURS {
        log(format!("netcdf-c's ctest suite on the {flavour} build in the Debian 13 root"));
        let log_file = h.work_file(&format!("debian13-ctest-{flavour}.log"));
        let mut succeeded = true;
        for (i, half) in ctest_halves(h.jobs).into_iter().enumerate() {
            let mut ctest = vec!["ctest".to_string(), "--test-dir".into(), format!("{WORK_INSIDE}/build-{flavour}")];
            ctest.extend(half);
            let mut command = inside(&h, &root, &ctest);
            command.env(crate::netcdf::SUITE_DIALECT_VARIABLE, h.release.suite_dialect);
            succeeded &= succeeds_into_log(&mut command, &log_file, i > 0)?;
        }
        let label = format!("{} (Debian 13 flags) on HDF5 {hdf5} {flavour}", h.version());
        check_ctest_log(&log_file, &label, succeeded, configuration.ctest_expected, &[])?;
    }
    clients(&h, &root)?;
    netcdf4_python_suite(&h, &root)
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
    let script = root.join("work/clients.sh");
    std::fs::copy(h.repo.join("tests/debian13/clients.sh"), &script)
        .map_err(|e| harness::Failure(format!("cannot copy clients.sh: {e}")))?;
    let mut results = Vec::new();
    for (label, lib) in [("Debian's libnetcdf22", ""), ("ncfilters' libnetcdf", "/work/build-ncfilters")] {
        let output =
            crate::process::output(&mut inside(h, root, &["bash", "/work/clients.sh", label, WORK_INSIDE, lib]))?;
        print!("{output}");
        results.push(ClientCases::read(&output));
    }
    let counts = results[1].must_pass_all("ncfilters' libnetcdf", &results[0], "Debian's libnetcdf22", &[])?;
    println!("PASS Debian 13's programs: {counts}");
    Ok(())
}

/// Debian 13's packaged cargo and rustc (1.85) build every shipped crate from the release tarball
/// (`dist`), offline (`unshare --net`) and with an empty HOME and cargo home, as a Debian builder would.
fn debian_cargo_builds_the_tarball(h: &Harness, root: &Path) -> Result {
    let tarball = crate::dist::make_tarball(h)?;
    let name = tarball.file_name().unwrap_or_default().to_string_lossy().trim_end_matches(".tar.xz").to_string();
    let members = crate::licences::shipped_members(&h.repo, &crate::licences::metadata(&h.repo)?);
    let packages: Vec<String> = members.iter().map(|(package, _)| format!("-p {package}")).collect();
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
    let log = crate::debian_root::step_output(
        h,
        root,
        "Debian 13's cargo builds the release tarball's crates, offline",
        &["unshare", "--net", "--", "sh", "-c", script.as_str()],
    )?;
    let versions: Vec<&str> =
        log.lines().filter(|line| line.starts_with("cargo ") || line.starts_with("rustc ")).collect();
    println!(
        "PASS {name} built offline by Debian 13's {} in {} s ({} packages)",
        versions.join(" and "),
        start.elapsed().as_secs(),
        members.len()
    );
    Ok(())
}
