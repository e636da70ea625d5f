// SPDX-License-Identifier: BSD-3-Clause
//! macOS, as conda-forge (osx-64, osx-arm64) and Homebrew build netcdf-c: the shipped crates
//! compiled and linked for both Mac architectures with Zig as the C compiler and linker (PyPI's
//! `ziglang`, which carries the SDK stubs, driven by `cargo-zigbuild`), part of `cross-compile`.
//! Nothing here runs a Mach-O program: compiled and linked, not run.

use std::collections::BTreeSet;
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
    let mut wrong = Vec::new();
    for dylib in &dylibs {
        wrong.extend(loadable_problems(&release_dir.join(dylib), triple)?);
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

/// `file` (a dylib or a symbolic link to one) is found through the loader's rpath, as netcdf-c's
/// own libraries and plugins are (its install name is `@rpath/<a name of the file beside it>`), and
/// runs on the macOS the build was for (`deployment_target`).
pub fn check_loadable(file: &Path, triple: &str) -> Result {
    let problems = loadable_problems(file, triple)?;
    if !problems.is_empty() {
        fail!("{}", problems.join("; "));
    }
    Ok(())
}

fn loadable_problems(file: &Path, triple: &str) -> Result<Vec<String>> {
    let otool = |option: &str| crate::process::output(cmd(format!("llvm-otool-{LLVM_VERSION}"), [option]).arg(file));
    let mut problems = Vec::new();
    let printed = otool("-D")?;
    let named = install_name(&printed).and_then(|name| name.strip_prefix("@rpath/"));
    let beside = |name: &str| file.with_file_name(name).canonicalize().ok();
    if named.is_none() || named.and_then(beside) != file.canonicalize().ok() {
        problems.push(format!("{}: install name {}", file.display(), printed.trim()));
    }
    let minimum = minimum_macos(&otool("-l")?);
    if minimum.as_deref() != Some(deployment_target(triple)) {
        problems.push(format!("{}: for macOS {minimum:?}, not {}", file.display(), deployment_target(triple)));
    }
    Ok(problems)
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
    crate::process::with_first_on_path(&mut cargo, &zig.bin)
        .current_dir(&h.repo)
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

/// The LLVM of the Mac tools: Debian 12's newest. Its `ld64.lld` takes the SDK's stubs, which 14's
/// refuses.
pub const LLVM_VERSION: &str = "19";

/// Debian's LLVM: `ld64.lld`, a linker that takes Apple ld64's options, and the Mach-O tools
/// (`llvm-nm`, `llvm-otool`).
const LLVM_PACKAGES: [&str; 2] = ["lld-19", "llvm-19"];

/// Debian's clang, the C and C++ compiler of [`clang_sdk`]'s SDK.
pub const CLANG: &str = "clang-19";
pub const CLANG_CXX: &str = "clang++-19";

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
    let hidden = [
        "_ZN3foo3barE",
        "_RNvC3foo3bar",
        "__rust_alloc",
        "rust_eh_personality",
        "__isOSVersionAtLeast",
        "NCZ_internal",
    ];
    let source: String = std::iter::once(exported)
        .chain(hidden)
        .enumerate()
        .map(|(i, name)| format!("int {name}(void) {{ return {i}; }}\n"))
        .collect();
    write("a.c", &source)?;
    let python = bin.join("python");
    run(cmd(&python, ["-m", "ziglang", "cc", "-target", "aarch64-macos.11.0", "-c", "a.c", "-o", "a.o"])
        .current_dir(&dir))?;
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
    let mut link = cmd(
        format!("ld64.lld-{LLVM_VERSION}"),
        ["-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", "-dylib"],
    );
    link.current_dir(&dir).args(["-o", "liba.dylib", "a.o", "-undefined", "dynamic_lookup"]).args(&linker_args);
    run(&mut link)?;
    let symbols =
        crate::process::output(cmd(format!("llvm-nm-{LLVM_VERSION}"), ["-gU", "liba.dylib"]).current_dir(&dir))?;
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

/// The SDK of [`clang_sdk`]: Zig's stubs as clang and ld64.lld take them.
pub struct ClangSdk {
    /// Its root, clang's `-isysroot` and rustc's `SDKROOT`.
    pub root: PathBuf,
}

impl ClangSdk {
    /// What libSystem exports, per its stub (for any Mac), without Mach-O's leading underscore.
    pub fn exports(&self) -> Result<BTreeSet<String>> {
        Ok(stub_exports(&crate::harness::read_to_string(&self.root.join("usr/lib/libSystem.tbd"))?))
    }
}

/// [`zig_sdk`]'s SDK as Debian's clang and ld64.lld take it (`target/macos-sdk/clang/MacOSX.sdk`),
/// with them installed. Zig's libSystem stub lists arm64e (and Zig's own `arm64e.x1`) where
/// Apple's lists arm64 too: ld64.lld refuses `arm64e.x1` ("unknown architecture") and finds no
/// arm64 symbol, so the copy names arm64e's entries arm64 and `arm64e.x1`'s arm64e. libc, libm,
/// libpthread and libdl are libSystem, as in Apple's SDK.
pub fn clang_sdk(h: &Harness) -> Result<ClangSdk> {
    crate::setup::install_apt_packages(&[LLVM_PACKAGES.as_slice(), &[CLANG]].concat())?;
    let zig = zig_tools(h)?;
    let root = h.repo.join("target/macos-sdk/clang/MacOSX.sdk");
    crate::harness::remove_dir_all_if_exists(&root)?;
    create_dir_all(&root.join("usr/lib"))?;
    let link = |from: &Path, to: &str| {
        std::os::unix::fs::symlink(from, root.join(to))
            .map_err(|e| crate::harness::Failure(format!("{} -> {}: {e}", to, from.display())))
    };
    let stub = crate::harness::read_to_string(&zig.sdk.join("usr/lib/libSystem.tbd"))?;
    crate::harness::write_file(&root.join("usr/lib/libSystem.tbd"), &stub_for_lld(&stub))?;
    for alias in ["libc", "libm", "libpthread", "libdl"] {
        link(Path::new("libSystem.tbd"), &format!("usr/lib/{alias}.tbd"))?;
    }
    crate::harness::write_file(&root.join("usr/lib/libiconv.tbd"), LIBICONV_STUB)?;
    link(&zig.sdk.join("usr/include"), "usr/include")?;
    link(&zig.sdk.join("SDKSettings.json"), "SDKSettings.json")?;
    Ok(ClangSdk { root })
}

/// macOS's libiconv, which Rust's std names at every link (`-liconv`) and Zig's stubs lack: a stub
/// of its functions.
const LIBICONV_STUB: &str = "--- !tapi-tbd\ntbd-version:     4\ntargets:         [ x86_64-macos, arm64-macos ]\n\
    install-name:    '/usr/lib/libiconv.2.dylib'\ncurrent-version: 7\ncompatibility-version: 7\nexports:\n\
    \x20 - targets:         [ x86_64-macos, arm64-macos ]\n    symbols:         [ _iconv, _iconv_close, _iconv_open ]\n...\n";

/// Zig's libSystem stub with arm64 where it has arm64e, and arm64e where it has `arm64e.x1`.
fn stub_for_lld(stub: &str) -> String {
    stub.replace("arm64e-", "arm64-").replace("arm64e.x1-", "arm64e-")
}

/// The symbols of a text stub's (`.tbd`) `exports` and `reexports` lists, for any of its targets,
/// without Mach-O's leading underscore.
fn stub_exports(stub: &str) -> BTreeSet<String> {
    let mut symbols = BTreeSet::new();
    let (mut exported, mut in_list) = (false, false);
    for line in stub.lines() {
        if !line.starts_with(' ') {
            exported = line == "exports:" || line == "reexports:";
            in_list = false;
            continue;
        }
        let mut rest = line;
        if !in_list {
            let Some(list) = rest.find("symbols:").and_then(|at| rest[at..].find('[').map(|open| at + open + 1)) else {
                continue;
            };
            rest = &rest[list..];
            in_list = exported;
        }
        if !exported {
            continue;
        }
        let (items, closed) = rest.split_once(']').map_or((rest, false), |(items, _)| (items, true));
        let names = items.split(',').map(|item| item.trim().trim_matches('\'')).filter(|name| !name.is_empty());
        symbols.extend(names.map(|name| name.strip_prefix('_').unwrap_or(name).to_string()));
        in_list = !closed;
    }
    symbols
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
    fn the_stub_s_exports_are_its_exported_and_reexported_symbols() {
        let stub = "--- !tapi-tbd\ntargets:         [ x86_64-macos, arm64e-macos,\n                   arm64e.x1-macos ]\n\
                    exports:\n  - targets:         [ x86_64-macos, arm64e-macos ]\n    symbols:         [ _malloc, '$ld$hide$os10.4$_x',\n\
                    \x20                      _free ]\n    weak-symbols:    [ _w ]\nundefineds:\n  - targets: [ x86_64-macos ]\n\
                    \x20   symbols: [ _imported ]\nreexports:\n  - targets: [ arm64e.x1-macos ]\n    symbols: [ dyld_stub_binder ]\n...\n";
        let names: Vec<String> = stub_exports(stub).into_iter().collect();
        assert_eq!(names, ["$ld$hide$os10.4$_x", "dyld_stub_binder", "free", "malloc", "w"]);
        let for_lld = stub_for_lld(stub);
        assert!(for_lld.contains("[ x86_64-macos, arm64-macos,\n                   arm64e-macos ]"), "{for_lld}");
        assert!(!for_lld.contains("x1"), "{for_lld}");
        assert_eq!(stub_exports(LIBICONV_STUB).into_iter().collect::<Vec<_>>(), ["iconv", "iconv_close", "iconv_open"]);
    }

    #[test]
    fn the_sdk_version_is_read_from_zig_s_settings() {
        assert_eq!(sdk_version("{\"Version\":\"27.0\"}").as_deref(), Some("27.0"));
        assert_eq!(sdk_version("{}"), None);
    }
}
