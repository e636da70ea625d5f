// SPDX-License-Identifier: BSD-3-Clause
//! `cross` and `cross-compile`: the shipped crates on every architecture Debian builds netcdf on
//! (its release architectures, and i386). Each is compiled with Debian's cross compiler
//! (`gcc-<triplet>`, `libc6-dev-<arch>-cross`) and its tests run under qemu-user against that
//! architecture's own Debian 13 libraries (glibc, libblosc, libsz and what they load), fetched
//! with a private apt state into the cache: nothing of the machine's apt configuration changes.
//!
//! qemu-user is Debian 13's (10.0, static): Debian 12's 7.2 aborts a forked child of a threaded
//! process (`tests/fork.rs`) on an assertion of its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::harness::{create_dir_all, fail, log, Harness, Result};
use crate::process::{cmd, output, run, succeeds_into_log, succeeds_quietly};
use crate::text::print_tail;

/// How a target's standard library is had.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Std {
    /// `rustup target add`.
    Rustup,
    /// Built from the nightly toolchain's rust-src (`-Zbuild-std`): rustup ships no std for it.
    BuiltByNightly,
}

/// One architecture.
pub struct Target {
    /// Debian's name (`dpkg --print-architecture`).
    pub arch: &'static str,
    /// Rust's target triple (the one Debian's rustc uses for the architecture).
    pub triple: &'static str,
    /// The GNU triplet of Debian's cross compiler and its sysroot, `/usr/<gnu>`.
    pub gnu: &'static str,
    /// qemu-user's program for it.
    pub qemu: &'static str,
    /// Its programs' ELF header: 64-bit, big-endian, `e_machine` (what binfmt_misc matches).
    pub elf: Elf,
    pub std: Std,
    /// What sets it apart, for the table.
    pub kind: &'static str,
}

/// The fields of an ELF header that tell one architecture's programs from another's.
#[derive(Clone, Copy)]
pub struct Elf {
    pub is_64_bit: bool,
    pub big_endian: bool,
    pub machine: u16,
}

/// The architectures: Debian 13's release architectures but amd64 (the machine's own), and i386.
pub static TARGETS: [Target; 7] = [
    Target {
        arch: "i386",
        triple: "i686-unknown-linux-gnu",
        gnu: "i686-linux-gnu",
        qemu: "qemu-i386",
        elf: Elf { is_64_bit: false, big_endian: false, machine: 3 },
        std: Std::Rustup,
        kind: "32-bit",
    },
    Target {
        arch: "armhf",
        triple: "armv7-unknown-linux-gnueabihf",
        gnu: "arm-linux-gnueabihf",
        qemu: "qemu-arm",
        elf: Elf { is_64_bit: false, big_endian: false, machine: 40 },
        std: Std::Rustup,
        kind: "32-bit",
    },
    Target {
        arch: "armel",
        triple: "armv5te-unknown-linux-gnueabi",
        gnu: "arm-linux-gnueabi",
        qemu: "qemu-arm",
        elf: Elf { is_64_bit: false, big_endian: false, machine: 40 },
        std: Std::BuiltByNightly,
        kind: "32-bit, no 64-bit atomics",
    },
    Target {
        arch: "arm64",
        triple: "aarch64-unknown-linux-gnu",
        gnu: "aarch64-linux-gnu",
        qemu: "qemu-aarch64",
        elf: Elf { is_64_bit: true, big_endian: false, machine: 183 },
        std: Std::Rustup,
        kind: "64-bit",
    },
    Target {
        arch: "ppc64el",
        triple: "powerpc64le-unknown-linux-gnu",
        gnu: "powerpc64le-linux-gnu",
        qemu: "qemu-ppc64le",
        elf: Elf { is_64_bit: true, big_endian: false, machine: 21 },
        std: Std::Rustup,
        kind: "64-bit",
    },
    Target {
        arch: "riscv64",
        triple: "riscv64gc-unknown-linux-gnu",
        gnu: "riscv64-linux-gnu",
        qemu: "qemu-riscv64",
        elf: Elf { is_64_bit: true, big_endian: false, machine: 243 },
        std: Std::Rustup,
        kind: "64-bit",
    },
    Target {
        arch: "s390x",
        triple: "s390x-unknown-linux-gnu",
        gnu: "s390x-linux-gnu",
        qemu: "qemu-s390x",
        elf: Elf { is_64_bit: true, big_endian: true, machine: 22 },
        std: Std::Rustup,
        kind: "64-bit, big-endian",
    },
];

/// The target of Debian architecture `arch`.
pub fn target(arch: &str) -> Result<&'static Target> {
    match TARGETS.iter().find(|t| t.arch == arch) {
        Some(target) => Ok(target),
        None => {
            let known: Vec<&str> = TARGETS.iter().map(|t| t.arch).collect();
            fail!("no cross target {arch:?}; the targets are {}", known.join(", "))
        }
    }
}

/// The Debian suites whose libraries the tests run with, in order of preference: Debian 12's glibc
/// is the one the cross compilers (`libc6-dev-<arch>-cross`) build against; Debian 13 has
/// riscv64, which Debian 12 lacks. A suite the registry cannot serve an architecture's packages
/// from (some of Debian 13's point-release packages are missing there for armel, ppc64el and
/// s390x) gives way to the next.
const RUNTIME_SUITES: [&str; 2] = ["bookworm", "trixie"];

/// The suite of the qemu-user the tests run under.
const QEMU_SUITE: &str = "trixie";

/// What the tests load: glibc, and the C libraries ncfilters loads at run time (blosc, szip)
/// with everything they depend on.
const RUNTIME_PACKAGES: [&str; 3] = ["libc6", "libblosc1", "libsz2"];

/// `cargo xtask cross`: the targets of `NCFILTERS_CROSS_ARCHS` (comma-separated Debian names;
/// default all) compiled and tested, with a table.
pub fn test_cross_chosen(h: &Harness) -> Result {
    let chosen = match std::env::var("NCFILTERS_CROSS_ARCHS") {
        Ok(names) => names.split(',').map(str::trim).filter(|n| !n.is_empty()).map(target).collect::<Result<_>>()?,
        Err(_) => TARGETS.iter().collect::<Vec<_>>(),
    };
    test_cross(h, &chosen)
}

/// Each target's shipped crates compiled, then their tests run under qemu-user: a table of
/// target × {compiled, tests passed/failed, seconds}. Fails if any failed.
pub fn test_cross(h: &Harness, targets: &[&'static Target]) -> Result {
    prepare(targets)?;
    let qemu = qemu_dir(h)?;
    let packages = shipped_packages(h)?;
    let mut rows = Vec::new();
    for target in targets {
        let started = Instant::now();
        let compiled = compile(h, target, CompileKind::Tests, &packages)?;
        let tests = if compiled { Some(run_tests(h, target, &qemu, &packages)?) } else { None };
        rows.push(Row::of(target, compiled, tests, started.elapsed().as_secs()));
    }
    finish(rows)
}

/// Every target's shipped crates compiled (`cargo check`): the part of `cross` each CI run does;
/// then Windows' (`windows`) and both Macs' (`macos`: built and linked).
pub fn test_cross_compile(h: &Harness) -> Result {
    let targets: Vec<&'static Target> = TARGETS.iter().collect();
    prepare(&targets)?;
    let packages = shipped_packages(h)?;
    let mut rows = Vec::new();
    for target in targets {
        let started = Instant::now();
        let compiled = compile(h, target, CompileKind::Check, &packages)?;
        rows.push(Row::of(target, compiled, None, started.elapsed().as_secs()));
    }
    let (compiled, seconds) = crate::windows::compile_shipped_crates(h, &packages)?;
    rows.push(Row {
        arch: "windows",
        triple: crate::windows::TRIPLE,
        kind: "MinGW-w64, PE",
        compiled,
        tests: None,
        seconds,
    });
    for (triple, compiled, seconds) in crate::macos::build_shipped_crates(h, &packages)? {
        rows.push(Row { arch: "macos", triple, kind: "Zig, Mach-O (not run)", compiled, tests: None, seconds });
    }
    finish(rows)?;
    check_native_libraries(h)?;
    crate::macos::check_export_rules(h)
}

/// The platforms whose system libraries the module names, each with the Rust targets built for it
/// here (all of them installed by now).
fn native_library_platforms() -> Result<Vec<(&'static str, Vec<String>)>> {
    let host = output(&mut cmd("rustc", ["-vV"]))?
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_string)
        .ok_or_else(|| crate::harness::Failure("`rustc -vV` names no host".into()))?;
    Ok(vec![
        ("Linux", vec![host]),
        ("Windows", vec![crate::windows::TRIPLE.to_string()]),
        ("Apple", crate::macos::TRIPLES.iter().map(|t| t.to_string()).collect()),
    ])
}

/// The module links a Rust staticlib's system libraries by platform (`ncfilters_native_libs_of` in
/// cmake/ncfilters_platform.cmake): they must be what rustc names for each target built here. The
/// shipped crates add none of std's own (on Linux the staticlib's are std's: `dl` twice).
fn check_native_libraries(h: &Harness) -> Result {
    let dir = h.repo.join("target/native-static-libs");
    create_dir_all(&dir)?;
    std::fs::write(
        dir.join("lib.rs"),
        "pub fn cores() -> usize { std::thread::available_parallelism().map_or(1, |n| n.get()) }\n",
    )
    .map_err(|e| crate::harness::Failure(format!("{}: {e}", dir.display())))?;
    for (platform, triples) in native_library_platforms()? {
        let module = module_native_libs(&dir, platform)?;
        for triple in triples {
            let mut rustc = Command::new("rustc");
            rustc.current_dir(&dir).args(["--crate-type", "staticlib", "--print", "native-static-libs", "--target"]);
            rustc.args([triple.as_str(), "lib.rs", "-o"]).arg(dir.join(format!("{triple}.a")));
            let out = rustc.output().map_err(|e| crate::harness::Failure(format!("rustc: {e}")))?;
            let printed = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() {
                fail!("rustc --print native-static-libs --target {triple} failed:\n{printed}");
            }
            let rustc_libs = native_libs_printed(&printed)
                .ok_or_else(|| crate::harness::Failure(format!("rustc printed no native-static-libs:\n{printed}")))?;
            if rustc_libs != module {
                fail!("{triple}: rustc's std needs {rustc_libs:?}, cmake/ncfilters_platform.cmake links {module:?} on {platform}");
            }
            println!(
                "PASS {triple}: the module links std's system libraries, {}",
                module.iter().cloned().collect::<Vec<_>>().join(" ")
            );
        }
    }
    Ok(())
}

/// The libraries of rustc's `note: native-static-libs:` line, by name: `-lc` and `c.lib` are `c`;
/// MSVC's `/defaultlib:` (the C runtime, which its compiler links anyway) is left out.
fn native_libs_printed(printed: &str) -> Option<std::collections::BTreeSet<String>> {
    let line = printed.lines().find_map(|line| line.split_once("native-static-libs:"))?.1;
    let mut words = line.split_whitespace();
    let mut libs = std::collections::BTreeSet::new();
    while let Some(word) = words.next() {
        if word == "-framework" {
            libs.insert(format!("-framework {}", words.next()?));
        } else if !word.starts_with("/defaultlib:") {
            libs.insert(word.strip_prefix("-l").or_else(|| word.strip_suffix(".lib")).unwrap_or(word).to_string());
        }
    }
    Some(libs)
}

/// `ncfilters_native_libs_of(platform)`, as the module computes it.
fn module_native_libs(dir: &Path, platform: &str) -> Result<std::collections::BTreeSet<String>> {
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/ncfilters_platform.cmake");
    let script = dir.join("native-libs.cmake");
    let text = format!(
        "include(\"{}\")\nncfilters_native_libs_of({platform} libs)\nmessage(\"libs: ${{libs}}\")\n",
        module.display()
    );
    std::fs::write(&script, text).map_err(|e| crate::harness::Failure(format!("{}: {e}", script.display())))?;
    let out = Command::new("cmake")
        .arg("-P")
        .arg(&script)
        .output()
        .map_err(|e| crate::harness::Failure(format!("cmake: {e}")))?;
    let printed = String::from_utf8_lossy(&out.stderr);
    let libs = printed.lines().find_map(|line| line.strip_prefix("libs: "));
    match libs {
        Some(libs) if out.status.success() => {
            Ok(libs.split(';').filter(|l| !l.is_empty()).map(str::to_string).collect())
        }
        _ => fail!("cmake -P {}: {printed}", script.display()),
    }
}

struct Row {
    arch: &'static str,
    triple: &'static str,
    kind: &'static str,
    compiled: bool,
    /// (passed, failed), if the tests ran.
    tests: Option<(usize, usize)>,
    seconds: u64,
}

impl Row {
    fn of(target: &'static Target, compiled: bool, tests: Option<(usize, usize)>, seconds: u64) -> Row {
        Row { arch: target.arch, triple: target.triple, kind: target.kind, compiled, tests, seconds }
    }
}

fn finish(rows: Vec<Row>) -> Result {
    log("cross targets");
    println!("  {:<9} {:<31} {:<26} {:<9} {:<16} {:>5}", "arch", "target", "", "compiled", "tests", "s");
    for row in &rows {
        let tests = match row.tests {
            Some((passed, failed)) => format!("{passed} passed, {failed} failed"),
            None => "-".to_string(),
        };
        let compiled = if row.compiled { "yes" } else { "FAILED" };
        println!("  {:<9} {:<31} {:<26} {compiled:<9} {tests:<16} {:>5}", row.arch, row.triple, row.kind, row.seconds);
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|row| !row.compiled || row.tests.is_some_and(|(_, failed)| failed > 0))
        .map(|row| row.arch)
        .collect();
    if !failed.is_empty() {
        fail!("cross: failed on {}", failed.join(", "));
    }
    Ok(())
}

/// The cross compilers, C libraries and Rust standard libraries of `targets`.
pub fn prepare(targets: &[&'static Target]) -> Result {
    let mut packages = Vec::new();
    for target in targets {
        packages.push(format!("gcc-{}", target.gnu));
        packages.push(format!("libc6-dev-{}-cross", target.arch));
    }
    crate::setup::install_apt_packages(&packages)?;
    let rustup: Vec<&str> = targets.iter().filter(|t| t.std == Std::Rustup).map(|t| t.triple).collect();
    if !rustup.is_empty() {
        run(cmd("rustup", ["target", "add"]).args(&rustup))?;
    }
    if targets.iter().any(|t| t.std == Std::BuiltByNightly) {
        run(&mut cmd("rustup", ["+nightly", "component", "add", "rust-src"]))?;
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CompileKind {
    /// `cargo check` of the libraries.
    Check,
    /// `cargo test --no-run`, release, of the libraries and their tests.
    Tests,
}

/// The shipped crates, `-p` by `-p`.
pub fn shipped_packages(h: &Harness) -> Result<Vec<String>> {
    let metadata = crate::licences::metadata(&h.repo)?;
    let shipped = crate::licences::shipped_members(&h.repo, &metadata);
    Ok(shipped.into_iter().flat_map(|(name, _)| ["-p".to_string(), name]).collect())
}

/// `cargo <subcommand>` for `target` in the repository, in `target/cross`, with the cross
/// compiler for the C the crates compile and link.
fn cargo_for(h: &Harness, target: &Target, subcommand: &str) -> Command {
    let nightly = target.std == Std::BuiltByNightly;
    let mut cargo = if nightly { cmd("cargo", ["+nightly", subcommand]) } else { cmd("cargo", [subcommand]) };
    cargo.current_dir(&h.repo).args(["--locked", "--target", target.triple]);
    if nightly {
        cargo.arg("-Zbuild-std=std,panic_unwind");
    }
    cargo
        .env("CARGO_TARGET_DIR", h.repo.join("target/cross"))
        .envs(crate::cross_env::cross_compiler_env(target.triple, target.gnu));
    cargo
}

/// Whether the shipped crates (`packages`, from [`shipped_packages`]) compile for `target` (the
/// log's tail shown when not).
fn compile(h: &Harness, target: &Target, kind: CompileKind, packages: &[String]) -> Result<bool> {
    let mut cargo = match kind {
        CompileKind::Check => cargo_for(h, target, "check"),
        CompileKind::Tests => {
            let mut cargo = cargo_for(h, target, "test");
            cargo.args(["--release", "--tests", "--no-run"]);
            cargo
        }
    };
    cargo.args(packages);
    log(format!(
        "{}: cargo {} of the shipped crates",
        target.arch,
        if kind == CompileKind::Check { "check" } else { "test --no-run" }
    ));
    let log_file = h.work_file(&format!("cross-{}-compile.log", target.arch));
    create_dir_all(&h.work)?;
    let compiled = succeeds_into_log(&mut cargo, &log_file, false)?;
    if !compiled {
        print_tail(&log_file, 30);
    }
    Ok(compiled)
}

/// The tests of the shipped crates (`packages`) for `target` under qemu-user: (passed, failed).
fn run_tests(h: &Harness, target: &Target, qemu: &Path, packages: &[String]) -> Result<(usize, usize)> {
    let sysroot = sysroot(h, target)?;
    let runner = format!("{} -L {}", qemu.join(target.qemu).display(), sysroot.display());
    // The chunks the byte-order test (plugins/common/src/h5z/byte_order.rs) writes there, for
    // x86_64 to read afterwards.
    let chunks = h.repo.join(format!("target/cross/chunks-{}", target.arch));
    crate::harness::remove_dir_all_if_exists(&chunks)?;
    let tests = || {
        let mut cargo = cargo_for(h, target, "test");
        cargo
            .args(["--release", "--tests", "--no-fail-fast"])
            .args(packages)
            .env(crate::cross_env::cargo_target_variable(target.triple, "RUNNER"), &runner)
            // tests/diagnostics.rs runs its own binary again, through the emulator.
            .env("NCFILTERS_TEST_RUNNER", &runner)
            .env("NCFILTERS_CHUNKS_OUT", &chunks)
            .env_remove("HDF5_PLUGIN_PATH");
        cargo
    };
    log(format!("{}: the shipped crates' tests under {}", target.arch, target.qemu));
    let log_file = h.work_file(&format!("cross-{}-tests.log", target.arch));
    let outcome = crate::emulated_tests::run_with_failures_once_more(tests, &log_file)?;
    let (mut passed, mut failed) = (outcome.passed, outcome.failed);
    println!("{}: {passed} passed ({} only when run once more), {failed} failed", target.arch, outcome.flaky.len());
    log(format!("x86_64 decodes the chunks written on {}", target.arch));
    let mut host =
        cmd("cargo", ["test", "-q", "--release", "--locked", "-p", "ncfilters-plugin", "--lib", "byte_order"]);
    host.current_dir(&h.repo).env("NCFILTERS_CHUNKS_IN", &chunks);
    let host_log = h.work_file(&format!("cross-{}-read-on-x86_64.log", target.arch));
    if succeeds_into_log(&mut host, &host_log, false)? {
        passed += 1;
    } else {
        print_tail(&host_log, 30);
        failed += 1;
    }
    Ok((passed, failed))
}

/// A private apt state for `arch`'s packages of `suite` from the machine's own mirror, in the
/// cache: `apt-get` and `apt-cache` with it read and write nothing of the machine's.
struct PrivateApt {
    dir: PathBuf,
    arch: &'static str,
}

impl PrivateApt {
    fn new(h: &Harness, suite: &str, arch: &'static str) -> Result<PrivateApt> {
        let dir = h.cache.join(format!("cross/apt-{suite}-{arch}"));
        for sub in ["state/lists/partial", "cache/archives/partial", "debs"] {
            create_dir_all(&dir.join(sub))?;
        }
        let Some((mirror, _)) = crate::setup::first_deb_entry() else {
            fail!("no Debian mirror in the machine's apt sources to fetch {arch} packages from");
        };
        let keyring = "/usr/share/keyrings/debian-archive-keyring.gpg";
        let entry = format!("deb [arch={arch} signed-by={keyring}] {mirror} {suite} main\n");
        crate::harness::write_file(&dir.join("sources.list"), &entry)?;
        let apt = PrivateApt { dir, arch };
        run(apt.command("apt-get").args(["update", "-q"]))?;
        Ok(apt)
    }

    fn command(&self, program: &str) -> Command {
        let dir = &self.dir;
        let mut command = cmd(program, ["-o".to_string(), format!("Dir::State={}", dir.join("state").display())]);
        for option in [
            format!("Dir::Cache={}", dir.join("cache").display()),
            format!("Dir::Etc::SourceList={}", dir.join("sources.list").display()),
            "Dir::Etc::SourceParts=/nonexistent".to_string(),
            format!("APT::Architecture={}", self.arch),
            format!("APT::Architectures::={}", self.arch),
            "APT::Sandbox::User=root".to_string(),
            "Debug::NoLocking=1".to_string(),
        ] {
            command.args(["-o", &option]);
        }
        command
    }

    /// `packages` and everything they depend on, as .deb files (downloaded once).
    fn download_with_dependencies(&self, packages: &[&str]) -> Result<Vec<PathBuf>> {
        let mut depends = self.command("apt-cache");
        depends.args([
            "depends",
            "--recurse",
            "--no-recommends",
            "--no-suggests",
            "--no-conflicts",
            "--no-breaks",
            "--no-replaces",
            "--no-enhances",
        ]);
        depends.args(packages);
        let listed = output(&mut depends)?;
        // Real packages are the unindented lines; `<name>` are virtual ones.
        let mut names: Vec<&str> = listed
            .lines()
            .filter(|line| !line.starts_with(' ') && !line.starts_with('<') && !line.is_empty())
            .collect();
        names.sort_unstable();
        names.dedup();
        let debs = self.dir.join("debs");
        run(self.command("apt-get").arg("download").args(&names).current_dir(&debs))?;
        let mut files = Vec::new();
        for name in names {
            let prefix = format!("{name}_");
            let found = std::fs::read_dir(&debs)
                .map_err(|e| crate::harness::Failure(format!("cannot list {}: {e}", debs.display())))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.file_name().is_some_and(|f| f.to_string_lossy().starts_with(&prefix)))
                .max();
            match found {
                Some(file) => files.push(file),
                None => fail!("apt-get download left no .deb of {name} in {}", debs.display()),
            }
        }
        Ok(files)
    }
}

/// `target`'s root for qemu-user (`-L`): Debian's glibc, libblosc and libsz for its architecture
/// (from the first of [`RUNTIME_SUITES`] that has them), unpacked into the cache.
fn sysroot(h: &Harness, target: &Target) -> Result<PathBuf> {
    let root = h.cache.join(format!("cross/sysroot-{}", target.arch));
    let suite_file = root.join(".ncfilters-suite");
    if let Ok(suite) = std::fs::read_to_string(&suite_file) {
        println!("{}: qemu-user's root has Debian {}'s {}", target.arch, suite.trim(), RUNTIME_PACKAGES.join(", "));
        return Ok(root);
    }
    let mut refused = Vec::new();
    for suite in RUNTIME_SUITES {
        log(format!("{}: Debian {suite}'s {} for qemu-user's root", target.arch, RUNTIME_PACKAGES.join(", ")));
        let debs = match PrivateApt::new(h, suite, target.arch)
            .and_then(|apt| apt.download_with_dependencies(&RUNTIME_PACKAGES))
        {
            Ok(debs) => debs,
            Err(crate::harness::Failure(why)) => {
                println!("{}: not from {suite}: {why}", target.arch);
                refused.push(format!("{suite}: {why}"));
                continue;
            }
        };
        crate::harness::remove_dir_all_if_exists(&root)?;
        create_dir_all(&root)?;
        for deb in debs {
            run(cmd("dpkg-deb", ["-x"]).arg(&deb).arg(&root))?;
        }
        keep_links_inside(&root, &root)?;
        // Debian 13's packages install into /usr, where its base-files links /lib and friends.
        for link in ["lib", "lib32", "lib64"] {
            if root.join("usr").join(link).is_dir() && !root.join(link).exists() {
                std::os::unix::fs::symlink(Path::new("usr").join(link), root.join(link))
                    .map_err(|e| crate::harness::Failure(format!("cannot link {link} in {}: {e}", root.display())))?;
            }
        }
        crate::harness::write_file(&suite_file, suite)?;
        return Ok(root);
    }
    fail!("no Debian suite served {}'s {}:\n{}", target.arch, RUNTIME_PACKAGES.join(", "), refused.join("\n"))
}

/// Makes every absolute symbolic link under `dir` relative, so that it points inside `root`:
/// qemu-user looks a path up under its `-L` root first, but the host resolves the links it meets
/// there, and an absolute one (ppc64el's `/lib64/ld64.so.2`) would lead out of the root.
fn keep_links_inside(root: &Path, dir: &Path) -> Result {
    let entries =
        std::fs::read_dir(dir).map_err(|e| crate::harness::Failure(format!("cannot list {}: {e}", dir.display())))?;
    for entry in entries.filter_map(std::result::Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            keep_links_inside(root, &path)?;
        } else if kind.is_symlink() {
            let Ok(target) = std::fs::read_link(&path) else { continue };
            let Ok(inside) = target.strip_prefix("/") else { continue };
            // From the link's directory up to the root, then down to the target.
            let depth = path.parent().and_then(|p| p.strip_prefix(root).ok()).map_or(0, |p| p.components().count());
            let relative: PathBuf = std::iter::repeat_n(Path::new(".."), depth).collect::<PathBuf>().join(inside);
            std::fs::remove_file(&path)
                .and_then(|()| std::os::unix::fs::symlink(&relative, &path))
                .map_err(|e| crate::harness::Failure(format!("cannot relink {}: {e}", path.display())))?;
        }
    }
    Ok(())
}

/// The kernel runs `target`'s programs under Debian 13's qemu-user, through a binfmt_misc entry
/// (`ncfilters-<qemu>`): a cross build's tests then run its programs as a native build's do.
pub fn register_binfmt(h: &Harness, target: &Target) -> Result {
    let qemu = qemu_dir(h)?.join(target.qemu);
    let name = format!("ncfilters-{}", target.qemu);
    register_binfmt_entry(&name, &elf_magic(target.elf), &elf_mask(target.elf), &qemu)
}

/// Registers the binfmt_misc entry `name`: programs whose first bytes are `magic` (the bits of
/// `mask`) run under `interpreter` (flag F: opened now, so it also serves inside a chroot).
/// Registered once; the entry lasts until reboot and changes nothing else of the machine's.
pub fn register_binfmt_entry(name: &str, magic: &[u8], mask: &[u8], interpreter: &Path) -> Result {
    let binfmt = Path::new("/proc/sys/fs/binfmt_misc");
    if binfmt.join(name).is_file() {
        return Ok(());
    }
    if !binfmt.join("register").exists() {
        run(cmd("mount", ["-t", "binfmt_misc", "binfmt_misc"]).arg(binfmt))?;
    }
    let entry = format!(":{name}:M::{}:{}:{}:F", escaped(magic), escaped(mask), interpreter.display());
    std::fs::write(binfmt.join("register"), entry)
        .map_err(|e| crate::harness::Failure(format!("cannot register {name} with binfmt_misc: {e}")))
}

/// Removes the binfmt_misc entry `name`, if registered (before its interpreter is rewritten: the
/// kernel holds the file open).
pub fn unregister_binfmt_entry(name: &str) -> Result {
    let entry = Path::new("/proc/sys/fs/binfmt_misc").join(name);
    if !entry.is_file() {
        return Ok(());
    }
    std::fs::write(&entry, "-1")
        .map_err(|e| crate::harness::Failure(format!("cannot remove {name} from binfmt_misc: {e}")))
}

/// The first 20 bytes of an ELF program of `elf`'s architecture: identification, `e_type`
/// (an executable), `e_machine`.
fn elf_magic(elf: Elf) -> Vec<u8> {
    let mut magic =
        vec![0x7f, b'E', b'L', b'F', if elf.is_64_bit { 2 } else { 1 }, if elf.big_endian { 2 } else { 1 }, 1];
    magic.resize(16, 0);
    let (kind, machine) = if elf.big_endian {
        (2u16.to_be_bytes(), elf.machine.to_be_bytes())
    } else {
        (2u16.to_le_bytes(), elf.machine.to_le_bytes())
    };
    magic.extend(kind);
    magic.extend(machine);
    magic
}

/// Which of [`elf_magic`]'s bits must match: not the OS ABI byte, and `e_type` 2 or 3 (a
/// position-independent executable is a shared object).
fn elf_mask(elf: Elf) -> Vec<u8> {
    let mut mask = vec![0xff; 20];
    mask[7] = 0;
    mask[if elf.big_endian { 17 } else { 16 }] = 0xfe;
    mask
}

fn escaped(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("\\x{byte:02x}")).collect()
}

/// The directory with Debian 13's qemu-user programs of [`TARGETS`] (static; unpacked into the cache).
pub fn qemu_dir(h: &Harness) -> Result<PathBuf> {
    let root = h.cache.join(format!("cross/qemu-user-{QEMU_SUITE}"));
    let bin = root.join("usr/bin");
    let mut programs: Vec<&str> = TARGETS.iter().map(|t| t.qemu).collect();
    programs.sort_unstable();
    programs.dedup();
    if programs.iter().all(|p| bin.join(p).is_file()) {
        return Ok(bin);
    }
    log(format!("Debian {QEMU_SUITE}'s qemu-user, for {}", programs.join(", ")));
    let apt = PrivateApt::new(h, QEMU_SUITE, "amd64")?;
    let debs = apt.dir.join("debs");
    run(apt.command("apt-get").args(["download", "qemu-user"]).current_dir(&debs))?;
    crate::harness::remove_dir_all_if_exists(&root)?;
    create_dir_all(&root)?;
    let members: Vec<String> = programs.iter().map(|p| format!("./usr/bin/{p}")).collect();
    let unpack = "set -o pipefail; dpkg-deb --fsys-tarfile \"$1\"/qemu-user_*.deb | tar -C \"$2\" -xf - \"${@:3}\"";
    run(cmd("bash", ["-c", unpack, "bash"]).arg(&debs).arg(&root).args(&members))?;
    if !succeeds_quietly(cmd(bin.join(TARGETS[0].qemu), ["--version"]).stdout(std::process::Stdio::null()))? {
        fail!("{} does not run", bin.join(TARGETS[0].qemu).display());
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_result_lines_are_counted() {
        let log = "running 3 tests\ntest result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n\
                   test result: FAILED. 10 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1s\n";
        assert_eq!(crate::text::libtest_counts(log), (13, 2));
    }

    #[test]
    fn every_target_is_a_distinct_architecture() {
        let mut arches: Vec<&str> = TARGETS.iter().map(|t| t.arch).collect();
        arches.sort_unstable();
        arches.dedup();
        assert_eq!(arches.len(), TARGETS.len());
        assert!(target("s390x").is_ok() && target("amd64").is_err());
    }

    /// The binfmt_misc entry's bytes are qemu's own (scripts/qemu-binfmt-conf.sh) for aarch64 and s390x.
    #[test]
    fn binfmt_entries_match_qemus_for_arm64_and_s390x() {
        let arm64 = target("arm64").unwrap().elf;
        assert_eq!(
            escaped(&elf_magic(arm64)),
            "\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00"
        );
        assert_eq!(
            escaped(&elf_mask(arm64)),
            "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff"
        );
        let s390x = target("s390x").unwrap().elf;
        assert_eq!(escaped(&elf_magic(s390x)[16..]), "\\x00\\x02\\x00\\x16");
        assert_eq!(escaped(&elf_mask(s390x)[16..]), "\\xff\\xfe\\xff\\xff");
    }

    #[test]
    fn rustc_s_native_libraries_are_read_by_name() {
        let linux = "warning: x\nnote: native-static-libs: -ldl -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc\n";
        let names = |libs: &[&str]| libs.iter().map(|l| l.to_string()).collect::<std::collections::BTreeSet<_>>();
        assert_eq!(native_libs_printed(linux), Some(names(&["dl", "gcc_s", "util", "rt", "pthread", "m", "c"])));
        let msvc = "note: native-static-libs: kernel32.lib ntdll.lib /defaultlib:msvcrt";
        assert_eq!(native_libs_printed(msvc), Some(names(&["kernel32", "ntdll"])));
        let apple = "note: native-static-libs: -framework CoreFoundation -lSystem";
        assert_eq!(native_libs_printed(apple), Some(names(&["-framework CoreFoundation", "System"])));
        assert_eq!(native_libs_printed("no such line"), None);
    }

    /// cmake/ncfilters_platform.cmake's answers for every platform: the installed command's rpath,
    /// and the symbol file and linker options that keep Rust's symbols out of libnetcdf's exports
    /// (GNU ld's version script; ld64's unexported-symbols list, with Mach-O's underscore).
    #[test]
    fn the_module_s_rules_per_platform() {
        let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/ncfilters_platform.cmake");
        let dir = std::env::temp_dir().join(format!("ncfilters-platform-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut script = format!("include(\"{}\")\n", module.display());
        for platform in ["Linux", "Windows", "Apple"] {
            script.push_str(&format!(
                "ncfilters_relative_rpath_of({platform} lib rpath)\nmessage(\"{platform} rpath ${{rpath}}\")\n\
                 ncfilters_hidden_symbols_of({platform} {platform}.sym {platform}.map \"NCZ_one;NCZ_two\" options)\n\
                 message(\"{platform} options ${{options}}\")\n\
                 ncfilters_plugin_file_of({platform} h5zstd plugin)\nmessage(\"{platform} plugin ${{plugin}}\")\n"
            ));
        }
        std::fs::write(dir.join("rules.cmake"), script).unwrap();
        let out = Command::new("cmake").current_dir(&dir).args(["-P", "rules.cmake"]).output().expect("cmake runs");
        let printed = String::from_utf8_lossy(&out.stderr).into_owned();
        let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
        let (linux, apple) = (read("Linux.sym"), read("Apple.sym"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(out.status.success(), "{printed}");
        assert!(
            printed.contains("Linux rpath $ORIGIN/../lib\n") && printed.contains("Apple rpath @loader_path/../lib\n")
        );
        assert!(printed
            .contains("Linux options LINKER:-Map=Linux.map;LINKER:--version-script=Linux.sym;LINKER:--gc-sections"));
        assert!(printed.contains(
            "Apple options LINKER:-unexported_symbols_list,Apple.sym;LINKER:-map,Apple.map;LINKER:-dead_strip"
        ));
        // netcdf-c's and cargo's name of a plugin's file (4.9.3 on, for Windows).
        for (platform, file) in
            [("Linux", "lib__nch5zstd.so"), ("Windows", "__nch5zstd.dll"), ("Apple", "lib__nch5zstd.dylib")]
        {
            assert!(printed.contains(&format!("{platform} plugin {file}\n")), "{printed}");
        }
        assert!(linux.contains("local: _ZN*; _R*; __rust*; rust_*; NCZ_one; NCZ_two;\n};"), "{linux}");
        assert_eq!(
            apple,
            "__ZN*\n__R*\n___rust*\n_rust_*\n___isOSVersionAtLeast\n___isPlatformVersionAtLeast\n_NCZ_one\n_NCZ_two\n"
        );
    }

    /// Which Rust target the module builds for (`ncfilters_rust_target`), and the `--target` that
    /// rustc's links then pass to clang, from a toolchain's settings: each case is the CMake lines
    /// that set them and `target how` as the module answers, or the start of its refusal.
    #[test]
    fn the_module_takes_the_target_from_the_toolchains_settings() {
        let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/ncfilters_rust_target.cmake");
        let dir = std::env::temp_dir().join(format!("ncfilters-target-of-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A C compiler whose own target is Debian's arm64.
        let compiler = dir.join("aarch64-linux-gnu-gcc");
        std::fs::write(&compiler, "#!/bin/sh\necho aarch64-linux-gnu\n").unwrap();
        run(cmd("chmod", ["755"]).arg(&compiler)).unwrap();
        let compiler = compiler.display();
        let cases: [(&str, &str); 9] = [
            ("", " "),
            (&format!("set(CMAKE_CROSSCOMPILING 1)\nset(CMAKE_C_COMPILER {compiler})"), "aarch64-unknown-linux-gnu "),
            (
                &format!("set(CMAKE_CROSSCOMPILING 1)\nset(CMAKE_C_COMPILER {compiler})\nset(CMAKE_C_COMPILER_TARGET arm64-apple-macos11)"),
                "aarch64-apple-darwin --target=arm64-apple-macos11",
            ),
            ("set(CMAKE_C_COMPILER_TARGET x86_64-apple-macosx10.13)", "x86_64-apple-darwin --target=x86_64-apple-macosx10.13"),
            ("set(NCFILTERS_RUST_TARGET s390x-unknown-linux-gnu)\nset(CMAKE_C_COMPILER_TARGET s390x-linux-gnu)", "s390x-unknown-linux-gnu --target=s390x-linux-gnu"),
            // An Intel Mac's build for arm64, which CMake does not call a cross build, and one for its own.
            ("set(APPLE 1)\nset(CMAKE_HOST_SYSTEM_PROCESSOR x86_64)\nset(CMAKE_OSX_ARCHITECTURES arm64)", "aarch64-apple-darwin "),
            ("set(APPLE 1)\nset(CMAKE_HOST_SYSTEM_PROCESSOR arm64)\nset(CMAKE_OSX_ARCHITECTURES arm64)", " "),
            ("set(APPLE 1)\nset(CMAKE_HOST_SYSTEM_PROCESSOR arm64)\nset(CMAKE_OSX_ARCHITECTURES \"arm64;x86_64\")", "refused: ncfilters: CMAKE_OSX_ARCHITECTURES 'arm64;x86_64' asks for a universal"),
            ("set(CMAKE_C_COMPILER_TARGET sparc-sun-solaris2.11)", "refused: ncfilters: CMAKE_C_COMPILER_TARGET 'sparc-sun-solaris2.11' names no Rust target"),
        ];
        for (index, (settings, expected)) in cases.iter().enumerate() {
            let file = dir.join(format!("case{index}.cmake"));
            let script = format!(
                "include(\"{}\")\n{settings}\nncfilters_rust_target(target how)\nmessage(\"answer: ${{target}} ${{how}}\")\n",
                module.display()
            );
            std::fs::write(&file, script).unwrap();
            let out = Command::new("cmake").arg("-P").arg(&file).output().expect("cmake runs");
            let printed = String::from_utf8_lossy(&out.stderr).replace('\n', " ");
            let printed = printed.split_whitespace().collect::<Vec<_>>().join(" ");
            let answer = match printed.split_once("answer:") {
                Some((_, answer)) if out.status.success() => answer.trim().to_string(),
                _ => format!("refused: {}", printed.split_once("CMake Error").map_or("", |(_, e)| e)),
            };
            let expected = expected.trim();
            assert!(
                answer == expected
                    || (expected.starts_with("refused: ") && answer.contains(&expected["refused: ".len()..])),
                "case {index} ({settings}): expected `{expected}`, got `{answer}`"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The module's cross build names cargo's target from the C compiler's GNU triplet
    /// (cmake/ncfilters_rust_target.cmake): for each architecture, the triple of this table.
    #[test]
    fn the_module_maps_every_cross_compiler_to_its_rust_target() {
        let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/ncfilters_rust_target.cmake");
        let mut cases: Vec<(String, &str)> = TARGETS.iter().map(|t| (t.gnu.to_string(), t.triple)).collect();
        // conda-forge's compilers name a vendor; an unknown CPU or system maps to none.
        cases.push(("aarch64-conda-linux-gnu".into(), "aarch64-unknown-linux-gnu"));
        cases.push(("x86_64-linux-gnu".into(), "x86_64-unknown-linux-gnu"));
        cases.push(("sparc-linux-gnu".into(), ""));
        cases.push(("aarch64-unknown-freebsd".into(), ""));
        // MinGW-w64's, as Debian and MSYS2 name it; Apple clang's, with and without a version.
        cases.push(("x86_64-w64-mingw32".into(), crate::windows::TRIPLE));
        cases.push(("i686-w64-mingw32".into(), "i686-pc-windows-gnu"));
        // LLVM's MinGW-w64, as MSYS2's clang64 and clangarm64 name it.
        cases.push(("x86_64-w64-windows-gnu".into(), "x86_64-pc-windows-gnullvm"));
        cases.push(("aarch64-w64-windows-gnu".into(), "aarch64-pc-windows-gnullvm"));
        cases.push(("arm64-apple-darwin23.6.0".into(), crate::macos::TRIPLES[0]));
        cases.push(("x86_64-apple-darwin".into(), crate::macos::TRIPLES[1]));
        // Zig's `zig cc -dumpmachine`, with and without a deployment target.
        cases.push(("aarch64-unknown-macos.11.0-none".into(), crate::macos::TRIPLES[0]));
        cases.push(("x86_64-unknown-macos-none".into(), crate::macos::TRIPLES[1]));
        cases.push(("aarch64-unknown-linux-none".into(), ""));
        let mut script = format!("include(\"{}\")\n", module.display());
        for (gnu, _) in &cases {
            script
                .push_str(&format!("ncfilters_rust_target_of(\"{gnu}\" triple)\nmessage(\"{gnu} -> ${{triple}}\")\n"));
        }
        let dir = std::env::temp_dir().join(format!("ncfilters-rust-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("map.cmake");
        std::fs::write(&file, script).unwrap();
        let out = Command::new("cmake").arg("-P").arg(&file).output().expect("cmake runs");
        let _ = std::fs::remove_dir_all(&dir);
        let printed = String::from_utf8_lossy(&out.stderr);
        for (gnu, triple) in &cases {
            let line = format!("{gnu} -> {triple}");
            assert!(printed.lines().any(|l| l == line), "expected `{line}` in:\n{printed}");
        }
    }
}
