// SPDX-License-Identifier: BSD-3-Clause
//! Debian roots for the distribution checks (`debian13`, `debian13-i386`, `deb`): a suite's
//! `debootstrap --variant=minbase` from the machine's own Debian mirror, made once per machine
//! (`<cache>/debian-<suite>-base`, or `debian-<suite>-<arch>-base` for an architecture the kernel
//! runs natively, i386), copied into a root per use, with packages from apt. Commands run inside as
//! root, in a mount namespace that ends with each command.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{self, fail, log, read_to_string, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};
use crate::text::print_tail;

/// Where the root's own work directory is, inside it.
pub const WORK_INSIDE: &str = "/work";
/// Where the repository is bind-mounted inside a root.
pub const REPO_INSIDE: &str = "/ncfilters";
/// The file a finished debootstrap leaves in the base, and so in every copy of it: it names the
/// root's architecture when that is not the machine's.
const DEBOOTSTRAPPED: &str = ".ncfilters-debootstrapped";

/// A Debian suite on one architecture: the machine's own, or one its kernel runs natively.
#[derive(Clone, Copy)]
pub struct Suite {
    pub name: &'static str,
    /// `None` for the machine's architecture; else `debootstrap --arch`'s name (`i386`).
    pub foreign_arch: Option<&'static str>,
}

impl Suite {
    pub const fn native(name: &'static str) -> Suite {
        Suite { name, foreign_arch: None }
    }

    fn base_name(&self) -> String {
        match self.foreign_arch {
            None => format!("debian-{}-base", self.name),
            Some(arch) => format!("debian-{}-{arch}-base", self.name),
        }
    }
}

/// A root of `suite` at `<cache>/<name>` with `packages`, made once and reused while its stamp
/// names the same packages (a root made but not yet stamped only gets the missing packages).
pub fn ensure(h: &Harness, name: &str, suite: Suite, packages: &[&str]) -> Result<PathBuf> {
    let root = h.cache.join(name);
    let stamp = h.cache.join(format!("{name}.packages"));
    let wanted = packages.join(" ");
    if read_to_string(&stamp).is_ok_and(|text| text.trim() == wanted) {
        return Ok(root);
    }
    if !root.join(DEBOOTSTRAPPED).is_file() {
        copy_of_base(h, suite, &root)?;
    }
    apt_install(h, &root, &format!("apt-get install inside the {name} root"), packages)?;
    harness::write_file(&stamp, &format!("{wanted}\n"))?;
    Ok(root)
}

/// A root of `suite` at `<cache>/<name>` as debootstrap made it, made anew on every call.
pub fn fresh(h: &Harness, name: &str, suite: Suite) -> Result<PathBuf> {
    let root = h.cache.join(name);
    copy_of_base(h, suite, &root)?;
    Ok(root)
}

/// `apt-get install` of `packages` (names, or `.deb` paths inside the root) in `root`.
pub fn apt_install(h: &Harness, root: &Path, what: &str, packages: &[&str]) -> Result {
    std::fs::copy("/etc/resolv.conf", root.join("etc/resolv.conf"))
        .map_err(|e| harness::Failure(format!("cannot copy resolv.conf into {}: {e}", root.display())))?;
    // `name:arch` asks for another architecture's package (a cross build's libraries): dpkg must know it.
    let mut architectures: Vec<&str> = packages
        .iter()
        .filter(|package| !package.ends_with(".deb"))
        .filter_map(|package| package.split_once(':').map(|(_, arch)| arch))
        .collect();
    architectures.sort_unstable();
    architectures.dedup();
    let add: String = architectures.iter().map(|arch| format!("dpkg --add-architecture {arch} && ")).collect();
    let install = format!(
        "{add}apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends {}",
        packages.join(" ")
    );
    step(h, root, what, &["sh", "-c", install.as_str()])
}

/// `root` made a copy of the suite's debootstrap (debootstrapped first if this machine has none).
fn copy_of_base(h: &Harness, suite: Suite, root: &Path) -> Result {
    let base_name = suite.base_name();
    let base = h.cache.join(&base_name);
    if !base.join(DEBOOTSTRAPPED).is_file() {
        harness::remove_dir_all_if_exists(&base)?;
        let Some((mirror, _)) = crate::setup::first_deb_entry() else {
            fail!("no Debian mirror in the machine's apt sources to debootstrap {} from", suite.name);
        };
        log(format!("debootstrap --variant=minbase {} into {}", suite.name, base.display()));
        let started = std::time::Instant::now();
        let log_file = h.work_file(&format!("debootstrap-{base_name}.log"));
        let mut debootstrap = cmd("debootstrap", ["--variant=minbase"]);
        if let Some(arch) = suite.foreign_arch {
            debootstrap.arg(format!("--arch={arch}"));
        }
        debootstrap.arg(suite.name).arg(&base).arg(&mirror);
        if !succeeds_into_log(&mut debootstrap, &log_file, false)? {
            print_tail(&log_file, 30);
            fail!("debootstrap of {base_name} failed");
        }
        // A suite's security updates (Debian 12's rustc-web comes from them), where the machine has them.
        let security = format!("{}-security", suite.name);
        if let Some(uri) = crate::setup::deb_entry_for_suite(&security) {
            harness::write_file(
                &base.join("etc/apt/sources.list.d/security.list"),
                &format!("deb {uri} {security} main\n"),
            )?;
        }
        harness::write_file(&base.join(DEBOOTSTRAPPED), suite.foreign_arch.unwrap_or_default())?;
        println!("   {} s", started.elapsed().as_secs());
    }
    harness::remove_dir_all_if_exists(root)?;
    run(cmd("cp", ["-a"]).arg(&base).arg(root))
}

/// The architecture `root` was debootstrapped for, when not the machine's.
fn foreign_arch_of(root: &Path) -> Option<String> {
    let arch = read_to_string(&root.join(DEBOOTSTRAPPED)).ok()?.trim().to_string();
    (!arch.is_empty()).then_some(arch)
}

/// The Debian multiarch directory of `root`'s libraries (`x86_64-linux-gnu`, `i386-linux-gnu`).
fn multiarch_of(root: &Path) -> &'static str {
    match foreign_arch_of(root).as_deref() {
        Some("i386") => "i386-linux-gnu",
        _ => "x86_64-linux-gnu",
    }
}

/// A command run inside the root, as root, in a mount namespace of its own (`unshare --mount`)
/// where /proc, /dev and the repository are mounted, and the host's Rust toolchain (at its own
/// paths) in a root of the machine's architecture; a foreign one (i386) has only Debian's own
/// cargo and rustc, and runs under `linux32`, as Debian's i386 buildds do, so `uname -m` says
/// i686. The mounts end with the command, however it ends, so none outlives a killed run.
pub fn inside<S: AsRef<str>>(h: &Harness, root: &Path, args: &[S]) -> Command {
    let (cargo_home, rustup_home) = (harness::cargo_home(), harness::rustup_home());
    let foreign = foreign_arch_of(root).is_some();
    let mut binds = vec![(PathBuf::from("/dev"), root.join("dev"))];
    binds.push((h.repo.clone(), root.join(REPO_INSIDE.trim_start_matches('/'))));
    if !foreign {
        for dir in [&cargo_home, &rustup_home] {
            binds.push((dir.clone(), root.join(dir.strip_prefix("/").unwrap_or(dir))));
        }
    }
    let mut script = format!("mount -t proc proc '{}/proc'", root.display());
    for (from, to) in &binds {
        let _ = std::fs::create_dir_all(to);
        script.push_str(&format!(" && mount --bind '{}' '{}'", from.display(), to.display()));
    }
    let personality = if foreign { "linux32 " } else { "" };
    script.push_str(&format!(" && exec {personality}chroot '{}' \"$@\"", root.display()));
    let mut command = cmd("unshare", ["--mount", "--propagation", "private", "sh", "-c", script.as_str(), "sh"]);
    command.arg("env").arg("-i").arg("HOME=/root").arg("LANG=C.UTF-8");
    if foreign {
        command.arg("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    } else {
        command
            .arg(format!("PATH={}/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", cargo_home.display()))
            .arg(format!("CARGO_HOME={}", cargo_home.display()))
            .arg(format!("RUSTUP_HOME={}", rustup_home.display()));
    }
    command.args(args.iter().map(|arg| arg.as_ref()));
    command
}

/// The log of the last [`step`] in `root`.
pub fn step_log(h: &Harness, root: &Path) -> PathBuf {
    let name = root.file_name().unwrap_or_default().to_string_lossy();
    h.work_file(&format!("{name}-step.log"))
}

/// Runs a step inside the root into [`step_log`], and prints its wall time; on failure prints
/// its log's tail.
pub fn step<S: AsRef<str>>(h: &Harness, root: &Path, what: &str, args: &[S]) -> Result {
    log(what);
    let started = std::time::Instant::now();
    let log_file = step_log(h, root);
    if !succeeds_into_log(&mut inside(h, root, args), &log_file, false)? {
        print_tail(&log_file, 40);
        fail!("{what} failed after {} s", started.elapsed().as_secs());
    }
    println!("   {} s", started.elapsed().as_secs());
    Ok(())
}

/// [`step`], then the text of its log.
pub fn step_output<S: AsRef<str>>(h: &Harness, root: &Path, what: &str, args: &[S]) -> Result<String> {
    step(h, root, what, args)?;
    read_to_string(&step_log(h, root))
}

/// [`step_output`] of the shell `script` with the network cut (`unshare --net`), as a
/// distribution's builder runs.
pub fn offline_step_output(h: &Harness, root: &Path, what: &str, script: &str) -> Result<String> {
    step_output(h, root, what, &["unshare", "--net", "--", "sh", "-c", script])
}

/// The cases a client script (tests/debian13/clients.sh, tests/deb/gdal.sh) printed: `PASS <case>`
/// and `FAIL <case>: <why>` lines.
pub struct ClientCases {
    passed: Vec<String>,
    /// Each failed case with what it printed.
    failed: Vec<(String, String)>,
}

/// A case the client program itself cannot do, whatever library it runs on (it was compiled
/// against headers that lacked the feature): it fails on both sides, printing `says`.
pub struct ClientLacks {
    pub case: &'static str,
    pub says: &'static str,
}

impl ClientCases {
    pub fn read(output: &str) -> ClientCases {
        let passed = output.lines().filter_map(|line| line.strip_prefix("PASS ")).map(String::from).collect();
        let failed = output
            .lines()
            .filter_map(|line| line.strip_prefix("FAIL "))
            .map(|rest| {
                let (case, why) = rest.split_once(": ").unwrap_or((rest, ""));
                (case.to_string(), why.to_string())
            })
            .collect();
        ClientCases { passed, failed }
    }

    /// That clients.sh ran a case (passed or failed) of each of `programs` (`nco`, whose cases are
    /// `ncks`'s, and `cdo`): the root has them, so none may have been left out.
    pub fn must_have_run_each_of(&self, programs: &[&str]) -> Result {
        for program in programs {
            let command = if *program == "nco" { "ncks" } else { program };
            let ran = |case: &str| case.split_whitespace().next() == Some(command);
            if !self.passed.iter().any(|case| ran(case)) && !self.failed.iter().any(|(case, _)| ran(case)) {
                fail!("{program} is installed, but clients.sh ran none of its cases");
            }
        }
        Ok(())
    }

    fn total(&self) -> usize {
        self.passed.len() + self.failed.len()
    }

    /// Whether `case` failed here as a client that lacks it does (`lacks`).
    fn failed_as_lacking(&self, case: &str, lacks: &[ClientLacks]) -> bool {
        lacks
            .iter()
            .filter(|lack| lack.case == case)
            .any(|lack| self.failed.iter().any(|(failed, why)| failed == case && why.contains(lack.says)))
    }

    /// That ncfilters' side (`self`, `label`) succeeds in every case but those the client program
    /// lacks (`lacks`, which must then fail on both sides as a lacking client does), and so in
    /// each case the distribution's own library (`theirs`, `their_label`) succeeds in; returns
    /// both counts.
    pub fn must_pass_all(
        &self,
        label: &str,
        theirs: &ClientCases,
        their_label: &str,
        lacks: &[ClientLacks],
    ) -> Result<String> {
        if let Some(lost) = theirs.passed.iter().find(|case| !self.passed.contains(case)) {
            fail!("{lost} succeeds on {their_label} but not on {label}");
        }
        let lacking: Vec<&str> = self
            .failed
            .iter()
            .map(|(case, _)| case.as_str())
            .filter(|case| self.failed_as_lacking(case, lacks) && theirs.failed_as_lacking(case, lacks))
            .collect();
        if let Some((case, why)) = self.failed.iter().find(|(case, _)| !lacking.contains(&case.as_str())) {
            fail!("{case} fails on {label}: {why} ({} of {} cases succeeded)", self.passed.len(), self.total());
        }
        let lacked = if lacking.is_empty() {
            String::new()
        } else {
            format!("; the programs themselves lack {lacking:?} (both sides fail them)")
        };
        Ok(format!(
            "{} of {} on {their_label}, {} of {} on {label}{lacked}",
            theirs.passed.len(),
            theirs.total(),
            self.passed.len(),
            self.total()
        ))
    }
}

/// The counts and failed tests of a `pytest -q -rfs` run.
pub struct PytestOutcome {
    pub passed: usize,
    pub failed: Vec<String>,
    pub skipped: usize,
}

impl PytestOutcome {
    pub fn read(text: &str) -> PytestOutcome {
        let failed = text
            .lines()
            .filter_map(|line| line.strip_prefix("FAILED "))
            .map(|rest| rest.split(" - ").next().unwrap_or(rest).to_string())
            .collect();
        let summary =
            text.lines().rev().find(|line| line.contains(" passed") || line.contains(" failed")).unwrap_or("");
        let count = |word: &str| -> usize {
            let words: Vec<&str> =
                summary.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()).collect();
            words.windows(2).find(|pair| pair[1] == word).and_then(|pair| pair[0].parse().ok()).unwrap_or(0)
        };
        PytestOutcome { passed: count("passed"), failed, skipped: count("skipped") }
    }

    /// "107 passed, 1 failed [..], 5 skipped".
    pub fn counts(&self) -> String {
        format!("{} passed, {} failed {:?}, {} skipped", self.passed, self.failed.len(), self.failed, self.skipped)
    }

    /// That ncfilters' side (`self`, `label`) fails no test the distribution's library (`theirs`)
    /// passes, and passes at least as many.
    pub fn must_fail_nothing_passing_on(&self, label: &str, theirs: &PytestOutcome, their_label: &str) -> Result {
        if let Some(test) = self.failed.iter().find(|test| !theirs.failed.contains(test)) {
            fail!("{test} passes on {their_label} and fails on {label}");
        }
        if self.passed < theirs.passed {
            fail!("{} tests passed on {label}, {} on {their_label}", self.passed, theirs.passed);
        }
        Ok(())
    }
}

/// netCDF4-python `version`'s sdist, downloaded once into the cache. pip asks an sdist for its
/// metadata, which looks for netCDF's and HDF5's headers: `root`'s, which has libnetcdf-dev.
pub fn netcdf4_python_sdist(h: &Harness, root: &Path, version: &str) -> Result<PathBuf> {
    // Releases before 1.7 name it netCDF4-<version>.tar.gz.
    let names = [format!("netcdf4-{version}.tar.gz"), format!("netCDF4-{version}.tar.gz")];
    let cached = || names.iter().map(|name| h.cache.join(name)).find(|sdist| sdist.is_file());
    if let Some(sdist) = cached() {
        return Ok(sdist);
    }
    crate::interop::python_env(h)?;
    let requirement = format!("netCDF4=={version}");
    log(format!("pip download {requirement} (sdist)"));
    let usr = root.join("usr");
    let mut pip = cmd(h.venv().join("bin/pip"), ["download", "-q", "--no-deps", "--no-binary", "netCDF4"]);
    pip.arg(&requirement)
        .arg("-d")
        .arg(&h.cache)
        .env("USE_NCCONFIG", "0")
        .env("NETCDF4_DIR", &usr)
        .env("HDF5_INCDIR", usr.join("include/hdf5/serial"))
        .env("HDF5_LIBDIR", usr.join(format!("lib/{}/hdf5/serial", multiarch_of(root))));
    run(&mut pip)?;
    match cached() {
        Some(sdist) => Ok(sdist),
        None => fail!("pip download {requirement} made no {} in {}", names[0], h.cache.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncfilters_must_pass_every_case_and_every_case_the_distribution_passes() {
        let theirs = ClientCases::read("PASS a\nFAIL b: no filter\nnoise\n");
        let all = ClientCases::read("PASS a\nPASS b\n");
        assert_eq!(
            all.must_pass_all("ours", &theirs, "theirs", &[]).ok().as_deref(),
            Some("1 of 2 on theirs, 2 of 2 on ours")
        );
        assert!(ClientCases::read("FAIL a: x\nPASS b\n").must_pass_all("ours", &theirs, "theirs", &[]).is_err());
        assert!(ClientCases::read("PASS a\nFAIL b: x\n").must_pass_all("ours", &theirs, "theirs", &[]).is_err());
        // A case the distribution passes that ncfilters' side lacks altogether.
        assert!(ClientCases::read("PASS b\n").must_pass_all("ours", &theirs, "theirs", &[]).is_err());
    }

    #[test]
    fn a_case_the_client_lacks_must_fail_on_both_sides_as_a_lacking_client() {
        let lacks = [ClientLacks { case: "b", says: "unsupported" }];
        let theirs = ClientCases::read("PASS a\nFAIL b: b is unsupported\n");
        let ours = ClientCases::read("PASS a\nFAIL b: b is unsupported here\n");
        assert_eq!(
            ours.must_pass_all("ours", &theirs, "theirs", &lacks).ok().as_deref(),
            Some("1 of 2 on theirs, 1 of 2 on ours; the programs themselves lack [\"b\"] (both sides fail them)")
        );
        let other_failure = ClientCases::read("PASS a\nFAIL b: crashed\n");
        assert!(
            other_failure.must_pass_all("ours", &theirs, "theirs", &lacks).is_err(),
            "not how a lacking client fails"
        );
        let theirs_other = ClientCases::read("PASS a\nFAIL b: no filter\n");
        assert!(ours.must_pass_all("ours", &theirs_other, "theirs", &lacks).is_err(), "theirs must lack it too");
    }

    #[test]
    fn a_client_whose_cases_were_all_left_out_fails() {
        let cases = ClientCases::read("PASS ncks --cmp=zst\nFAIL cdo -z zstd: unsupported\n");
        assert!(cases.must_have_run_each_of(&["nco", "cdo"]).is_ok());
        let nco_only = ClientCases::read("PASS ncks --cmp=zst\n");
        assert!(nco_only.must_have_run_each_of(&["nco"]).is_ok());
        assert!(nco_only.must_have_run_each_of(&["nco", "cdo"]).is_err());
    }

    #[test]
    fn pytest_counts_and_failures_are_read() {
        let text = "....F..s\n=========================== short test summary info ============================\n\
                    SKIPPED [1] test_x.py:3: zstd filter not available\n\
                    FAILED test_dap.py::DapTestCase::runTest - OSError: [Errno -68] NetCDF: I/O failure\n\
                    1 failed, 107 passed, 5 skipped in 21.01s\n";
        let outcome = PytestOutcome::read(text);
        assert_eq!((outcome.passed, outcome.skipped), (107, 5));
        assert_eq!(outcome.failed, ["test_dap.py::DapTestCase::runTest"]);
        assert_eq!(PytestOutcome::read("3 passed in 0.1s\n").passed, 3);
    }

    #[test]
    fn ncfilters_must_fail_no_test_the_distribution_passes() {
        let theirs = PytestOutcome::read("FAILED a.py::x - e\n1 failed, 10 passed in 1s\n");
        let same = PytestOutcome::read("FAILED a.py::x - e\n1 failed, 10 passed in 1s\n");
        assert!(same.must_fail_nothing_passing_on("ours", &theirs, "theirs").is_ok());
        let other = PytestOutcome::read("FAILED b.py::y - e\n1 failed, 10 passed in 1s\n");
        assert!(other.must_fail_nothing_passing_on("ours", &theirs, "theirs").is_err());
        let fewer = PytestOutcome::read("9 passed in 1s\n");
        assert!(fewer.must_fail_nothing_passing_on("ours", &theirs, "theirs").is_err());
    }
}
