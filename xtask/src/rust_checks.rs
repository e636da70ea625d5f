// SPDX-License-Identifier: BSD-3-Clause
//! The steps that are cargo commands: `rust`, `headers`, `fmt`, `clippy`, `miri`, `abi`, `differential`, `fuzz`.

use std::path::Path;
use std::process::Command;

use crate::harness::{create_dir_all, fail, log, Harness, Result};
use crate::process::{cmd, on_path, output, run, succeeds_into_log};
use crate::release::{Release, RELEASES};
use crate::setup::hdf5_cflags;
use crate::text::print_tail;

/// cargo in the repository's root.
fn cargo<const N: usize>(h: &Harness, args: [&str; N]) -> Command {
    let mut cargo = cmd("cargo", args);
    cargo.current_dir(&h.repo);
    cargo
}

/// `cargo test -q --release --locked` with `args`.
fn quiet_test<const N: usize>(h: &Harness, args: [&str; N]) -> Command {
    let mut test = cargo(h, ["test", "-q", "--release", "--locked"]);
    test.args(args);
    test
}

/// The distribution build's feature (cmake: NCFILTERS_SYSTEM_LIBS), for a build of the crates.
const DISTRIBUTION_BUILD: &str = "--features=ncfilters-core/system-libs";

/// The crates with the filters' backends, which the distribution build switches.
const DISTRIBUTION_CRATES: [&str; 4] = ["ncfilters-runtime", "ncfilters-filters", "ncfilters-core", "ncfilters-plugin"];

/// `releases`: those of this run (`rotation`). The crate is tested for every release after the
/// first (the workspace's default), those of this run in their own target directories.
pub fn test_rust(h: &Harness, releases: &[&'static Release]) -> Result {
    log("cargo test of the workspace (unit, property and C-ABI tests; the ncfilters command's logic, its binary tested installed by `install`)");
    run(&mut cargo(h, ["test", "--workspace", "--release", "--locked"]))?;
    log("cargo test of the filters' crates in the distribution build (the system's zlib, libbz2 and libzstd)");
    let mut distribution = quiet_test(h, [DISTRIBUTION_BUILD]);
    run(distribution.args(package_args(DISTRIBUTION_CRATES)).env("ZSTD_SYS_USE_PKG_CONFIG", "1"))?;
    log("cargo test of zstd on a libzstd without threads (the bundled one without feature zstd-threads)");
    run(&mut quiet_test(h, ["-p", "ncfilters-runtime", "--no-default-features", "--lib", "zstd_context"]))?;
    for_later_releases(
        h,
        releases,
        "unit and plugin-path tests",
        [
            "test",
            "-q",
            "--release",
            "--locked",
            "-p",
            "ncfilters-logic",
            "-p",
            "ncfilters-core",
            "-p",
            "ncfilters",
            "--lib",
            "--test",
            "plugin_path_abi",
        ],
    )?;
    test_release_detection(h)
}

/// cmake/ncfilters.cmake reads the release from netcdf-c's CMakeLists.txt (project(VERSION) from
/// 4.9.3 on, SET(NC_VERSION_*) before) and refuses one it does not know, naming those it does and
/// NCFILTERS_NETCDF_LIKE: checked on stand-in projects for a release it knows, for 4.9.1 and
/// 4.11.0, which it does not, and for 4.11.0 with the option naming a known release and not.
fn test_release_detection(h: &Harness) -> Result {
    log("the CMake module's release detection (stand-in netcdf-c projects)");
    let known = crate::release::RELEASES.iter().map(|r| r.version).collect::<Vec<_>>().join(", ");
    let set_4_9 = |patch: u32| {
        format!("project(netCDF LANGUAGES C)\nSET(NC_VERSION_MAJOR 4)\nSET(NC_VERSION_MINOR 9)\nSET(NC_VERSION_PATCH {patch})\n")
    };
    let project_4_11 = "project(netCDF VERSION 4.11.0 LANGUAGES C)\n".to_string();
    // (version, CMakeLists.txt's version lines, NCFILTERS_NETCDF_LIKE, what the log must say, in parts)
    let refusal = format!(
        "ncfilters knows netcdf-c {known}. To build this one with the behaviour of one of those, \
                           configure with -DNCFILTERS_NETCDF_LIKE=<release>"
    );
    let cases = [
        ("4.9.2", set_4_9(2), "", vec!["-- ncfilters: netcdf-c 4.9.2".to_string()]),
        (
            "4.10.0",
            "project(netCDF VERSION 4.10.0 LANGUAGES C)\n".to_string(),
            "",
            vec!["-- ncfilters: netcdf-c 4.10.0".into()],
        ),
        ("4.9.1", set_4_9(1), "", vec!["this is netcdf-c '4.9.1'".into(), refusal.clone()]),
        ("4.11.0", project_4_11.clone(), "", vec!["this is netcdf-c '4.11.0'".into(), refusal]),
        (
            "4.11.0",
            project_4_11.clone(),
            "4.10.1",
            vec!["-- ncfilters: netcdf-c 4.11.0 is not a release ncfilters knows; built with 4.10.1's behaviour".into()],
        ),
        (
            "4.11.0",
            project_4_11,
            "4.11.0",
            vec![format!("NCFILTERS_NETCDF_LIKE is '4.11.0'; it names one of the releases ncfilters knows: {known}")],
        ),
    ];
    for (i, (version, body, like, expected)) in cases.iter().enumerate() {
        let dir = h.work_file(&format!("release-detection/{i}-{version}"));
        let text = configure_stand_in(&dir, body, &h.repo, like)?;
        let said = |part: &String| text.contains(&part.split_whitespace().collect::<Vec<_>>().join(" "));
        if let Some(missing) = expected.iter().find(|part| !said(part)) {
            print_tail(&dir.join("configure.log"), 20);
            fail!("netcdf-c {version} (NCFILTERS_NETCDF_LIKE={like:?}): configure did not say {missing:?}");
        }
        println!("PASS netcdf-c {version} (NCFILTERS_NETCDF_LIKE={like:?}): {}", expected.join(" … "));
    }
    test_copied_tree_provenance(h)
}

/// Configures a stand-in netcdf-c project in `dir` (a new CMakeLists.txt with `body`) with the
/// module of the ncfilters tree at `root`: returns configure's log with its whitespace collapsed
/// (CMake wraps an error's text at word boundaries). None configures: a release the module takes
/// gets past its check and stops at the missing netcdf-c targets, any other at the check.
fn configure_stand_in(dir: &Path, body: &str, root: &Path, like: &str) -> Result<String> {
    crate::harness::remove_dir_all_if_exists(dir)?;
    create_dir_all(dir)?;
    crate::harness::write_file(&dir.join("CMakeLists.txt"), &format!("cmake_minimum_required(VERSION 3.20)\n{body}"))?;
    let log_file = dir.join("configure.log");
    let mut configure = cmd("cmake", ["-S"]);
    configure
        .arg(dir)
        .arg("-B")
        .arg(dir.join("build"))
        .arg(format!("-DCMAKE_PROJECT_INCLUDE={}", root.join("cmake/ncfilters.cmake").display()))
        .arg(format!("-DNCFILTERS_NETCDF_LIKE={like}"));
    succeeds_into_log(&mut configure, &log_file, false)?;
    Ok(crate::harness::read_to_string(&log_file)?.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The install stage copies a clone in a private directory (mode 0700, as Debian's homes are)
/// to a place the unprivileged user can read, without `.git`: a build of that copy must name the
/// same ncfilters build ("0.3.0 (git 1a2b3c4d5e6f)") as one of the clone.
fn test_copied_tree_provenance(h: &Harness) -> Result {
    log("a copy of the tree, as the install stage makes from a private clone, names the clone's build");
    let body = "project(netCDF VERSION 4.10.1 LANGUAGES C)\n";
    let named = |text: &str| {
        let start = text.find("-- ncfilters: ").map(|at| at + "-- ncfilters: ".len())?;
        let rest = &text[start..];
        Some(rest[..rest.find(')')? + 1].to_string())
    };
    let dir = h.work_file("copied-tree-provenance");
    let clone = named(&configure_stand_in(&dir.join("clone"), body, &h.repo, "")?);
    let private = dir.join("private");
    create_dir_all(&private)?;
    std::fs::set_permissions(&private, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .map_err(|e| crate::harness::Failure(format!("chmod 0700 {}: {e}", private.display())))?;
    let tree = private.join("ncfilters");
    crate::harness::remove_dir_all_if_exists(&tree)?;
    crate::install::copy_of_the_tree(&h.repo, &tree)?;
    let copy = named(&configure_stand_in(&dir.join("copy"), body, &tree, "")?);
    match (clone, copy) {
        (Some(clone), Some(copy)) if clone == copy => {
            println!("PASS the copy names the clone's build: {copy}");
            Ok(())
        }
        (clone, copy) => fail!("the clone's build is {clone:?}, its copy's {copy:?}"),
    }
}

pub fn test_headers(h: &Harness) -> Result {
    log("include/ headers are what cbindgen generates now");
    run(&mut gen_headers(h, &[], &["--check"]))
}

/// `cargo run` of the header generator and ABI checker (tools/gen-headers), with `features` of
/// the crates it builds and `args` for it.
fn gen_headers(h: &Harness, features: &[&str], args: &[&str]) -> Command {
    let mut command = cargo(h, ["run", "-q", "--release", "--locked", "-p", "gen-headers"]);
    for feature in features {
        command.args(["--features", feature]);
    }
    command.arg("--").args(args);
    command
}

/// The Cargo workspaces of the repository: the one workspace, and fuzz/, which cargo-fuzz builds
/// (rustfmt.toml at the root applies to both).
const WORKSPACES: [&str; 2] = [".", "fuzz"];

/// Runs `cargo <args>` in each workspace.
fn in_every_workspace<const N: usize>(h: &Harness, args: [&str; N]) -> Result {
    for workspace in WORKSPACES {
        log(format!("cargo {} ({workspace})", args.join(" ")));
        let mut cargo = cmd("cargo", args);
        cargo.current_dir(h.repo.join(workspace));
        run(&mut cargo)?;
    }
    Ok(())
}

pub fn test_fmt(h: &Harness) -> Result {
    in_every_workspace(h, ["fmt", "--all", "--check"])
}

/// `releases`: as for [`test_rust`].
pub fn test_clippy(h: &Harness, releases: &[&'static Release]) -> Result {
    in_every_workspace(h, ["clippy", "-q", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"])?;
    log("cargo clippy of the distribution build (feature system-libs)");
    run(cargo(h, ["clippy", "-q", "--all-targets", DISTRIBUTION_BUILD, "--locked"])
        .args(package_args(DISTRIBUTION_CRATES))
        .args(["--", "-D", "warnings"]))?;
    log("cargo clippy of the ncfilters command's binary (feature `binary`; checking links nothing)");
    run(&mut cargo(
        h,
        [
            "clippy",
            "-q",
            "-p",
            "ncfilters-cli",
            "--all-targets",
            "--features",
            "binary",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    ))?;
    // The crate compiled for the other releases has other cfgs (struct mirrors, behaviour).
    for_later_releases(
        h,
        releases,
        "clippy",
        [
            "clippy",
            "-q",
            "-p",
            "ncfilters-logic",
            "-p",
            "ncfilters-core",
            "-p",
            "ncfilters",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )
}

/// `cargo <args>` of the crate built for every release but the first (its own cfgs), whichever
/// releases this run builds: in the release's own target directory when it is one of `releases`
/// (its CMake build then reuses the artifacts), else in `target/cfg-sets`, which the others share
/// and where only ncfilters' own crates compile again per release. `what` names it in the progress line.
fn for_later_releases<const N: usize>(
    h: &Harness,
    releases: &[&'static Release],
    what: &str,
    args: [&str; N],
) -> Result {
    for release in RELEASES.iter().filter(|r| !r.is_first()) {
        let h = h.for_release(release);
        let built_this_run = releases.iter().any(|r| r.version == release.version);
        let target = if built_this_run { h.cargo_target() } else { h.repo.join("target/cfg-sets") };
        let not_built = if built_this_run { "" } else { " (not built this run: its cfg set only)" };
        log(format!("cargo {what} of ncfilters for netcdf-c {}{not_built}", release.version));
        let mut command = cargo(&h, args);
        run(command.env("CARGO_TARGET_DIR", target).env("NCFILTERS_NETCDF_VERSION", release.version))?;
    }
    Ok(())
}

/// The unit tests Miri runs (test-name filters): everything that calls no C. zstd, bzip2,
/// blosc and szip are C libraries (blosc's frame layout is not), and the other C-ABI tests call
/// netcdf-c, which Miri cannot run (`abi::plugin_path_api`'s call none).
const MIRI_TESTS: [&str; 19] = [
    "abi::null_arguments::null_arguments_get_the_documented_answer",
    "abi::plugin_path_api::",
    "c_args::",
    "c_heap::",
    "ffi_boundary::",
    "filter_chain::",
    "filters::tests",
    "fletcher32::tests",
    "deflate::tests",
    "blosc_frame::tests",
    "helper_tests::",
    "plugin_loader::",
    "plugin_path::",
    "plugin_registry::",
    "codec_json::",
    "codecs::",
    "filterspec::",
    "standard_filters::",
    "filter_rules::",
];

/// The library's crates below the plugin crate, lowest first.
const CRATES_BELOW_THE_PLUGINS: [&str; 4] =
    ["ncfilters-logic", "ncfilters-runtime", "ncfilters-filters", "ncfilters-core"];

/// `-p <crate>` for each of `crates`.
fn package_args<'a>(crates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    crates.into_iter().flat_map(|name| ["-p", name]).collect()
}

pub fn test_miri(h: &Harness) -> Result {
    log("Miri needs the nightly toolchain's miri and rust-src components");
    run(&mut cmd("rustup", ["+nightly", "component", "add", "miri", "rust-src"]))?;
    let packages = package_args(CRATES_BELOW_THE_PLUGINS.into_iter().chain(["ncfilters"]));
    log(format!("cargo +nightly miri test {} --lib ({})", packages.join(" "), MIRI_TESTS.join(" ")));
    let mut miri = cargo(h, ["+nightly", "miri", "test"]);
    miri.args(packages).args(["--lib", "--locked", "--"]);
    // Isolation off: the registry tests read plugin directories they create. SSSE3 on, so that
    // the shuffle's SIMD kernels (chosen at run time) are the code Miri checks.
    miri.args(MIRI_TESTS)
        .env("MIRIFLAGS", "-Zmiri-disable-isolation")
        .env("RUSTFLAGS", "-Ctarget-feature=+ssse3")
        .env("NCFILTERS_QUIET", "1");
    run(&mut miri)?;
    // The worker pool with 4 cores, so that its workers start (Miri's default is 1). Miri runs no
    // library destructor, so the workers are still parked at exit: that is not a leak here
    // (c_tests/plugin_unload.c checks that the destructor joins them).
    log("cargo +nightly miri test -p ncfilters-runtime -p ncfilters-filters --lib (worker_pool:: and deflate::tests with 4 cores)");
    let mut pool = cargo(
        h,
        [
            "+nightly",
            "miri",
            "test",
            "-p",
            "ncfilters-runtime",
            "-p",
            "ncfilters-filters",
            "--lib",
            "--locked",
            "--",
            "worker_pool::",
            "deflate::tests",
        ],
    );
    pool.env("MIRIFLAGS", "-Zmiri-disable-isolation -Zmiri-num-cpus=4 -Zmiri-ignore-leaks")
        .env("RUSTFLAGS", "-Ctarget-feature=+ssse3")
        .env("NCFILTERS_QUIET", "1");
    run(&mut pool)?;
    // Big-endian: the code that lays out bytes, interpreted for s390x (its build scripts compile
    // C, hence the cross compiler). `cargo xtask cross` runs all the tests there under qemu-user.
    let s390x = crate::cross::target("s390x")?;
    crate::cross::prepare(&[s390x])?;
    log(format!(
        "cargo +nightly miri test --target {} -p ncfilters-logic -p ncfilters-filters -p ncfilters-core --lib ({})",
        s390x.triple,
        MIRI_BYTE_ORDER_TESTS.join(" ")
    ));
    let mut big_endian = cargo(
        h,
        [
            "+nightly",
            "miri",
            "test",
            "--target",
            s390x.triple,
            "-p",
            "ncfilters-logic",
            "-p",
            "ncfilters-filters",
            "-p",
            "ncfilters-core",
            "--lib",
            "--locked",
            "--",
        ],
    );
    big_endian
        .args(MIRI_BYTE_ORDER_TESTS)
        .envs(crate::cross_env::cross_compiler_env(s390x.triple, s390x.gnu))
        .env("MIRIFLAGS", "-Zmiri-disable-isolation")
        .env("NCFILTERS_QUIET", "1");
    run(&mut big_endian)?;
    // Only nightly's rustdoc checks a compile_fail doctest's error code: stable's passes one that
    // fails to compile for any reason (a private path, a missing argument).
    log("cargo +nightly test --doc of the crates but the tools (compile_fail error codes)");
    let every_crate = CRATES_BELOW_THE_PLUGINS.into_iter().chain(["ncfilters-plugin", "ncfilters"]);
    run(cargo(h, ["+nightly", "test", "-q", "--doc", "--locked"]).args(package_args(every_crate)))
}

/// The unit tests whose code lays out bytes (filter-spec words and `fix8`, fletcher32, the
/// shuffle, blosc's header, codec JSON), for Miri on a big-endian target.
const MIRI_BYTE_ORDER_TESTS: [&str; 6] =
    ["filterspec::", "fletcher32::tests", "blosc_frame::tests", "filters::tests", "codec_json::", "codecs::"];

pub fn test_abi(h: &Harness) -> Result {
    let netcdf_src = h.work.join("src-stock");
    let netcdf_build = h.build_dir("stock");
    let cflags = hdf5_cflags()?;

    log(format!("ABI check against netcdf-c {}'s headers", h.version()));
    // With the module's own cargo environment, cargo reuses the library the build made.
    let module_env = module_cargo_env(&h.build_dir("ncfilters"))?;
    abi_check(h, &netcdf_src, &netcdf_build, &[], &h.cargo_target(), &cflags, &module_env)?;

    log("ABI check on a deliberately broken mirror must fail");
    // A target directory of its own, so that the broken build never replaces the real
    // libncfilters, shared by the releases, which then compile only the crates that read the release.
    let mut broken = gen_headers(h, &["ncfilters/abi-broken-mirror"], &["abi-check"]);
    broken
        .env("CARGO_TARGET_DIR", h.repo.join("target/abi-broken-mirror"))
        .env("NCFILTERS_NETCDF_VERSION", h.version())
        .arg("--netcdf-src")
        .arg(&netcdf_src)
        .arg("--netcdf-build")
        .arg(&netcdf_build)
        .arg("--expect-failure")
        .arg("--")
        .args(&cflags);
    run(&mut broken)
}

/// The ABI check against another HDF5's headers: netcdf-c's from the `flavour` build that
/// compiled against it, HDF5's from its prefix.
pub fn test_abi_with_hdf5(h: &Harness, flavour: &str, hdf5: &crate::hdf5::Hdf5Release) -> Result {
    log(format!("ABI check against netcdf-c {}'s headers and HDF5 {}'s", h.version(), hdf5.version));
    let include = format!("-I{}", hdf5.prefix(h).join("include").display());
    abi_check(h, &h.work.join(format!("src-{flavour}")), &h.build_dir(flavour), &[], &h.cargo_target(), &[include], &[])
}

/// The ABI check of the MPI-parallel layouts: libncfilters built with the `parallel4` features
/// (in its own target directory, as the parallel netcdf-c build does) against netcdf-c's headers
/// with the parallel build's config.h (`USE_PARALLEL4`) and the MPI HDF5's and MPI's headers.
pub fn test_abi_parallel(h: &Harness, netcdf_src: &Path, netcdf_build: &Path) -> Result {
    log("ABI check of the parallel layouts against netcdf-c's headers and the parallel config.h (USE_PARALLEL, USE_PARALLEL4)");
    let mut cflags = mpi_hdf5_cflags()?;
    cflags.push("-DUSE_PARALLEL4=1".into());
    abi_check(h, netcdf_src, netcdf_build, PARALLEL_FEATURES, &h.cargo_target().join("parallel"), &cflags, &[])
}

/// The unit tests of the filter rules built as for a parallel netcdf-c, with and without
/// HDF5's parallel filters (collective access, or NC_EINVAL).
pub fn test_parallel_rules(h: &Harness) -> Result {
    for features in ["parallel4,hdf5-parallel-filters", "parallel4"] {
        log(format!("unit tests of the filter rules with --features {features}"));
        let mut test =
            cargo(h, ["test", "-q", "--release", "--locked", "-p", "ncfilters-logic", "--lib", "--features"]);
        test.args([features, "filter_rules::"]).env("CARGO_TARGET_DIR", h.cargo_target().join("parallel"));
        run(&mut test)?;
    }
    Ok(())
}

/// The cargo features of a parallel build whose HDF5 writes filtered data in parallel (the library's,
/// which turn on the core's).
pub const PARALLEL_FEATURES: &[&str] = &["ncfilters/parallel4", "ncfilters/hdf5-parallel-filters"];

/// The compiler flags of Debian's OpenMPI HDF5 and of OpenMPI (mpicc's own).
fn mpi_hdf5_cflags() -> Result<Vec<String>> {
    let hdf5 = output(&mut cmd("pkg-config", ["--cflags", "hdf5-openmpi"]))?;
    let mpi = output(&mut cmd("mpicc", ["--showme:compile"]))?;
    Ok(hdf5.split_whitespace().chain(mpi.split_whitespace()).map(String::from).collect())
}

/// libncfilters built with `features` into `target_dir`, then gen-headers' ABI check of it
/// against netcdf-c's source and build trees, with `cflags`; cargo runs with `env` added.
fn abi_check(
    h: &Harness,
    netcdf_src: &Path,
    netcdf_build: &Path,
    features: &[&str],
    target: &Path,
    cflags: &[String],
    env: &[(String, String)],
) -> Result {
    let mut build = cargo(h, ["build", "-q", "--release", "--locked", "-p", "ncfilters"]);
    for feature in features {
        build.args(["--features", feature.trim_start_matches("ncfilters/")]);
    }
    let mut check = gen_headers(h, features, &["abi-check"]);
    check
        .arg("--netcdf-src")
        .arg(netcdf_src)
        .arg("--netcdf-build")
        .arg(netcdf_build)
        .arg("--lib")
        .arg(target.join("release/libncfilters.so"))
        .arg("--")
        .args(cflags);
    for command in [&mut build, &mut check] {
        command.env("CARGO_TARGET_DIR", target).env("NCFILTERS_NETCDF_VERSION", h.version());
        command.envs(env.iter().map(|(variable, value)| (variable, value)));
        run(command)?;
    }
    Ok(())
}

/// The environment the CMake module runs cargo with in `netcdf_build` (it writes
/// `ncfilters-cargo.env` at configure time).
fn module_cargo_env(netcdf_build: &Path) -> Result<Vec<(String, String)>> {
    let file = netcdf_build.join("ncfilters-cargo.env");
    let text = crate::harness::read_to_string(&file)?;
    let mut env = Vec::new();
    for line in text.lines().filter(|line| !line.is_empty()) {
        let Some((variable, value)) = line.split_once('=') else {
            fail!("{}: not VARIABLE=value: {line}", file.display());
        };
        env.push((variable.to_string(), value.to_string()));
    }
    Ok(env)
}

pub fn test_differential(h: &Harness) -> Result {
    log("differential parser test against the stock libnetcdf.so");
    let mut parser = differential_test(h, "differential_parser");
    parser.env("NCFILTERS_STOCK_LIBNETCDF", h.stock_lib());
    run(&mut parser)?;

    if h.release.own_plugin_path_api {
        log("differential plugin-path helper test against the stock libnetcdf.so");
        let mut helpers = differential_test(h, "plugin_path_abi");
        helpers.env("NCFILTERS_STOCK_LIBNETCDF", h.stock_lib());
        run(&mut helpers)?;
    }

    log("differential filter test against netcdf-c's C plugins (stock build)");
    let mut filters = differential_test(h, "differential_filters");
    filters.env("NCFILTERS_STOCK_PLUGINS", h.build_dir("stock").join("plugins"));
    run(&mut filters)
}

/// One of the `#[ignore]`d integration tests that need the stock build, built for the release.
fn differential_test(h: &Harness, test: &str) -> Command {
    let mut test = cargo(h, ["test", "-q", "--release", "--locked", "--test", test, "--", "--ignored", "--nocapture"]);
    test.env("CARGO_TARGET_DIR", h.cargo_target()).env("NCFILTERS_NETCDF_VERSION", h.version());
    test
}

/// cargo fuzz in fuzz/. RUSTC_BOOTSTRAP: cargo-fuzz needs -Zsanitizer; the machine has only
/// the stable toolchain.
fn cargo_fuzz<const N: usize>(h: &Harness, args: [&str; N]) -> Command {
    let mut fuzz = cmd("cargo", ["fuzz"]);
    // RUST_BACKTRACE=0: on a failed build, cargo-fuzz's own backtrace would push cargo's error
    // out of the log's tail.
    fuzz.args(args).current_dir(h.repo.join("fuzz")).env("RUSTC_BOOTSTRAP", "1").env("RUST_BACKTRACE", "0");
    fuzz
}

/// Removes the build trees of the first steps and the fuzz run that no later stage reads (about
/// 3 GiB): the cross builds, the cfg sets' builds and the sanitized fuzz targets.
pub fn remove_first_steps_artefacts(h: &Harness) -> Result {
    for dir in ["target/cross", "target/windows", "target/macos", "target/cfg-sets", "fuzz/target"] {
        crate::harness::remove_dir_all_if_exists(&h.repo.join(dir))?;
    }
    Ok(())
}

pub fn test_fuzz(h: &Harness) -> Result {
    log(format!("fuzz smoke run ({}s per target)", h.fuzz_seconds));
    h.ensure_work_dir()?;
    if !on_path("cargo-fuzz") {
        run(&mut cmd("cargo", ["install", "-q", "--locked", "cargo-fuzz"]))?;
    }
    let targets = output(&mut cargo_fuzz(h, ["list"]))?;
    for target in targets.split_whitespace() {
        fuzz_target(h, target)?;
    }
    Ok(())
}

fn fuzz_target(h: &Harness, target: &str) -> Result {
    // The corpus libFuzzer grows (fuzz/corpus/<target>) is git-ignored; the committed seeds
    // (fuzz/seeds/<target>, small valid chunks) are read as a second corpus and never written to.
    let fuzz_dir = h.repo.join("fuzz");
    let corpus = format!("corpus/{target}");
    create_dir_all(&fuzz_dir.join(&corpus))?;
    let mut command = cargo_fuzz(h, ["run", target, &corpus]);
    let seeds = format!("seeds/{target}");
    if fuzz_dir.join(&seeds).is_dir() {
        command.arg(&seeds);
    }
    command.arg("--").arg(format!("-max_total_time={}", h.fuzz_seconds)).env("NCFILTERS_QUIET", "1");
    let log_file = h.work_file(&format!("fuzz-{target}.log"));
    if !succeeds_into_log(&mut command, &log_file, false)? {
        // A failed build's cause is among its first errors, a crash's in the tail.
        crate::text::print_matching(&log_file, &["error", "Error"], 20);
        print_tail(&log_file, 30);
        fail!("fuzz target {target} failed");
    }
    let summary = last_done_line(&crate::harness::read_to_string(&log_file)?).unwrap_or_default();
    println!("PASS fuzz {target}: {summary}s, no crash");
    Ok(())
}

/// libFuzzer's last "Done <n> runs in <s> second" (the words up to "second").
fn last_done_line(log: &str) -> Option<String> {
    log.lines().rev().find_map(|line| {
        let start = line.find("Done ")?;
        let words: Vec<&str> = line[start..].split_whitespace().take(6).collect();
        let is_done = words.len() == 6
            && words[1].bytes().all(|b| b.is_ascii_digit())
            && words[2] == "runs"
            && words[3] == "in"
            && words[4].bytes().all(|b| b.is_ascii_digit())
            && words[5].starts_with("second");
        is_done.then(|| words[..5].join(" ") + " second")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_line_is_the_last_one() {
        let log = "#1 INITED\nDone 10 runs in 1 second(s)\nstat\nDone 1234 runs in 2 second(s)\n";
        assert_eq!(last_done_line(log).as_deref(), Some("Done 1234 runs in 2 second"));
        assert_eq!(last_done_line("nothing"), None);
    }
}
