// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters' build-and-test runner (`cargo xtask <step>`): builds each supported netcdf-c release
//! twice side by side -- "stock" (its C, as shipped) and "ncfilters" (cmake/ncfilters.cmake
//! injected) -- and tests the result. Every failure ends the run with a non-zero exit and a `harness: ...` line.

mod bench;
mod build_flags;
mod c_tests;
mod cmake_install;
mod configurations;
mod cross;
mod cross_env;
mod ctest_suite;
mod deb;
mod debian13;
mod debian_crates;
mod debian_root;
mod demo;
mod development;
mod dist;
mod docs_lists;
mod emulated_tests;
mod harness;
mod hdf5;
mod install;
mod interop;
mod layout_check;
mod leaks;
mod library_exports;
mod licences;
mod macos;
mod macos_netcdf;
mod man_page;
mod matrix;
mod netcdf;
mod netcdf_source;
mod offline;
mod parallel;
mod process;
mod provenance;
mod qualification;
mod release;
mod rotation;
mod rust_checks;
mod setup;
mod slow_checks;
mod text;
mod toolchain;
mod valgrind;
mod windows;
mod windows_libraries;
mod windows_netcdf;
mod windows_suite;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use harness::{Failure, Harness, Result, Stages};

/// Build netcdf-c (4.9.0, 4.9.2, 4.9.3, 4.10.0 and 4.10.1) stock and with ncfilters, and test the result.
///
/// Environment: NCFILTERS_NETCDF_VERSION (the release a single step builds and tests; default
/// 4.9.0), NCFILTERS_WORK (default <repo>/target/harness; <it>-<version> for the releases after 4.9.0), NCFILTERS_CACHE (download cache,
/// default ~/.cache/ncfilters), NCFILTERS_NETCDF_SOURCES (a folder of netcdf-c release archives, default
/// <repo>/../shared/netcdf-c), NCFILTERS_JOBS (default: number of cores), NCFILTERS_FUZZ_SECONDS
/// (default 20), NCFILTERS_TIER=ci (CI's part of `test`) with NCFILTERS_CI_DAY (days since 1970: replays
/// that day's part), NCFILTERS_VALGRIND_FULL=1, NCFILTERS_BENCH_RUNS, NCFILTERS_BENCH_REPS,
/// NCFILTERS_BENCH_SECONDS, NCFILTERS_BENCH_ONLY, NCFILTERS_BENCH_SYSTEM_LIBS=1,
/// NCFILTERS_BENCH_CODEC_SHARE=1.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    step: Step,
}

#[derive(Subcommand)]
enum Step {
    /// Install the apt packages, fetch netcdf-c's sources (mirror folder, apt-get source or upstream's tag archive) and the Rust dependencies
    Setup,
    /// Set up, then build netcdf-c twice: stock and with ncfilters
    Build,
    /// Build netcdf-c (the newest release, 4.10.1) with ncfilters and compress a real dataset with nccopy -F (bzip2, zstd)
    Demo,
    /// Every test: setup, the steps that need no netcdf-c build and `fuzz`, then for every release its
    /// builds and `abi` to `interop`, `install` for each, then the slow checks (with NCFILTERS_TIER=ci
    /// one slow check and two or one releases, by the UTC day), with a table of times
    Test,
    /// NCZarr startup and copy timings, stock vs ncfilters (tools/bench_nczarr.py)
    BenchNczarr,
    /// The Rust standard filters against netcdf-c's C plugins on real data (tools/bench-filters)
    BenchFilters,
    /// End to end: nccopy of ferret-datasets' real float32 files, stock with its C plugins vs ncfilters (tools/bench_nccopy.py)
    BenchNccopy,
    /// cargo test of the workspace: unit, property and C-ABI tests (no netcdf-c build needed)
    Rust,
    /// include/ headers are what cbindgen generates now (no netcdf-c build needed)
    Headers,
    /// cargo fmt --check of both workspaces: the repository's and fuzz/ (no netcdf-c build needed)
    Fmt,
    /// cargo clippy --all-targets -- -D warnings of every workspace (no netcdf-c build needed)
    Clippy,
    /// Every source file's SPDX line, THIRD-PARTY-NOTICES current, CHANGELOG.md's version, each crate's
    /// stated Rust version against its dependencies' (no netcdf-c build needed)
    Licences {
        /// Write THIRD-PARTY-NOTICES anew instead of checking it
        #[arg(long)]
        write: bool,
    },
    /// Write the ncfilters command's man page, tools/ncfilters-cli/ncfilters.1, from its clap
    /// definition (xtask's tests fail while the committed page differs; no netcdf-c build needed)
    ManPage,
    /// The release tarball: target/dist/ncfilters-<version>.tar.xz (sources, vendor/, cargo's
    /// configuration for it) and its .sha256, the same bytes on every run; refuses uncommitted changes
    Dist,
    /// Miri (nightly) on the unit tests that call no C: C heap, filter chain, registry, parsers, pure-Rust filters
    Miri,
    /// ABI check against the release's headers, a deliberately broken mirror that must fail, and
    /// a tree with a patched NCZ_VAR_INFO_T that the module's layout check must stop at configure
    Abi,
    /// Differential tests: the parser against stock libnetcdf.so, the filters against its C plugins
    Differential,
    /// netcdf-c's ctest suite on the stock and ncfilters builds, plus its unrun filter programs
    NetcdfSuite,
    /// Replaced symbols (from nm of libncfilters.a) come from libncfilters.a in libnetcdf.so
    SymbolProvenance,
    /// The C tests of c_tests/ against the stock and ncfilters builds, also under valgrind
    C,
    /// zarr-python and h5py interoperability, malformed metadata, bad plugins, damaged chunks on both builds (pytest)
    Interop,
    /// A packager's build (no libzstd found) installed by a non-root user into /tmp and with DESTDIR:
    /// files, truthful metadata, the ncfilters command, the distribution's netcdf-bin on it (pytest)
    Install,
    /// The MPI-parallel pair (ENABLE_PARALLEL4, OpenMPI HDF5), stock and ncfilters: netcdf-c's suite
    /// with run_par_test.sh on both, the parallel ABI check, and a 4-rank filter test read back by h5py
    Parallel,
    /// netcdf-c's filter-reaching ctest tests under valgrind, stock and ncfilters builds
    Valgrind,
    /// netcdf-c 4.9.3 with Debian 13's flags inside a Debian 13 root (debootstrap, cached), against
    /// Debian's HDF5 1.14.5, stock and ncfilters: the suite on both, then Debian 13's NCO and CDO on
    /// Debian's libnetcdf22 and on ncfilters' with no HDF5_PLUGIN_PATH
    Debian13,
    /// netcdf-c 4.9.3 with Debian 13's flags inside a Debian 13 i386 root (32-bit), stock and with the
    /// module of the release tarball built by the root's own cargo: the layout check and the suite,
    /// which must fail exactly what stock fails there
    #[command(name = "debian13-i386")]
    Debian13I386,
    /// netcdf-c 4.9.3 with Debian 13's flags cross-built for arm64 in a Debian 13 root (Debian's cross
    /// compilers and arm64 HDF5), stock and with the module: the layout check, and the suite under
    /// qemu-user (binfmt_misc), which must fail exactly what stock fails there
    #[command(name = "debian13-arm64")]
    Debian13Arm64,
    /// Debian's own netcdf source packages (4.10.1-1 in a Debian 13 root, 4.9.0-3 in a Debian 12 one;
    /// NCFILTERS_DEB_SUITE=trixie or bookworm picks one) built with dpkg-buildpackage, offline, stock
    /// and with ncfilters as docs/packaging.md says: dh_auto_test's counts, lintian, then NCO, CDO and
    /// GDAL in clean roots on ncfilters' .debs and on Debian's own
    Deb,
    /// Configurations distributions ship (Debian 13's flags, static libraries, NCZarr filters off),
    /// each built stock and with ncfilters: netcdf-c's suite on both, libnetcdf's exported symbols
    /// (NCFILTERS_CONFIGURATION=<name> picks one)
    Matrix,
    /// A packager's build: netcdf-c 4.10.1 with the module of the release tarball (`dist`), with no
    /// network, an empty HOME and cargo home, then its suite
    Offline,
    /// netcdf-c's main branch (the snapshot in ../shared/netcdf-c) refused without
    /// NCFILTERS_NETCDF_LIKE, then built stock and with -DNCFILTERS_NETCDF_LIKE=4.10.1: the suite on both
    Development,
    /// The shipped crates' unit, property and C-ABI tests built for x86_64-pc-windows-gnu (Debian's
    /// MinGW-w64) and run under Wine; then netcdf-c 4.10.1 and 4.9.3 (NCFILTERS_NETCDF_VERSION picks
    /// one) cross-built stock and with the module on HDF5 1.14.6: netcdf.dll's exports, files
    /// shared with Linux, and the suite under Wine on both builds
    Wine,
    /// The shipped crates' test programs built and linked for aarch64- and x86_64-apple-darwin
    /// (Zig from PyPI) in every release's cfg set; then netcdf-c 4.10.1 cross-built for both Macs
    /// stock and with the module on HDF5 2.2.0 (Debian's clang and ld64.lld on Zig's SDK stubs):
    /// libnetcdf.dylib's exports, link map and undefined symbols, install names and the plugins.
    /// Nothing here runs them
    Macos,
    /// Which stages of the whole `test` the release record (release/<version>.md) still lacks on
    /// HEAD's shipped tree (docs/releasing.md); fails while any does
    Qualification,
    /// One stage of the whole `test`, by the name its stage table gives it (`rust`, `abi 4.9.3`,
    /// `valgrind 4.10.1`, `cross s390x`), after `setup` and the builds it reads, then the table and
    /// the commit and shipped tree it ran on: rows for a release's qualification record
    Stage {
        /// The stage's name, as `cargo xtask qualification` lists it
        name: String,
    },
    /// The network-less half of `offline` (run by it inside `unshare --net`)
    #[command(name = "offline-build", hide = true)]
    OfflineBuild,
    /// The shipped crates for every architecture Debian builds netcdf on (i386, armhf, armel, arm64,
    /// ppc64el, riscv64, s390x): compiled with Debian's cross compilers and tested under qemu-user
    /// with each architecture's libblosc and libsz (NCFILTERS_CROSS_ARCHS=arm64,s390x picks some)
    Cross,
    /// The shipped crates compiled (cargo check) for every architecture of `cross` (no netcdf-c build needed)
    #[command(name = "cross-compile")]
    CrossCompile,
    /// Fuzz smoke run of every cargo-fuzz target (NCFILTERS_FUZZ_SECONDS each; no netcdf-c build)
    Fuzz,
    /// Print the definite-leak records of valgrind logs allocated by ncfilters; fail if any
    #[command(name = "classify-leaks")]
    ClassifyLeaks {
        /// valgrind log files
        #[arg(required = true)]
        logs: Vec<std::path::PathBuf>,
    },
}

/// The steps of `test` that need no netcdf-c build, run first.
const FIRST_STEPS: [Step; 7] = [
    Step::Rust,
    Step::Headers,
    Step::Licences { write: false },
    Step::Fmt,
    Step::Clippy,
    Step::Miri,
    Step::CrossCompile,
];

/// The steps of `test` run for every netcdf-c release, after its two builds.
const RELEASE_STEPS: [Step; 6] =
    [Step::Abi, Step::Differential, Step::SymbolProvenance, Step::C, Step::NetcdfSuite, Step::Interop];

// After those and `fuzz`, `test` runs `install` for every release and the slow checks
// (`slow_checks.rs`: `valgrind` and `parallel` for every release, the `matrix` configurations and
// `debian13`; one of them with `NCFILTERS_TIER=ci`, `rotation.rs`).

impl Step {
    fn name(&self) -> &'static str {
        match self {
            Step::Setup => "setup",
            Step::Build => "build",
            Step::Demo => "demo",
            Step::Test => "test",
            Step::BenchNczarr => "bench-nczarr",
            Step::BenchFilters => "bench-filters",
            Step::BenchNccopy => "bench-nccopy",
            Step::Rust => "rust",
            Step::Headers => "headers",
            Step::Fmt => "fmt",
            Step::Clippy => "clippy",
            Step::Licences { .. } => "licences",
            Step::ManPage => "man-page",
            Step::Dist => "dist",
            Step::Miri => "miri",
            Step::Abi => "abi",
            Step::Differential => "differential",
            Step::NetcdfSuite => "netcdf-suite",
            Step::SymbolProvenance => "symbol-provenance",
            Step::C => "c",
            Step::Interop => "interop",
            Step::Install => "install",
            Step::Parallel => "parallel",
            Step::Valgrind => "valgrind",
            Step::Matrix => "matrix",
            Step::Debian13 => "debian13",
            Step::Debian13I386 => "debian13-i386",
            Step::Debian13Arm64 => "debian13-arm64",
            Step::Deb => "deb",
            Step::Offline => "offline",
            Step::OfflineBuild => "offline-build",
            Step::Development => "development",
            Step::Cross => "cross",
            Step::CrossCompile => "cross-compile",
            Step::Fuzz => "fuzz",
            Step::ClassifyLeaks { .. } => "classify-leaks",
            Step::Qualification => "qualification",
            Step::Stage { .. } => "stage",
            Step::Wine => "wine",
            Step::Macos => "macos",
        }
    }

    /// Steps whose tests load the system libraries the apt packages bring (libblosc, libsz), so
    /// a new machine installs them first.
    fn needs_packages(&self) -> bool {
        matches!(self, Step::Rust | Step::Miri | Step::Fuzz | Step::BenchFilters)
    }

    /// Steps that read the two netcdf-c builds, so `build` runs before them.
    fn needs_netcdf_builds(&self) -> bool {
        matches!(
            self,
            Step::Abi
                | Step::Differential
                | Step::NetcdfSuite
                | Step::SymbolProvenance
                | Step::C
                | Step::Interop
                | Step::Valgrind
        )
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.step) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("harness: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(step: Step) -> Result {
    if let Step::ClassifyLeaks { logs } = &step {
        return leaks::classify_command(logs);
    }
    let h = Harness::from_env()?;
    let mut stages = Stages::default();
    match step {
        Step::Test => run_all_tests(&h, &mut stages),
        Step::Stage { name } => {
            let result = run_named_stage(&h, &mut stages, &name);
            print_table_and_commit(&h, &stages);
            result
        }
        _ => {
            if step.needs_packages() {
                stages.run("packages", setup::install_packages)?;
            }
            if step.needs_netcdf_builds() {
                stages.run("build", || netcdf::build(&h))?;
            }
            stages.run(step.name(), || run_step(&h, &step))
        }
    }
}

fn run_all_tests(h: &Harness, stages: &mut Stages) -> Result {
    let result = (|| {
        // First, so that the Rust tests on a new machine find the libraries they load.
        let releases = rotation::releases_for_this_run()?;
        stages.run("setup", || setup::setup_for(h, &releases))?;
        for step in &FIRST_STEPS {
            stages.run(step.name(), || run_step(h, step))?;
        }
        // Before the netcdf-c builds, while the disk is emptiest; CI then drops what no later
        // stage reads, as its disk is of unknown size.
        stages.run("fuzz", || rust_checks::test_fuzz(h))?;
        if rotation::is_ci_tier() {
            rust_checks::remove_first_steps_artefacts(h)?;
        }
        for release in &releases {
            let h = h.for_release(release);
            stages.run(&format!("build {}", release.version), || netcdf::build(&h))?;
            for step in &RELEASE_STEPS {
                stages.run(&format!("{} {}", step.name(), release.version), || run_step(&h, step))?;
            }
        }
        for release in &releases {
            let h = h.for_release(release);
            stages.run(&format!("install {}", release.version), || install::test_install(&h))?;
        }
        let slow_checks = rotation::slow_checks_for_this_run()?;
        let planned = planned_stages(&releases, &slow_checks);
        // CI's disk is of unknown size: a slow check that builds its own trees needs none of these.
        if rotation::is_ci_tier() && !slow_checks.iter().any(|check| check.reuses_release_builds()) {
            for release in &releases {
                h.for_release(release).remove_release_trees()?;
            }
        }
        for check in slow_checks {
            stages.run(&check.name(), || check.run(h))?;
        }
        if stages.names() != planned {
            return Err(Failure(format!("test ran {:?}, not its planned stages {planned:?}", stages.names())));
        }
        harness::log("all tests passed");
        Ok(())
    })();
    // The table is printed on failure too: it shows where the time went and where it stopped.
    print_table_and_commit(h, stages);
    result
}

/// The stage table, then the commit and shipped tree the stages ran on (docs/releasing.md).
fn print_table_and_commit(h: &Harness, stages: &Stages) {
    stages.print_table();
    match qualification::describe_run(&h.repo) {
        Ok(run) => println!("  ran on {run}"),
        Err(Failure(why)) => println!("  ran on an unknown commit: {why}"),
    }
}

/// A stage of the whole `test`, found by its name there.
enum NamedStage {
    Setup,
    /// `FIRST_STEPS[i]`.
    First(usize),
    Fuzz,
    Build(&'static release::Release),
    /// `RELEASE_STEPS[i]` for a release.
    OfRelease(usize, &'static release::Release),
    Install(&'static release::Release),
    Slow(&'static slow_checks::SlowCheck),
}

impl NamedStage {
    /// The stage's name in `test`'s table.
    fn name(&self) -> String {
        match self {
            NamedStage::Setup => "setup".into(),
            NamedStage::First(i) => FIRST_STEPS[*i].name().into(),
            NamedStage::Fuzz => "fuzz".into(),
            NamedStage::Build(release) => format!("build {}", release.version),
            NamedStage::OfRelease(i, release) => format!("{} {}", RELEASE_STEPS[*i].name(), release.version),
            NamedStage::Install(release) => format!("install {}", release.version),
            NamedStage::Slow(check) => check.name(),
        }
    }
}

/// The stage `test` names `name` ([`planned_stages`]).
fn named_stage(name: &str) -> Option<NamedStage> {
    if let Some(check) = slow_checks::SLOW_CHECKS.iter().find(|check| check.name() == name) {
        return Some(NamedStage::Slow(check));
    }
    if let Some(i) = FIRST_STEPS.iter().position(|step| step.name() == name) {
        return Some(NamedStage::First(i));
    }
    match name {
        "setup" => return Some(NamedStage::Setup),
        "fuzz" => return Some(NamedStage::Fuzz),
        _ => {}
    }
    let (step, version) = name.split_once(' ')?;
    let release = release::RELEASES.iter().find(|release| release.version == version)?;
    match step {
        "build" => Some(NamedStage::Build(release)),
        "install" => Some(NamedStage::Install(release)),
        _ => RELEASE_STEPS.iter().position(|s| s.name() == step).map(|i| NamedStage::OfRelease(i, release)),
    }
}

/// Runs the stage of `test` named `name` as `test` runs it, after `setup` (for its release, if
/// it has one) and the release builds it reads.
fn run_named_stage(h: &Harness, stages: &mut Stages, name: &str) -> Result {
    let stage = named_stage(name).ok_or_else(|| {
        Failure(format!("no stage of `test` is named {name:?} (`cargo xtask qualification` lists them)"))
    })?;
    let release = match &stage {
        NamedStage::Build(release) | NamedStage::OfRelease(_, release) | NamedStage::Install(release) => Some(*release),
        NamedStage::Slow(check) => check.tests_serial_builds_of(),
        NamedStage::Setup | NamedStage::First(_) | NamedStage::Fuzz => None,
    };
    stages.run("setup", || setup::setup_for(h, &release.into_iter().collect::<Vec<_>>()))?;
    if matches!(stage, NamedStage::Setup) {
        return Ok(());
    }
    let needs_build = matches!(stage, NamedStage::OfRelease(..) | NamedStage::Slow(_));
    if let Some(release) = release.filter(|_| needs_build) {
        stages.run(&format!("build {}", release.version), || netcdf::build(&h.for_release(release)))?;
    }
    stages.run(&stage.name(), || match stage {
        NamedStage::Setup => Ok(()),
        NamedStage::First(i) => run_step(h, &FIRST_STEPS[i]),
        NamedStage::Fuzz => rust_checks::test_fuzz(h),
        NamedStage::Build(release) => netcdf::build(&h.for_release(release)),
        NamedStage::OfRelease(i, release) => run_step(&h.for_release(release), &RELEASE_STEPS[i]),
        NamedStage::Install(release) => install::test_install(&h.for_release(release)),
        NamedStage::Slow(check) => check.run(h),
    })
}

/// The stages of `test` for `releases` and `slow_checks`, in `run_all_tests`' order (which it
/// checks at its end): what a release's qualification record must hold (docs/releasing.md).
fn planned_stages(
    releases: &[&'static release::Release],
    slow_checks: &[&'static slow_checks::SlowCheck],
) -> Vec<String> {
    let mut stages = vec!["setup".to_string()];
    stages.extend(FIRST_STEPS.iter().map(|step| step.name().to_string()));
    stages.push("fuzz".to_string());
    for release in releases {
        stages.push(format!("build {}", release.version));
        stages.extend(RELEASE_STEPS.iter().map(|step| format!("{} {}", step.name(), release.version)));
    }
    stages.extend(releases.iter().map(|release| format!("install {}", release.version)));
    stages.extend(slow_checks.iter().map(|check| check.name()));
    stages
}

fn run_step(h: &Harness, step: &Step) -> Result {
    match step {
        Step::Setup => setup::setup(h),
        Step::Build => netcdf::build(h),
        // The demo shows the newest release unless one is chosen.
        Step::Demo => match std::env::var_os("NCFILTERS_NETCDF_VERSION") {
            Some(_) => demo::demo(h),
            None => demo::demo(&h.for_release(release::newest())),
        },
        Step::BenchNczarr => bench::bench_nczarr(h),
        Step::BenchFilters => bench::bench_filters(h),
        Step::BenchNccopy => bench::bench_nccopy(h),
        Step::Rust => rust_checks::test_rust(h, &rotation::releases_for_this_run()?),
        Step::Headers => rust_checks::test_headers(h),
        Step::Fmt => rust_checks::test_fmt(h),
        Step::Clippy => rust_checks::test_clippy(h, &rotation::releases_for_this_run()?),
        Step::Miri => rust_checks::test_miri(h),
        Step::Licences { write: false } => licences::test_licences(h),
        Step::Licences { write: true } => licences::write_notices(h),
        Step::ManPage => man_page::write_man_page(h),
        Step::Dist => dist::make_release_tarball(h).map(|_| ()),
        // The layout check first: its configure reuses the cargo build of the ncfilters build, which
        // the ABI check then rebuilds with its own environment.
        Step::Abi => layout_check::test_layout_check(h).and_then(|()| rust_checks::test_abi(h)),
        Step::Differential => rust_checks::test_differential(h),
        Step::NetcdfSuite => netcdf::test_netcdf_suite(h),
        Step::SymbolProvenance => provenance::test_symbol_provenance(h),
        Step::C => c_tests::test_c(h),
        Step::Interop => interop::test_interop(h),
        Step::Install => install::test_install(h),
        Step::Parallel => parallel::test_parallel(h),
        Step::Valgrind => valgrind::test_valgrind(h),
        Step::Matrix => matrix::test_chosen(h),
        Step::Debian13 => debian13::test_debian13(h),
        Step::Debian13I386 => debian13::test_debian13_i386(h),
        Step::Debian13Arm64 => debian13::test_debian13_arm64(h),
        Step::Deb => deb::test_deb(h),
        Step::Offline => offline::test_offline(h),
        Step::OfflineBuild => offline::build_offline(),
        Step::Development => development::test_development(h),
        Step::Cross => cross::test_cross_chosen(h),
        Step::CrossCompile => cross::test_cross_compile(h),
        Step::Fuzz => rust_checks::test_fuzz(h),
        Step::Wine => {
            windows_netcdf::test_wine(h, &cross::shipped_packages(h)?, &windows_suite::windows_releases_chosen()?)
        }
        Step::Macos => slow_checks::SlowCheck::Macos.run(h),
        Step::Qualification => qualification::check_record(
            h,
            &planned_stages(
                &release::RELEASES.iter().collect::<Vec<_>>(),
                &slow_checks::SLOW_CHECKS.iter().collect::<Vec<_>>(),
            ),
        ),
        Step::Test | Step::Stage { .. } | Step::ClassifyLeaks { .. } => unreachable!("handled in run"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// `cargo xtask stage` finds every stage of the whole `test` by its name, each as a different
    /// stage, and no other name.
    #[test]
    fn every_stage_of_test_can_be_run_by_its_name() {
        let all = super::planned_stages(
            &super::release::RELEASES.iter().collect::<Vec<_>>(),
            &super::slow_checks::SLOW_CHECKS.iter().collect::<Vec<_>>(),
        );
        assert!(all.len() > 80 && all.contains(&"valgrind 4.9.3".to_string()), "{all:?}");
        for name in &all {
            let stage = super::named_stage(name).unwrap_or_else(|| panic!("no stage {name:?}"));
            assert_eq!(&stage.name(), name);
        }
        for unknown in ["", "abi", "abi 4.8.0", "build", "install 4.10.2-development", "valgrind", "wine 4.9.0"] {
            assert!(super::named_stage(unknown).is_none(), "{unknown:?}");
        }
    }

    /// The modules each file of xtask/src names through `crate::` (`use crate::a::…`,
    /// `crate::a::f()`, and each path of a grouped `use crate::{a, b::c}`), read by the one
    /// source parser.
    fn module_uses() -> BTreeMap<String, BTreeSet<String>> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        ncfilters_source_scan::rust_files(&src)
            .into_iter()
            .map(|path| {
                let module = path.file_stem().unwrap().to_string_lossy().into_owned();
                let used = ncfilters_source_scan::paths_from(&path, &["crate"])
                    .into_iter()
                    .map(|(_, name)| name)
                    .filter(|name| *name != module)
                    .collect();
                (module, used)
            })
            .collect()
    }

    #[test]
    fn the_modules_use_each_other_without_a_cycle() {
        let uses = module_uses();
        assert!(uses["netcdf"].contains("build_flags"), "the parse sees plain paths");
        // Kahn's algorithm: a module is placed once every module it uses is placed.
        let mut placed = BTreeSet::new();
        loop {
            let ready: Vec<&String> = uses
                .iter()
                .filter(|(module, used)| {
                    !placed.contains(*module) && used.iter().all(|u| placed.contains(u) || !uses.contains_key(u))
                })
                .map(|(module, _)| module)
                .collect();
            if ready.is_empty() {
                break;
            }
            placed.extend(ready.into_iter().cloned());
        }
        let cyclic: Vec<String> = uses
            .iter()
            .filter(|(module, _)| !placed.contains(*module))
            .map(|(module, used)| format!("{module} uses {used:?}"))
            .collect();
        assert!(cyclic.is_empty(), "modules in or above an import cycle:\n{}", cyclic.join("\n"));
    }
}
