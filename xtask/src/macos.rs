// SPDX-License-Identifier: BSD-3-Clause
//! macOS, as conda-forge (osx-64, osx-arm64) and Homebrew build netcdf-c: the shipped crates
//! compiled and linked for both Mac architectures with Zig as the C compiler and linker (PyPI's
//! `ziglang`, which carries the SDK stubs, driven by `cargo-zigbuild`), part of `cross-compile`.
//! Nothing here runs a Mach-O program: compiled and linked, not run.

use std::path::PathBuf;
use std::time::Instant;

use crate::harness::{create_dir_all, log, Harness, Result};
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
        let mut cargo = cmd(bin.join("cargo-zigbuild"), ["zigbuild", "--locked", "--target", triple]);
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        cargo
            .args(packages)
            .current_dir(&h.repo)
            .env("PATH", path)
            .env("CARGO_TARGET_DIR", h.repo.join("target/macos"))
            // The Rust targets' own deployment targets (11.0, 10.12): Zig's libc headers are
            // for the macOS releases it supports, and 10.13 finds none of them for arm64.
            .env_remove("MACOSX_DEPLOYMENT_TARGET")
            .env("RUSTFLAGS", "-D warnings");
        let log_file = h.work_file(&format!("macos-{triple}.log"));
        create_dir_all(&h.work)?;
        let built = succeeds_into_log(&mut cargo, &log_file, false)?;
        if !built {
            crate::text::print_matching(&log_file, &["error", "warning", "-->"], 60);
        }
        rows.push((triple, built, started.elapsed().as_secs()));
    }
    Ok(rows)
}

/// The virtualenv's `bin/` with `cargo-zigbuild` and `python -m ziglang` (which it finds on PATH).
fn zig_tools(h: &Harness) -> Result<PathBuf> {
    crate::setup::pypi_tools(h, "zig", &PYTHON_PACKAGES, "cargo-zigbuild")
}
