// SPDX-License-Identifier: BSD-3-Clause
//! macOS, as conda-forge (osx-64, osx-arm64) and Homebrew build netcdf-c: the shipped crates
//! compiled and linked for both Mac architectures with Zig as the C compiler and linker (PyPI's
//! `ziglang`, which carries the SDK stubs, driven by `cargo-zigbuild`), part of `cross-compile`.
//! Nothing here runs a Mach-O program: compiled and linked, not run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::harness::{create_dir_all, fail, log, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};

/// Rust's targets for the two Macs.
pub const TRIPLES: [&str; 2] = ["aarch64-apple-darwin", "x86_64-apple-darwin"];

/// Zig and cargo-zigbuild from PyPI, pinned.
const PYTHON_PACKAGES: [&str; 2] = ["ziglang==0.17.1", "cargo-zigbuild==0.24.1"];

/// Each Mac target's shipped crates built (libncfilters.a, the cdylib, the plugins, the
/// `ncfilters` command), every warning an error: (triple, built, seconds).
pub fn build_shipped_crates(h: &Harness, packages: &[String]) -> Result<Vec<(&'static str, bool, u64)>> {
    let bin = zig_tools(h)?;
    run(cmd("rustup", ["target", "add"]).args(TRIPLES))?;
    let mut rows = Vec::new();
    for triple in TRIPLES {
        let started = Instant::now();
        log(format!("{triple}: cargo zigbuild of the shipped crates (warnings are errors)"));
        let mut cargo = zigbuild(h, &bin, triple, "target/macos");
        cargo.args(packages);
        let built = succeeds_logged(h, &mut cargo, &format!("macos-{triple}.log"))?;
        rows.push((triple, built, started.elapsed().as_secs()));
    }
    Ok(rows)
}

/// `cargo xtask macos` (a slow check): the shipped crates' test programs (unit, property and
/// C-ABI tests) built and linked for both Macs in every release's cfg set, warnings as errors.
/// Nothing runs them: nothing here runs Mach-O.
pub fn build_tests_for_every_release(h: &Harness, packages: &[String]) -> Result {
    let bin = zig_tools(h)?;
    run(cmd("rustup", ["target", "add"]).args(TRIPLES))?;
    let mut failed = Vec::new();
    for release in crate::release::RELEASES.iter() {
        for triple in TRIPLES {
            let started = Instant::now();
            log(format!("{triple}, netcdf-c {}'s cfg set: the shipped crates' test programs", release.version));
            let mut cargo = zigbuild(h, &bin, triple, "target/macos-tests");
            cargo.arg("--tests").args(packages).env("NCFILTERS_NETCDF_VERSION", release.version);
            let built = succeeds_logged(h, &mut cargo, &format!("macos-tests-{triple}-{}.log", release.version))?;
            let outcome = if built { "built and linked" } else { "FAILED" };
            println!("{triple}, {}: test programs {outcome} ({} s)", release.version, started.elapsed().as_secs());
            if !built {
                failed.push(format!("{triple} {}", release.version));
            }
        }
    }
    if !failed.is_empty() {
        fail!("the test programs did not build for {}", failed.join(", "));
    }
    Ok(())
}

/// `cargo zigbuild --release` for `triple` into `target_dir`, warnings as errors.
fn zigbuild(h: &Harness, bin: &Path, triple: &str, target_dir: &str) -> Command {
    let mut cargo = cmd(bin.join("cargo-zigbuild"), ["zigbuild", "--locked", "--release", "--target", triple]);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    cargo
        .current_dir(&h.repo)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", h.repo.join(target_dir))
        // The Rust targets' own deployment targets (11.0, 10.12): Zig's libc headers are
        // for the macOS releases it supports, and 10.13 finds none of them for arm64.
        .env_remove("MACOSX_DEPLOYMENT_TARGET")
        .env("RUSTFLAGS", "-D warnings");
    cargo
}

/// Runs `cargo` into the log `name`; its errors and warnings shown when it fails.
fn succeeds_logged(h: &Harness, cargo: &mut Command, name: &str) -> Result<bool> {
    let log_file = h.work_file(name);
    create_dir_all(&h.work)?;
    let built = succeeds_into_log(cargo, &log_file, false)?;
    remove_empty_objects_left_by_zig(h);
    if !built {
        crate::text::print_matching(&log_file, &["error", "warning", "-->"], 60);
    }
    Ok(built)
}

/// Zig's `cc`, which the cc crate runs to learn what compiler it is, leaves an empty `a.o` in the
/// folder of each package whose build script compiles C: removed, so the work tree stays clean.
fn remove_empty_objects_left_by_zig(h: &Harness) {
    for package in [".", "core", "plugins/common"] {
        let object = h.repo.join(package).join("a.o");
        if std::fs::metadata(&object).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let _ = std::fs::remove_file(&object);
        }
    }
}

/// The virtualenv's `bin/` with `cargo-zigbuild` and `python -m ziglang` (which it finds on PATH).
fn zig_tools(h: &Harness) -> Result<PathBuf> {
    crate::setup::pypi_tools(h, "zig", &PYTHON_PACKAGES, "cargo-zigbuild")
}
