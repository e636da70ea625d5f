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
    for package in [".", "runtime", "filters", "core", "plugins/common"] {
        let object = h.repo.join(package).join("a.o");
        if std::fs::metadata(&object).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let _ = std::fs::remove_file(&object);
        }
    }
}

/// Debian's LLVM 14: `ld64.lld`, a linker that takes Apple ld64's options, and `llvm-nm`.
const LLVM_PACKAGES: [&str; 2] = ["lld-14", "llvm-14"];

/// The module's macOS link rules (`ncfilters_hidden_symbols_of(Apple ...)` in
/// cmake/ncfilters_platform.cmake) given to LLVM's ld64 (Zig's own linker takes none of them): a
/// dylib of one object holding a netcdf-c function, Rust's kinds of symbol and a netcdf-c function
/// to hide exports only the netcdf-c function, and the link writes its map. Part of
/// `cross-compile`; Apple's own linker is not here.
pub fn check_export_rules(h: &Harness) -> Result {
    crate::setup::install_apt_packages(&LLVM_PACKAGES)?;
    let bin = zig_tools(h)?;
    let dir = h.repo.join("target/macos-export-rules");
    let _ = std::fs::remove_dir_all(&dir);
    create_dir_all(&dir)?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| crate::harness::Failure(format!("{name}: {e}")))
    };
    let exported = "nc_public";
    let hidden = ["_ZN3foo3barE", "_RNvC3foo3bar", "__rust_alloc", "rust_eh_personality", "NCZ_internal"];
    let source: String = std::iter::once(exported)
        .chain(hidden)
        .enumerate()
        .map(|(i, name)| format!("int {name}(void) {{ return {i}; }}\n"))
        .collect();
    write("a.c", &source)?;
    let python = bin.join("python");
    run(cmd(&python, ["-m", "ziglang", "cc", "-target", "aarch64-macos", "-c", "a.c", "-o", "a.o"]).current_dir(&dir))?;
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/ncfilters_platform.cmake");
    write(
        "rules.cmake",
        &format!(
            "include(\"{}\")\nncfilters_hidden_symbols_of(Apple hidden.txt a.map NCZ_internal options)\n\
             message(\"options: ${{options}}\")\n",
            module.display()
        ),
    )?;
    let out = Command::new("cmake").current_dir(&dir).args(["-P", "rules.cmake"]).output();
    let out = out.map_err(|e| crate::harness::Failure(format!("cmake: {e}")))?;
    let printed = String::from_utf8_lossy(&out.stderr).into_owned();
    let Some(options) = printed.lines().find_map(|line| line.strip_prefix("options: ")) else {
        fail!("cmake/ncfilters_platform.cmake gave no options for Apple:\n{printed}");
    };
    // CMake's `LINKER:a,b` is the linker's arguments `a` and `b`.
    let linker_args: Vec<&str> =
        options.split(';').flat_map(|option| option.strip_prefix("LINKER:").unwrap_or(option).split(',')).collect();
    let mut link = cmd("ld64.lld-14", ["-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", "-dylib"]);
    link.current_dir(&dir).args(["-o", "liba.dylib", "a.o", "-undefined", "dynamic_lookup"]).args(&linker_args);
    run(&mut link)?;
    let symbols = crate::process::output(cmd("llvm-nm-14", ["-gU", "liba.dylib"]).current_dir(&dir))?;
    let defined: Vec<&str> = symbols.lines().filter_map(|line| line.split_whitespace().nth(2)).collect();
    if !defined.contains(&format!("_{exported}").as_str()) {
        fail!("ld64.lld with the module's rules hid _{exported} too: {defined:?}");
    }
    let leaked: Vec<&&str> = defined.iter().filter(|name| hidden.iter().any(|h| name.ends_with(h))).collect();
    if !leaked.is_empty() {
        fail!("ld64.lld with the module's rules ({}) exported {leaked:?}", linker_args.join(" "));
    }
    if !dir.join("a.map").is_file() {
        fail!("ld64.lld with the module's rules wrote no link map");
    }
    println!(
        "PASS macOS link rules: ld64.lld ({}) exports _{exported} and hides {}",
        linker_args.join(" "),
        hidden.join(", ")
    );
    Ok(())
}

/// The virtualenv's `bin/` with `cargo-zigbuild` and `python -m ziglang` (which it finds on PATH).
fn zig_tools(h: &Harness) -> Result<PathBuf> {
    crate::setup::pypi_tools(h, "zig", &PYTHON_PACKAGES, "cargo-zigbuild")
}
