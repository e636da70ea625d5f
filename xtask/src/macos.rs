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
    let zig = zig_tools(h)?;
    run(cmd("rustup", ["target", "add"]).args(TRIPLES))?;
    let mut rows = Vec::new();
    for triple in TRIPLES {
        let started = Instant::now();
        log(format!("{triple}: cargo zigbuild of the shipped crates (warnings are errors)"));
        let mut cargo = zigbuild(h, &zig, triple, "target/macos");
        cargo.args(packages);
        let built = succeeds_logged(h, &mut cargo, &format!("macos-{triple}.log"))?;
        if built {
            check_dylibs(&h.repo.join("target/macos").join(triple).join("release"), triple)?;
        }
        rows.push((triple, built, started.elapsed().as_secs()));
    }
    Ok(rows)
}

/// Every dylib the build wrote (the plugins, libncfilters) is found through the loader's rpath, as
/// netcdf-c's own libraries and plugins are (its install name is `@rpath/<its file name>`), and
/// runs on the macOS the build was for (`deployment_target`).
fn check_dylibs(release_dir: &Path, triple: &str) -> Result {
    crate::setup::install_apt_packages(&LLVM_PACKAGES)?;
    let entries = std::fs::read_dir(release_dir)
        .map_err(|e| crate::harness::Failure(format!("{}: {e}", release_dir.display())))?;
    let mut dylibs: Vec<String> = entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".dylib"))
        .collect();
    dylibs.sort_unstable();
    if dylibs.is_empty() {
        fail!("{} holds no dylib", release_dir.display());
    }
    let otool = |args: [&str; 2]| crate::process::output(cmd("llvm-otool-14", args).current_dir(release_dir));
    let mut wrong = Vec::new();
    for dylib in &dylibs {
        let printed = otool(["-D", dylib])?;
        if install_name(&printed) != Some(format!("@rpath/{dylib}").as_str()) {
            wrong.push(format!("{dylib}: install name {}", printed.trim()));
        }
        let minimum = minimum_macos(&otool(["-l", dylib])?);
        if minimum.as_deref() != Some(deployment_target(triple)) {
            wrong.push(format!("{dylib}: for macOS {minimum:?}, not {}", deployment_target(triple)));
        }
    }
    if !wrong.is_empty() {
        fail!("{}", wrong.join("; "));
    }
    println!(
        "{triple}: {} dylibs, each with install name @rpath/<file>, for macOS {} on",
        dylibs.len(),
        deployment_target(triple)
    );
    Ok(())
}

/// The oldest macOS of `llvm-otool -l`'s load commands: LC_BUILD_VERSION's `minos`, or
/// LC_VERSION_MIN_MACOSX's `version` (x86_64 before 10.14).
fn minimum_macos(load_commands: &str) -> Option<String> {
    let mut key = None;
    for line in load_commands.lines().map(str::trim) {
        match line {
            "cmd LC_BUILD_VERSION" => key = Some("minos "),
            "cmd LC_VERSION_MIN_MACOSX" => key = Some("version "),
            _ => {}
        }
        if let Some(value) = key.and_then(|key| line.strip_prefix(key)) {
            return Some(value.trim().to_string());
        }
    }
    None
}

/// The install name `llvm-otool -D` printed: the line after the file's name.
fn install_name(printed: &str) -> Option<&str> {
    let mut lines = printed.lines().skip(1);
    let name = lines.next()?.trim();
    lines.next().is_none().then_some(name)
}

/// `cargo xtask macos` (a slow check): the shipped crates' test programs (unit, property and
/// C-ABI tests) built and linked for both Macs in every release's cfg set, warnings as errors.
/// Nothing runs them: nothing here runs Mach-O.
pub fn build_tests_for_every_release(h: &Harness, packages: &[String]) -> Result {
    let zig = zig_tools(h)?;
    run(cmd("rustup", ["target", "add"]).args(TRIPLES))?;
    let mut failed = Vec::new();
    for release in crate::release::RELEASES.iter() {
        for triple in TRIPLES {
            let started = Instant::now();
            log(format!("{triple}, netcdf-c {}'s cfg set: the shipped crates' test programs", release.version));
            let mut cargo = zigbuild(h, &zig, triple, "target/macos-tests");
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
fn zigbuild(h: &Harness, zig: &ZigTools, triple: &str, target_dir: &str) -> Command {
    let mut cargo = cmd(zig.bin.join("cargo-zigbuild"), ["zigbuild", "--locked", "--release", "--target", triple]);
    let path = format!("{}:{}", zig.bin.display(), std::env::var("PATH").unwrap_or_default());
    cargo
        .current_dir(&h.repo)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", h.repo.join(target_dir))
        // Without it Zig builds for the newest macOS it knows (minos 15.0 in LC_BUILD_VERSION).
        .env("MACOSX_DEPLOYMENT_TARGET", deployment_target(triple))
        // rustc asks xcrun for the SDK otherwise, and warns when there is none.
        .env("SDKROOT", &zig.sdk)
        .env("RUSTFLAGS", "-D warnings");
    cargo
}

/// The oldest macOS a build for `triple` runs on: the Rust target's own minimum (rustc's default).
pub fn deployment_target(triple: &str) -> &'static str {
    if triple.starts_with("aarch64") {
        "11.0"
    } else {
        "10.12"
    }
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
    let bin = zig_tools(h)?.bin;
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

/// Zig and cargo-zigbuild (`bin`, their venv's bin directory), and the SDK made of Zig's stubs.
struct ZigTools {
    bin: PathBuf,
    sdk: PathBuf,
}

fn zig_tools(h: &Harness) -> Result<ZigTools> {
    let bin = crate::setup::pypi_tools(h, "zig", &PYTHON_PACKAGES, "cargo-zigbuild")?;
    let sdk = zig_sdk(h, &bin)?;
    Ok(ZigTools { bin, sdk })
}

/// Zig's macOS stubs (`libc/darwin/libSystem.tbd`, the `any-darwin-any` headers) laid out as the SDK
/// that rustc, clang and cargo-zigbuild look for at `SDKROOT`, with an `SDKSettings.json` clang
/// parses (Zig's own lacks `MaximumDeploymentTarget`). conda-forge points `SDKROOT` at Apple's SDK.
fn zig_sdk(h: &Harness, bin: &Path) -> Result<PathBuf> {
    let find = "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'lib', 'libc'))";
    let libc = PathBuf::from(crate::process::output(&mut cmd(bin.join("python"), ["-c", find]))?.trim());
    let zig_settings = crate::harness::read_to_string(&libc.join("darwin/SDKSettings.json"))?;
    let Some(version) = sdk_version(&zig_settings) else {
        fail!("{}: no Version", libc.join("darwin/SDKSettings.json").display());
    };
    let sdk = h.repo.join("target/macos-sdk/MacOSX.sdk");
    crate::harness::remove_dir_all_if_exists(&sdk)?;
    create_dir_all(&sdk.join("usr/lib"))?;
    create_dir_all(&sdk.join("System/Library/Frameworks"))?;
    let link = |from: PathBuf, to: &str| {
        std::os::unix::fs::symlink(&from, sdk.join(to))
            .map_err(|e| crate::harness::Failure(format!("{} -> {}: {e}", to, from.display())))
    };
    link(libc.join("darwin/libSystem.tbd"), "usr/lib/libSystem.tbd")?;
    link(libc.join("include/any-darwin-any"), "usr/include")?;
    let settings = format!(
        "{{\"CanonicalName\":\"macosx{version}\",\"Version\":\"{version}\",\"MaximumDeploymentTarget\":\"{version}.99\"}}\n"
    );
    crate::harness::write_file(&sdk.join("SDKSettings.json"), &settings)?;
    Ok(sdk)
}

/// The `Version` of an `SDKSettings.json`.
fn sdk_version(settings: &str) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(settings).ok()?;
    Some(json.get("Version")?.as_str()?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_name_is_the_line_after_the_file() {
        let printed = "lib__nch5zstd.dylib:\n@rpath/lib__nch5zstd.dylib\n";
        assert_eq!(install_name(printed), Some("@rpath/lib__nch5zstd.dylib"));
        assert_eq!(install_name("a.dylib:\n"), None, "no LC_ID_DYLIB");
        assert_eq!(install_name("a.dylib:\n@rpath/a.dylib\n@rpath/b.dylib\n"), None, "two");
    }

    #[test]
    fn the_minimum_macos_is_read_from_either_load_command() {
        let arm = "Load command 9\n      cmd LC_BUILD_VERSION\n  cmdsize 32\n platform macos\n      sdk 27.0\n    minos 11.0\n";
        assert_eq!(minimum_macos(arm).as_deref(), Some("11.0"));
        let intel = "Load command 1\n  version 0.0\n      cmd LC_VERSION_MIN_MACOSX\n  cmdsize 16\n  version 10.12\n      sdk 27.0\n";
        assert_eq!(minimum_macos(intel).as_deref(), Some("10.12"), "not the version of an earlier command");
        assert_eq!(minimum_macos("      cmd LC_SEGMENT_64\n"), None);
    }

    #[test]
    fn the_sdk_version_is_read_from_zig_s_settings() {
        assert_eq!(sdk_version("{\"Version\":\"27.0\"}").as_deref(), Some("27.0"));
        assert_eq!(sdk_version("{}"), None);
    }
}
