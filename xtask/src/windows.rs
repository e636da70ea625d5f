// SPDX-License-Identifier: BSD-3-Clause
//! Windows with MinGW-w64, as MSYS2 builds netcdf-c: the shipped crates compiled for
//! `x86_64-pc-windows-gnu` with Debian's MinGW-w64 cross compiler (part of `cross-compile`, every
//! run), and their tests run under Wine (`cargo xtask wine`, a slow check), blosc's and szip's on
//! the DLLs `windows_libraries` cross-builds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::harness::{create_dir_all, fail, log, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};

/// Rust's target, and the GNU triplet of Debian's cross compiler for it.
pub const TRIPLE: &str = "x86_64-pc-windows-gnu";
pub const GNU: &str = "x86_64-w64-mingw32";

/// Debian's MinGW-w64 C compiler (POSIX threads: what the Rust target's std links).
pub const COMPILER_PACKAGES: [&str; 1] = ["gcc-mingw-w64-x86-64"];

/// Wine, which runs the tests (Debian 12's 8.0).
pub const WINE_PACKAGES: [&str; 2] = ["wine", "wine64"];

/// The shipped crates compiled for Windows with every warning an error: (compiled, seconds).
pub fn compile_shipped_crates(h: &Harness, packages: &[String]) -> Result<(bool, u64)> {
    prepare(&COMPILER_PACKAGES)?;
    let started = Instant::now();
    let mut cargo = cargo(h, "check");
    cargo.arg("--all-targets").args(packages);
    log(format!("{TRIPLE}: cargo check of the shipped crates, their tests too (warnings are errors)"));
    let log_file = h.work_file("windows-compile.log");
    create_dir_all(&h.work)?;
    let compiled = succeeds_into_log(&mut cargo, &log_file, false)?;
    if !compiled {
        crate::text::print_matching(&log_file, &["error", "warning", "-->"], 60);
    }
    Ok((compiled, started.elapsed().as_secs()))
}

/// The shipped crates' tests built for Windows and run under Wine.
pub fn test_under_wine(h: &Harness, packages: &[String]) -> Result {
    prepare(&[COMPILER_PACKAGES.as_slice(), &WINE_PACKAGES].concat())?;
    wine_prefix_with_prng(h)?;
    let dlls = crate::windows_libraries::native_dlls(h, &target_dir(h).join("native"), GNU)?;
    let started = Instant::now();
    let tests = || {
        let mut cargo = cargo(h, "test");
        cargo
            .args(["--release", "--tests", "--no-fail-fast"])
            .args(packages)
            // No NCFILTERS_TEST_RUNNER: a test that runs its own binary again (tests/diagnostics.rs)
            // starts it as a Windows process, inside Wine already.
            .env(crate::cross_env::cargo_target_variable(TRIPLE, "RUNNER"), "wine")
            .env_remove("NCFILTERS_TEST_RUNNER")
            .env("WINEPREFIX", wine_prefix(h))
            .env("WINEDEBUG", "-all")
            // A crashing program ends at once: winedbg's backtrace of a first crash took 490 s once.
            .env("WINEDLLOVERRIDES", "winedbg.exe=d")
            // Where Windows' loader finds libblosc.dll and libsz.dll: on PATH, as MSYS2 installs them.
            .env("WINEPATH", &dlls)
            .env_remove("HDF5_PLUGIN_PATH");
        cargo
    };
    log(format!("{TRIPLE}: the shipped crates' tests under Wine"));
    let log_file = h.work_file("windows-tests.log");
    create_dir_all(&h.work)?;
    let outcome = crate::emulated_tests::run_with_failures_once_more(tests, &log_file)?;
    println!(
        "{TRIPLE} under Wine: {} passed ({} only when run once more), {} failed ({} s)",
        outcome.passed,
        outcome.flaky.len(),
        outcome.failed,
        started.elapsed().as_secs()
    );
    if outcome.failed > 0 || outcome.passed == 0 {
        fail!("the shipped crates' tests under Wine failed ({})", log_file.display());
    }
    Ok(())
}

/// Wine's prefix for the tests, made once, with `tests/wine/bcryptprimitives.c` where Wine has no
/// `bcryptprimitives.dll` of its own (8.0 has none; Rust's std imports its `ProcessPrng`).
pub fn wine_prefix_with_prng(h: &Harness) -> Result {
    let prefix = wine_prefix(h);
    let system32 = prefix.join("drive_c/windows/system32");
    if !system32.is_dir() {
        log(format!("a Wine prefix for the tests in {}", prefix.display()));
        // Wine makes the prefix, but not the folders above it (a fresh clone has no target/).
        create_dir_all(&target_dir(h))?;
        let mut init = cmd("wineboot", ["--init"]);
        run(init.env("WINEPREFIX", &prefix).env("WINEDEBUG", "-all"))?;
        // wineboot returns before the prefix is written out.
        run(cmd("wineserver", ["--wait"]).env("WINEPREFIX", &prefix))?;
    }
    let dll = system32.join("bcryptprimitives.dll");
    if dll.is_file() {
        return Ok(());
    }
    log("Wine has no bcryptprimitives.dll: tests/wine/bcryptprimitives.c in its place");
    let source = h.repo.join("tests/wine");
    let mut gcc = cmd(format!("{GNU}-gcc"), ["-O2", "-shared", "-o"]);
    gcc.arg(&dll).arg(source.join("bcryptprimitives.c")).arg(source.join("bcryptprimitives.def")).arg("-ladvapi32");
    run(&mut gcc)
}

/// One wineserver for a whole check, started with [`WineServer::start`] and stopped when dropped:
/// without it each program's Wine starts a server that lingers a few seconds after its last
/// client, and a program starting while one shuts down failed ("wine client error:0: recvmsg:
/// Connection reset by peer").
pub struct WineServer {
    prefix: PathBuf,
}

impl WineServer {
    pub fn start(h: &Harness) -> Result<WineServer> {
        let prefix = wine_prefix(h);
        // An interrupted run leaves its persistent server, and a second one would not start. The
        // status is ignored: with no server left, `--kill` has nothing to stop.
        let _ = cmd("wineserver", ["--kill"]).env("WINEPREFIX", &prefix).status();
        run(cmd("wineserver", ["--persistent"]).env("WINEPREFIX", &prefix))?;
        // Wine's first program starts its services (services.exe, winedevice.exe, …), which then
        // run until the server stops, holding that program's stdout and stderr. Started here, they
        // hold /dev/null: started by the layout check under CMake's execute_process, they held its
        // pipe, and configure waited for the pipe to close (26 minutes, until killed).
        let mut first = cmd("wine", ["cmd", "/c", "exit"]);
        first.env("WINEPREFIX", &prefix).env("WINEDEBUG", "-all");
        first.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        run(&mut first)?;
        Ok(WineServer { prefix })
    }
}

impl Drop for WineServer {
    fn drop(&mut self) {
        // Best effort: a server left running ends with the machine.
        let _ = cmd("wineserver", ["--kill"]).env("WINEPREFIX", &self.prefix).status();
    }
}

/// The MinGW-w64 compiler (and Wine) from Debian, and Rust's standard library for the target.
pub fn prepare(packages: &[&str]) -> Result {
    crate::setup::install_apt_packages(packages)?;
    run(&mut cmd("rustup", ["target", "add", TRIPLE]))
}

/// `cargo <subcommand>` for Windows in `target/windows`, its C compiled and linked by MinGW-w64's gcc.
fn cargo(h: &Harness, subcommand: &str) -> Command {
    let mut cargo = cmd("cargo", [subcommand, "--locked", "--target", TRIPLE]);
    cargo
        .current_dir(&h.repo)
        .env("CARGO_TARGET_DIR", target_dir(h))
        .envs(crate::cross_env::cross_compiler_env(TRIPLE, GNU))
        .env("RUSTFLAGS", "-D warnings");
    cargo
}

/// Where the Windows builds go (their own: `RUSTFLAGS` differs from the other targets').
pub fn target_dir(h: &Harness) -> PathBuf {
    h.repo.join("target/windows")
}

/// Wine's own prefix for the tests, made on first use.
pub fn wine_prefix(h: &Harness) -> PathBuf {
    h.repo.join("target/windows/wine-prefix")
}

/// `command` with Wine's prefix and quiet, no plugin path, and `dlls` with MinGW-w64's own
/// (zlib, libgcc, winpthread) on Wine's DLL path.
pub fn wine_env<'c>(h: &Harness, command: &'c mut Command, dlls: &[PathBuf]) -> &'c mut Command {
    let mut path: Vec<PathBuf> = dlls.to_vec();
    path.push(PathBuf::from(format!("/usr/{GNU}/lib")));
    if let Some(libgcc) = gcc_file("libgcc_s_seh-1.dll") {
        path.extend(libgcc.parent().map(Path::to_path_buf));
    }
    let joined: Vec<String> = path.iter().map(|dir| dir.display().to_string()).collect();
    command
        .env("WINEPREFIX", wine_prefix(h))
        .env("WINEDEBUG", "-all")
        // A crashing program ends at once: winedbg's backtrace of a first crash took 490 s once.
        .env("WINEDLLOVERRIDES", "winedbg.exe=d")
        .env("WINEPATH", joined.join(";"))
        .env_remove("HDF5_PLUGIN_PATH")
}

/// Where MinGW-w64's gcc has `name`, if it has it.
fn gcc_file(name: &str) -> Option<PathBuf> {
    let out = Command::new(format!("{GNU}-gcc")).arg(format!("-print-file-name={name}")).output().ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    path.is_absolute().then_some(path)
}
