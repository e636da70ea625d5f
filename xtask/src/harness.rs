// SPDX-License-Identifier: BSD-3-Clause
//! What every step shares: the settings from the environment, the failure type, the `==`
//! progress lines and the stage timer.

use std::env;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::release::{self, BuildSystem, Release};

/// Why the run stops; printed as `harness: <message>` with a non-zero exit.
#[derive(Debug)]
pub struct Failure(pub String);

pub type Result<T = ()> = std::result::Result<T, Failure>;

/// Returns early with a `Failure` built like `format!`.
macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::harness::Failure(format!($($arg)*)))
    };
}
pub(crate) use fail;

/// A progress line, set off by a blank line as the steps' output is long.
pub fn log(message: impl std::fmt::Display) {
    println!("\n== {message}");
}

/// Cargo's home: `CARGO_HOME`, else `~/.cargo`.
pub fn cargo_home() -> PathBuf {
    env_path_or_home("CARGO_HOME", ".cargo")
}

/// rustup's home: `RUSTUP_HOME`, else `~/.rustup`.
pub fn rustup_home() -> PathBuf {
    env_path_or_home("RUSTUP_HOME", ".rustup")
}

fn env_path_or_home(variable: &str, in_home: &str) -> PathBuf {
    env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| env::var_os("HOME").map(PathBuf::from).unwrap_or_default().join(in_home))
}

/// The settings of a run (NCFILTERS_* environment variables) and the paths derived from them.
pub struct Harness {
    pub repo: PathBuf,
    /// The netcdf-c release the netcdf-c steps build and test (`NCFILTERS_NETCDF_VERSION`).
    pub release: &'static Release,
    /// The release's work directory: `NCFILTERS_WORK` for the first release, `<it>-<version>`
    /// for the others.
    pub work: PathBuf,
    /// `NCFILTERS_WORK` itself.
    work_root: PathBuf,
    pub cache: PathBuf,
    pub jobs: usize,
    pub fuzz_seconds: String,
}

impl Harness {
    pub fn from_env() -> Result<Harness> {
        // xtask/ sits at the root of the repository.
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ has a parent directory").to_path_buf();
        let home = env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        let work_root = env_path("NCFILTERS_WORK").unwrap_or_else(|| repo.join("target/harness"));
        let release =
            release::find(&env_or("NCFILTERS_NETCDF_VERSION", release::RELEASES[0].version)).map_err(Failure)?;
        let cache = env_path("NCFILTERS_CACHE").unwrap_or_else(|| home.join(".cache/ncfilters"));
        let jobs = match env::var("NCFILTERS_JOBS") {
            Ok(jobs) => match jobs.trim().parse() {
                Ok(n) if n > 0 => n,
                _ => fail!("NCFILTERS_JOBS must be a positive number, not {jobs:?}"),
            },
            Err(_) => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let fuzz_seconds = env_or("NCFILTERS_FUZZ_SECONDS", "20");
        prepend_cargo_bin_to_path(&home);
        let work = release_work_dir(&work_root, release);
        Ok(Harness { repo, release, work, work_root, cache, jobs, fuzz_seconds })
    }

    /// The same settings for another netcdf-c release.
    pub fn for_release(&self, release: &'static Release) -> Harness {
        Harness {
            repo: self.repo.clone(),
            release,
            work: release_work_dir(&self.work_root, release),
            work_root: self.work_root.clone(),
            cache: self.cache.clone(),
            jobs: self.jobs,
            fuzz_seconds: self.fuzz_seconds.clone(),
        }
    }

    /// The same settings with the repository and the release's work directory elsewhere (a
    /// staged copy; the Python virtualenv stays where it is).
    pub fn with_trees(&self, repo: PathBuf, work: PathBuf) -> Harness {
        Harness { repo, work, ..self.for_release(self.release) }
    }

    /// The release's netcdf-c version.
    pub fn version(&self) -> &'static str {
        self.release.version
    }

    /// cargo's target directory for the release's ncfilters builds: the repository's `target`
    /// for the first release, `target/nc-<version>` for the others (their layouts differ).
    pub fn cargo_target(&self) -> PathBuf {
        if self.release.is_first() {
            self.repo.join("target")
        } else {
            // A tree built like a known release builds that release's library.
            self.repo.join(format!("target/nc-{}", self.release.built_like.unwrap_or(self.release.version)))
        }
    }

    /// Removes the release's builds and work directory, unless it is the first release, whose
    /// cargo target is the repository's own (`target`).
    pub fn remove_release_trees(&self) -> Result {
        if self.release.is_first() {
            return Ok(());
        }
        remove_dir_all_if_exists(&self.cargo_target())?;
        remove_dir_all_if_exists(&self.work)
    }

    pub fn build_dir(&self, flavour: &str) -> PathBuf {
        self.work.join(format!("build-{flavour}"))
    }

    pub fn ncfilters_build(&self) -> PathBuf {
        self.build_dir("ncfilters")
    }

    pub fn stock_lib(&self) -> PathBuf {
        self.lib_dir("stock").join("libnetcdf.so")
    }

    /// Where a build puts libnetcdf.so: `liblib/` in 4.9.0 and 4.9.2, the build directory itself
    /// from 4.9.3 on (the library target moved to the top-level CMakeLists.txt).
    pub fn lib_dir(&self, flavour: &str) -> PathBuf {
        self.lib_dir_in(&self.build_dir(flavour))
    }

    /// [`Self::lib_dir`] of the release's build tree `build`, wherever it is (a root's, debhelper's).
    pub fn lib_dir_in(&self, build: &Path) -> PathBuf {
        let build = build.to_path_buf();
        match self.release.build_system {
            BuildSystem::Enable => build.join("liblib"),
            BuildSystem::NetcdfPrefixed => build,
        }
    }

    /// A file directly in the work directory (logs, mostly).
    pub fn work_file(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }

    /// `NCFILTERS_WORK`: what every release's work shares (the virtualenv, the HDF5 builds).
    pub fn work_root(&self) -> &Path {
        &self.work_root
    }

    /// The Python virtualenv, shared by every release's work directory.
    pub fn venv(&self) -> PathBuf {
        self.work_root.join("venv")
    }

    pub fn ensure_work_dir(&self) -> Result {
        create_dir_all(&self.work)
    }
}

fn release_work_dir(work_root: &Path, release: &Release) -> PathBuf {
    if release.is_first() {
        work_root.to_path_buf()
    } else {
        let mut name = work_root.file_name().unwrap_or_default().to_os_string();
        name.push(format!("-{}", release.version));
        work_root.with_file_name(name)
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// An environment variable's value, or the default when it is unset or empty.
pub fn env_or(name: &str, default: &str) -> String {
    env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
}

/// cargo-fuzz and a rustup toolchain live in ~/.cargo/bin, which a login shell may not have put
/// on PATH (CI runs a plain bash).
fn prepend_cargo_bin_to_path(home: &Path) {
    let mut paths = vec![home.join(".cargo/bin")];
    paths.extend(env::split_paths(&env::var_os("PATH").unwrap_or_default()));
    if let Ok(path) = env::join_paths(paths) {
        // Set once at start-up, before any thread or child process exists.
        #[allow(clippy::disallowed_methods, reason = "xtask is a program, not the library")]
        env::set_var("PATH", path);
    }
}

pub fn create_dir_all(dir: &Path) -> Result {
    std::fs::create_dir_all(dir).map_err(|e| Failure(format!("cannot create {}: {e}", dir.display())))
}

pub fn remove_dir_all_if_exists(dir: &Path) -> Result {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            fail!("cannot remove {}: {e}", dir.display())
        }
        _ => Ok(()),
    }
}

pub fn read_to_string(path: &Path) -> Result<String> {
    std::fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))
}

pub fn write_file(path: &Path, contents: &str) -> Result {
    std::fs::write(path, contents).map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))
}

/// Wall time of each stage and the disk left after it, printed as each ends and as a table for
/// `test`: a stage that fails on a full disk says so.
#[derive(Default)]
pub struct Stages {
    times: Vec<(String, u64, Option<u64>)>,
}

/// Below this, a failed stage is reported as having run out of disk.
const DISK_NEARLY_FULL_MIB: u64 = 1024;

impl Stages {
    pub fn run<T>(&mut self, name: &str, stage: impl FnOnce() -> Result<T>) -> Result<T> {
        let start = Instant::now();
        let result = stage();
        let seconds = start.elapsed().as_secs();
        let free = free_disk_mib(Path::new("."));
        let outcome = if result.is_ok() { "done" } else { "failed" };
        println!("== {name} {outcome} in {seconds} s");
        self.times.push((name.to_string(), seconds, free));
        match (result, free) {
            (Err(Failure(message)), Some(free)) if free < DISK_NEARLY_FULL_MIB => {
                Err(Failure(format!("{message} (the disk is nearly full: {free} MiB free)")))
            }
            (result, _) => result,
        }
    }

    /// The stages run so far, in order.
    pub fn names(&self) -> Vec<String> {
        self.times.iter().map(|(name, _, _)| name.clone()).collect()
    }

    pub fn print_table(&self) {
        log("stage times (and the disk free after each)");
        for (name, seconds, free) in &self.times {
            let free = free.map_or_else(|| "?".to_string(), |mib| format!("{:.1}", mib as f64 / 1024.0));
            println!("  {name:<24} {seconds:>6} s {free:>7} GiB free");
        }
        let total: u64 = self.times.iter().map(|(_, s, _)| s).sum();
        println!("  {:<24} {total:>6} s", "total");
    }
}

/// The space left to unprivileged users on `path`'s file system, in MiB, as `df -Pk` reports it.
pub fn free_disk_mib(path: &Path) -> Option<u64> {
    let out = std::process::Command::new("df").arg("-Pk").arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let kib: u64 = text.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib / 1024)
}
