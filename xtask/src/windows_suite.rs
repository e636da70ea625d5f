// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c's own suite on its Windows builds (`windows_netcdf`), stock and with the module, run
//! under Wine: the kernel starts each PE program under Wine (a binfmt_misc entry), so ctest and
//! the suite's shell scripts run the `.exe` files as a native build's programs. Judged as the
//! emulated Linux suites are (`ctest_suite::run_pair_under`): the module's build fails no test
//! that stock's passes under Wine.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ctest_suite::{run_pair_under, EmulatedSuite, Emulator, Rerun, TestLimits, NATIVE};
use crate::harness::{fail, log, read_to_string, Harness, Result};
use crate::netcdf::{FLAVOURS, SUITE_DIALECT_VARIABLE};
use crate::process::{cmd, output, succeeds_into_log};
use crate::windows::wine_env;

/// Wine's limits: qemu-user's timeout, and a test that fails in any way runs once more: now and
/// then a program fails to start under Wine (seen: 4.10.1's tst_h_files2 on the ncfilters build,
/// failed in 0.01 s with no output, then passed three times).
pub const WINE: Emulator = Emulator {
    name: "Wine",
    limits: TestLimits { timeout_seconds: 3 * NATIVE.timeout_seconds, rerun: Rerun::AfterFailure },
};

/// What binfmt_misc starts a PE program with: Wine's 64-bit loader (Debian's `wine64`), after
/// turning each argument that is an absolute path, and the environment's paths the suite reads,
/// into their Windows form on Wine's `Z:` drive (the whole file system), as MSYS2's runtime does
/// when its shell starts a Windows program. netcdf-c's path code (`dpathmgr.c`) refuses `/work/…`
/// on Windows: it maps such paths only through MSYS2's mount point, which 4.10.1 reads from the
/// registry only where it is built with `REGEDIT`. A MinGW build takes its home from `HOME`
/// (`ddispatch.c`); refusing `/root`, it keeps none, and the NCZarr tests then read through the
/// null home (a page fault at 0x68). The arguments are left alone for ncpathcvt, whose answer the
/// scripts test with the Linux shell's `test -e`, but for `ncpathcvt -F <path>`, the scripts' "the
/// local form of this directory": under MSYS2 it gets `C:/...` and prints it for MSYS2's shell,
/// which reads that form; here it gets `Z:/...`, and its answer goes back to the Linux shell's.
const MSYS_LIKE_LOADER: &str = "#!/bin/sh\n\
# Written by cargo xtask (windows_suite.rs): runs a PE program under Wine, absolute paths as Z:/...\n\
# in its environment (lists with ; for :, none already with ;) and, but for ncpathcvt's, its arguments;\n\
# ncpathcvt -F <path> gets Z:<path>, and its Z:/ answer is given back in the Linux shell's form.\n\
for name in HOME srcdir top_srcdir TOPSRCDIR builddir top_builddir TOPBUILDDIR HDF5_PLUGIN_PATH; do\n\
    eval \"value=\\${$name-}\"\n\
    case $value in *\\;*) continue ;; /*) ;; *) continue ;; esac\n\
    converted=\n\
    while [ -n \"$value\" ]; do\n\
        element=${value%%:*}\n\
        case $value in *:*) value=${value#*:} ;; *) value= ;; esac\n\
        case $element in /*) element=Z:$element ;; esac\n\
        converted=${converted:+$converted;}$element\n\
    done\n\
    export \"$name=$converted\"\n\
done\n\
program=$1\n\
shift\n\
case ${program##*/} in ncpathcvt|ncpathcvt.exe)\n\
    case $#,${1-},${2-} in 2,-F,/*)\n\
        answer=$(/usr/lib/wine/wine64 \"$program\" -F \"Z:$2\") || exit\n\
        printf '%s\\n' \"$answer\" | sed 's|^Z:/|/|; s|\\r$||'\n\
        exit ;;\n\
    esac\n\
    exec /usr/lib/wine/wine64 \"$program\" \"$@\" ;;\n\
esac\n\
for argument do\n\
    shift\n\
    case $argument in\n\
    /*) first=${argument#/}; first=${first%%/*}; [ -n \"$first\" ] && [ -e \"/$first\" ] && argument=Z:$argument ;;\n\
    esac\n\
    set -- \"$@\" \"$argument\"\n\
done\n\
exec /usr/lib/wine/wine64 \"$program\" \"$@\"\n";

/// A release the `wine` check cross-builds for Windows, and which of its suite's tests cannot
/// pass under Wine on either build, each with why.
pub struct WindowsRelease {
    pub version: &'static str,
    /// Test programs that link on neither build: netcdf.dll exports only what netcdf-c marks
    /// `EXTERNL`, and these call netcdf-c's internals.
    pub unlinkable: &'static [(&'static str, &'static str)],
    /// Tests that fail under Wine on stock's build (the module's build fails them too).
    pub stock_failures: &'static [(&'static str, &'static str)],
}

/// The releases the `wine` check cross-builds: the newest, and the first whose plugins MinGW
/// names `__nc<name>.dll`.
pub const WINDOWS_RELEASES: [WindowsRelease; 2] = [
    WindowsRelease {
        version: "4.10.1",
        unlinkable: &[
            ("nc_test4_tst_udf", CALLS_NC4_SHOW_METADATA),
            ("nc_test4_tst_udf_multi", CALLS_NC4_SHOW_METADATA),
            ("nc_test4_tst_varsperf", "calls NC4_get_vars, which netcdf.dll does not export"),
        ],
        stock_failures: &STOCK_FAILURES_4_10_1,
    },
    // 4.9.3's CMake builds neither tst_udf_multi nor tst_varsperf.
    WindowsRelease {
        version: "4.9.3",
        unlinkable: &[("nc_test4_tst_udf", CALLS_NC4_SHOW_METADATA)],
        stock_failures: &STOCK_FAILURES_4_9_3,
    },
];

/// The entry of [`WINDOWS_RELEASES`] for `version`, or an error naming them.
pub fn windows_release(version: &str) -> Result<&'static WindowsRelease> {
    match WINDOWS_RELEASES.iter().find(|release| release.version == version) {
        Some(release) => Ok(release),
        None => fail!("netcdf-c {version} is not built for Windows: wine builds {}", windows_versions().join(" or ")),
    }
}

/// The releases `cargo xtask wine` builds for Windows: `NCFILTERS_NETCDF_VERSION`'s, else all of
/// [`WINDOWS_RELEASES`] (CI builds one a run: `SlowCheck::WineNetcdf`).
pub fn windows_releases_chosen() -> Result<Vec<&'static WindowsRelease>> {
    match std::env::var("NCFILTERS_NETCDF_VERSION") {
        Ok(version) => Ok(vec![windows_release(&version)?]),
        Err(_) => Ok(WINDOWS_RELEASES.iter().collect()),
    }
}

/// The versions of [`WINDOWS_RELEASES`].
fn windows_versions() -> Vec<&'static str> {
    WINDOWS_RELEASES.iter().map(|release| release.version).collect()
}

const CALLS_NC4_SHOW_METADATA: &str = "calls NC4_show_metadata, which netcdf.dll does not export";

/// Why 4.10.1's fail under Wine where MSYS2 would not, or would: a Linux shell runs the scripts,
/// and Wine's `/` is `Z:`, which MSYS2's paths (`/c/...`) never need.
const STOCK_FAILURES_4_10_1: [(&str, &str); 7] = [
    ("ncdump_test_unicode_directory", UNICODE_NAME),
    ("ncdump_test_unicode_path", UNICODE_NAME),
    (
        "nctest_compare_test_files",
        "its script takes srcdir's Windows form from ncpathcvt, which gets the Linux path: netcdf-c maps \
         /work/... only through MSYS2's mount point, and 4.10.1 reads that from the registry only with REGEDIT",
    ),
    ("unit_test_run_dfaltpluginpath", DEFAULT_PLUGIN_PATH_BY_UNAME),
    ("nczarr_test_run_quantize", URL_WITHOUT_DRIVE),
    ("nczarr_test_run_interop", URL_WITHOUT_DRIVE),
    ("nczarr_test_run_corrupt", URL_WITHOUT_DRIVE),
];

const UNICODE_NAME: &str =
    "ncgen gets the file name (海) through Wine's ANSI code page, which has no 海: \"Invalid argument\"";

const URL_WITHOUT_DRIVE: &str = "a file:// URL of an absolute Linux path: netcdf-c converts it only through MSYS2's \
     mount point (none here), gets NULL and reads through it (a page fault at 0x68)";

const DEFAULT_PLUGIN_PATH_BY_UNAME: &str = "its script tells MinGW from the shell (uname), here Linux's, and \
     compares the MinGW build's default plugin path, joined with ':', with the Unix form joined with ';'";

/// Why 4.9.3's fail under Wine: four of 4.10.1's causes. Its scripts that ask `ncpathcvt -F` for
/// a directory's local form (`findplugin.sh`, `compare_test_files.sh`) pass: the loader gives the
/// answer back in the Linux shell's form, as MSYS2's shell reads its own.
const STOCK_FAILURES_4_9_3: [(&str, &str); 5] = [
    ("ncdump_test_unicode_directory", UNICODE_NAME),
    ("ncdump_test_unicode_path", UNICODE_NAME),
    ("unit_test_run_dfaltpluginpath", DEFAULT_PLUGIN_PATH_BY_UNAME),
    ("nczarr_test_run_quantize", URL_WITHOUT_DRIVE),
    ("nczarr_test_run_interop", URL_WITHOUT_DRIVE),
];

/// Builds every target of the Windows build in `build` that links (`make -k`), and fails unless
/// exactly [`WindowsRelease::unlinkable`]'s failed to; then gives each program a name without `.exe`, which the
/// suite's tests and scripts run it by.
pub fn build_the_suite(h: &Harness, build: &Path, dlls: &[PathBuf], log_file: &Path) -> Result {
    log(format!("build the whole suite for Windows in {}", build.display()));
    let mut make = cmd("cmake", ["--build"]);
    make.arg(build).arg(format!("-j{}", h.jobs)).args(["--", "-k"]);
    succeeds_into_log(wine_env(h, &mut make, dlls), log_file, true)?;
    let text = read_to_string(log_file)?;
    let failed = failed_targets(&text);
    let mut expected: Vec<&str> =
        windows_release(h.version())?.unlinkable.iter().map(|(program, _)| *program).collect();
    expected.sort_unstable();
    if failed != expected {
        crate::text::print_matching(log_file, &["error", "undefined"], 40);
        fail!("the Windows build failed to make {failed:?}, expected only {expected:?} (log: {})", log_file.display());
    }
    link_names_without_exe(build)
}

/// The targets whose rules make reported failing: `make[2]: *** [dir/CMakeFiles/<target>.dir/...] Error 1`.
fn failed_targets(log: &str) -> Vec<&str> {
    let mut targets: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("***") && line.contains("Error"))
        .filter_map(|line| {
            let start = line.rfind("CMakeFiles/")? + "CMakeFiles/".len();
            let rest = &line[start..];
            rest.find(".dir/").map(|end| &rest[..end])
        })
        .collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}

/// A symlink `name` → `name.exe` beside each program of the build (not CMake's own probes).
fn link_names_without_exe(build: &Path) -> Result {
    let mut folders = vec![build.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .map_err(|e| crate::harness::Failure(format!("cannot list {}: {e}", folder.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && name != "CMakeFiles" {
                folders.push(path);
            } else if let Some(stem) = name.strip_suffix(".exe") {
                let bare = folder.join(stem);
                if bare.symlink_metadata().is_err() {
                    std::os::unix::fs::symlink(&name, &bare).map_err(|e| {
                        crate::harness::Failure(format!("cannot link {} to {name}: {e}", bare.display()))
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// The kernel runs PE programs (`MZ`) under [`MSYS_LIKE_LOADER`], written into `root`.
fn register_wine_with_binfmt(root: &Path) -> Result {
    const ENTRY: &str = "ncfilters-wine-msys-like";
    let loader = root.join("wine-msys-like");
    if std::fs::read_to_string(&loader).ok().as_deref() != Some(MSYS_LIKE_LOADER) {
        // The kernel holds a registered loader open: a changed one is written unregistered.
        crate::cross::unregister_binfmt_entry(ENTRY)?;
        crate::harness::write_file(&loader, MSYS_LIKE_LOADER)?;
        std::fs::set_permissions(&loader, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| crate::harness::Failure(format!("cannot make {} executable: {e}", loader.display())))?;
    }
    crate::cross::register_binfmt_entry(ENTRY, b"MZ", &[0xff, 0xff], &loader)
}

/// The suite on the stock and ncfilters builds in `tree` (`build-<flavour>`), both built by
/// [`build_the_suite`], under Wine (its loader written into `root`) with the build's
/// `libnetcdf.dll` and `dlls` on its DLL path and no plugin path: the release's
/// [`WindowsRelease::unlinkable`] and [`WindowsRelease::stock_failures`] fail on both.
pub fn run_on_both(h: &Harness, root: &Path, tree: &Path, dlls: &[PathBuf]) -> Result {
    register_wine_with_binfmt(root)?;
    let release = windows_release(h.version())?;
    let known: Vec<(&str, &str)> = release.unlinkable.iter().chain(release.stock_failures).copied().collect();
    for (test, why) in &known {
        println!("  expected to fail under Wine on both builds: {test} ({why})");
    }
    let ctest_of = |flavour: &'static str| {
        let build = tree.join(format!("build-{flavour}"));
        let path: Vec<PathBuf> = std::iter::once(build.clone()).chain(dlls.iter().cloned()).collect();
        move |arguments: Vec<String>| -> Command {
            let mut ctest = cmd("ctest", ["--test-dir"]);
            ctest.arg(&build).args(arguments).env(SUITE_DIALECT_VARIABLE, h.release.suite_dialect);
            wine_env(h, &mut ctest, &path);
            ctest
        }
    };
    let commands = FLAVOURS.map(ctest_of);
    let registered = registered_tests(&mut commands[0](vec!["-N".into()]))?;
    let suites = [0, 1].map(|i| EmulatedSuite {
        label: format!("{} for Windows (MinGW-w64) {}", h.version(), FLAVOURS[i]),
        log_file: tree.join(format!("ctest-{}.log", FLAVOURS[i])),
        ctest: &commands[i],
    });
    let known: Vec<&str> = known.iter().map(|(test, _)| *test).collect();
    run_pair_under(&WINE, h.jobs, suites, registered, &known)
}

/// How many tests `ctest -N` lists ("Total Tests: 219").
fn registered_tests(ctest: &mut Command) -> Result<usize> {
    let listing = output(ctest)?;
    let total = listing.lines().find_map(|line| line.trim().strip_prefix("Total Tests:")?.trim().parse().ok());
    total.ok_or_else(|| crate::harness::Failure(format!("ctest -N gave no \"Total Tests\":\n{listing}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_windows_release_is_a_release_and_names_each_test_once() {
        for release in &WINDOWS_RELEASES {
            assert!(crate::release::find(release.version).is_ok(), "{}", release.version);
            assert_eq!(windows_release(release.version).unwrap().version, release.version);
            let mut tests: Vec<&str> =
                release.unlinkable.iter().chain(release.stock_failures).map(|(t, _)| *t).collect();
            let named = tests.len();
            tests.sort_unstable();
            tests.dedup();
            assert_eq!(tests.len(), named, "{}: a test named twice", release.version);
        }
        assert!(windows_release("4.9.0").is_err(), "4.9.0 is not built for Windows");
    }

    #[test]
    fn the_loader_gives_windows_programs_absolute_paths_on_wine_s_z_drive() {
        let script = MSYS_LIKE_LOADER.replace("exec /usr/lib/wine/wine64", "exec printf '%s\\n'");
        assert_ne!(script, MSYS_LIKE_LOADER);
        let out = Command::new("sh")
            .args([
                "-c",
                &script,
                "loader",
                "prog.exe",
                "/tmp/x.nc",
                "-o",
                "/no-such-ncfilters-dir/y",
                "rel/z",
                "/",
                "a b",
            ])
            .output()
            .unwrap();
        let lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
        assert_eq!(lines, ["prog.exe", "Z:/tmp/x.nc", "-o", "/no-such-ncfilters-dir/y", "rel/z", "/", "a b"]);
        let ncpathcvt =
            Command::new("sh").args(["-c", &script, "loader", "/b/ncdump/ncpathcvt", "/tmp"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&ncpathcvt.stdout), "/b/ncdump/ncpathcvt\n/tmp\n");
    }

    #[test]
    fn the_loader_gives_ncpathcvt_s_local_form_of_a_directory_back_in_the_linux_shell_s() {
        let script = MSYS_LIKE_LOADER
            .replace("exec /usr/lib/wine/wine64", "wine_stand_in")
            .replace("/usr/lib/wine/wine64", "wine_stand_in");
        // ncpathcvt under Wine: its last argument, with Windows' line end.
        let wine_stand_in = "wine_stand_in() { eval \"last=\\${$#}\"; printf '%s\\r\\n' \"$last\"; exit 0; }\n";
        let answer = |arguments: &[&str]| {
            let out = Command::new("sh")
                .args(["-c", &format!("{wine_stand_in}{script}"), "loader", "/b/ncdump/ncpathcvt"])
                .args(arguments)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(answer(&["-F", "/work/plugins"]), "/work/plugins\n");
        assert_eq!(answer(&["-F", "rel/dir"]), "rel/dir\r\n", "only absolute paths");
        assert_eq!(answer(&["-F", "-w", "/work"]), "/work\r\n", "only -F alone");
    }

    #[test]
    fn the_loader_gives_windows_programs_the_environment_s_paths_on_the_z_drive() {
        let script = MSYS_LIKE_LOADER.replace(
            "exec /usr/lib/wine/wine64 \"$program\" \"$@\"",
            "printf '%s|%s|%s|%s\\n' \"$HOME\" \"$srcdir\" \"$HDF5_PLUGIN_PATH\" \"${TOPSRCDIR-unset}\"; exit",
        );
        assert_ne!(script, MSYS_LIKE_LOADER);
        for program in ["prog.exe", "/b/ncdump/ncpathcvt"] {
            let out = Command::new("sh")
                .args(["-c", &script, "loader", program])
                .env("HOME", "/root")
                .env("srcdir", "rel/dir")
                .env("HDF5_PLUGIN_PATH", "/a/p:/b/q")
                .env_remove("TOPSRCDIR")
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), "Z:/root|rel/dir|Z:/a/p;Z:/b/q|unset\n", "{program}");
            let windows_list = Command::new("sh")
                .args(["-c", &script, "loader", program])
                .env("HDF5_PLUGIN_PATH", "/tmp;/root")
                .output();
            let text = String::from_utf8_lossy(&windows_list.unwrap().stdout).into_owned();
            assert!(text.contains("|/tmp;/root|"), "a list with ; is Windows' already: {text}");
        }
    }

    #[test]
    fn failed_targets_are_the_rules_make_reports() {
        let log = "make[2]: *** [nc_test4/CMakeFiles/tst_udf.dir/build.make:97: nc_test4/tst_udf.exe] Error 1\n\
                   make[1]: *** [CMakeFiles/Makefile2:3210: nc_test4/CMakeFiles/tst_udf.dir/all] Error 2\n\
                   [ 50%] Built target CMakeFiles/ok.dir\n\
                   make: *** [Makefile:146: all] Error 2\n";
        assert_eq!(failed_targets(log), ["tst_udf"]);
        let top = "gmake[1]: *** [CMakeFiles/Makefile2:5985: nc_test4/CMakeFiles/nc_test4_tst_udf.dir/all] Error 2\n";
        assert_eq!(failed_targets(top), ["nc_test4_tst_udf"]);
    }
}
