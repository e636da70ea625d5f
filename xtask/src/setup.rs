// SPDX-License-Identifier: BSD-3-Clause
//! `setup`: the apt packages, netcdf-c's source (Debian's orig tarball, fetched with
//! `apt-get source`) and the Rust dependencies.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::harness::{self, fail, log, Failure, Harness, Result};
use crate::netcdf_source;
use crate::process::{as_root, cmd, on_path, output, run, succeeds_quietly};
use crate::release::Source;
use crate::text::last_lines;

const APT_PACKAGES: [&str; 24] = [
    "cmake",
    "libhdf5-dev",
    "libzstd-dev",
    "libbz2-dev",
    "libblosc-dev",
    "libaec-dev",
    "zlib1g-dev",
    "libxml2-dev",
    "libcurl4-openssl-dev",
    "m4",
    "pkg-config",
    "make",
    "gcc",
    "g++",
    "file",
    "dpkg-dev",
    "valgrind",
    // Debian's own netcdf-c 4.9.0 programs (ncdump, nccopy, ncgen), for the drop-in test.
    "netcdf-bin",
    // The parallel (MPI) build pair: OpenMPI's mpicc and mpiexec, and HDF5 built with it.
    "libopenmpi-dev",
    "openmpi-bin",
    "libhdf5-openmpi-dev",
    // The Debian 13 root of the `debian13` step.
    "debootstrap",
    // HDF5 2.2.0 built to require signed plugins, and signing one (the HDF5 cells of `matrix`).
    "libssl-dev",
    "openssl",
];

const DEB_SRC_TARGET: &str = "/etc/apt/sources.list.d/ncfilters-deb-src.sources";

/// The Debian version of the 4.9.0 source (bookworm's): pinned, so that deb-src entries of other
/// suites never change which source the 4.9.0 builds get.
const DEBIAN_4_9_0: &str = "1:4.9.0-3";

/// The source archive's file name in the cache.
fn source_archive(h: &Harness) -> String {
    match &h.release.source {
        Source::GitArchive { file, .. } => file.to_string(),
        Source::Apt | Source::Tarball { .. } => format!("netcdf_{}.orig.tar.gz", h.version()),
    }
}

/// The release's source first, so that a machine that cannot get it hears so in seconds.
pub fn setup(h: &Harness) -> Result {
    fetch_netcdf_source(h)?;
    install_packages()?;
    fetch_rust_dependencies(h)
}

/// [`setup`] for a run of `releases`: their sources first (not that of `h`'s release, which the
/// run may not build), then the packages and the Rust dependencies.
pub fn setup_for(h: &Harness, releases: &[&'static crate::release::Release]) -> Result {
    for release in releases {
        fetch_netcdf_source(&h.for_release(release))?;
    }
    install_packages()?;
    fetch_rust_dependencies(h)
}

pub fn install_packages() -> Result {
    if install_apt_packages(&APT_PACKAGES)? {
        keep_serial_hdf5_pc()?;
    }
    Ok(())
}

/// The `bin` folder of a virtualenv in the cache (`venv-<name>`) holding PyPI's `packages`, made
/// on first use: the tools Debian 12 has too old or not at all. `program` is one of them, whose
/// presence says the venv is complete.
pub fn pypi_tools(h: &Harness, name: &str, packages: &[&str], program: &str) -> Result<std::path::PathBuf> {
    let venv = h.cache.join(format!("venv-{name}"));
    let bin = venv.join("bin");
    if crate::process::is_executable(&bin.join(program)) {
        return Ok(bin);
    }
    log(format!("{} from PyPI into {}", packages.join(" "), venv.display()));
    run(cmd("python3", ["-m", "venv"]).arg(&venv))?;
    run(cmd(bin.join("pip"), ["install", "-q", "--disable-pip-version-check"]).args(packages))?;
    Ok(bin)
}

/// `apt-get install` of those of `packages` the machine lacks: whether there were any.
pub fn install_apt_packages<S: AsRef<str>>(packages: &[S]) -> Result<bool> {
    let mut missing = Vec::new();
    for package in packages.iter().map(AsRef::as_ref) {
        if !succeeds_quietly(&mut cmd("dpkg", ["-s", package]))? {
            missing.push(package);
        }
    }
    if missing.is_empty() {
        return Ok(false);
    }
    log(format!("apt-get install {}", missing.join(" ")));
    run(&mut as_root("apt-get", ["update", "-q"])?)?;
    let mut install = as_root("env", ["DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q"])?;
    install.args(&missing);
    run(&mut install)?;
    Ok(true)
}

/// Installing libhdf5-openmpi-dev points the `hdf5.pc` alternative at the MPI HDF5 (it has the
/// higher priority); the serial builds and everything else here want the serial one.
fn keep_serial_hdf5_pc() -> Result {
    let serial = "/usr/lib/x86_64-linux-gnu/pkgconfig/hdf5-serial.pc";
    let current = output(&mut cmd("update-alternatives", ["--query", "hdf5.pc"])).unwrap_or_default();
    if !Path::new(serial).is_file() || current.lines().any(|line| line == format!("Value: {serial}")) {
        return Ok(());
    }
    run(&mut as_root("update-alternatives", ["--set", "hdf5.pc", serial])?)
}

/// A deb-src entry for the same mirror and suite as the machine's first deb entry, so that
/// `apt-get source` works on a stock Debian image (which has none). Another suite's deb-src entry
/// (sid's, which the HDF5 1.14.6 build adds) does not count.
fn ensure_deb_src() -> Result {
    let Some((uri, suite)) = first_deb_entry() else {
        fail!("no Debian deb entry found to derive a deb-src entry from");
    };
    if Path::new(DEB_SRC_TARGET).is_file() || has_deb_src_entry_for(&suite) {
        return Ok(());
    }
    add_deb_src(DEB_SRC_TARGET, &uri, &suite)
}

/// A deb-src entry (source packages only: binary packages stay the machine's) for `suite` of the
/// machine's own mirror.
pub fn ensure_deb_src_for(suite: &str) -> Result {
    let target = format!("/etc/apt/sources.list.d/ncfilters-deb-src-{suite}.sources");
    if Path::new(&target).is_file() {
        return Ok(());
    }
    let Some((uri, _)) = first_deb_entry() else {
        fail!("no Debian deb entry found to derive a deb-src entry from");
    };
    add_deb_src(&target, &uri, suite)
}

fn add_deb_src(target: &str, uri: &str, suite: &str) -> Result {
    log(format!("adding deb-src for {uri} {suite}"));
    let entry = format!(
        "Types: deb-src\nURIs: {uri}\nSuites: {suite}\nComponents: main\n\
         Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    );
    write_as_root(target, &entry)?;
    run(&mut as_root("apt-get", ["update", "-q"])?)
}

fn write_as_root(target: &str, contents: &str) -> Result {
    let mut tee = as_root("tee", [target])?;
    let mut child = tee
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| Failure(format!("cannot run tee {target}: {e}")))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(contents.as_bytes())
        .map_err(|e| Failure(format!("cannot write {target}: {e}")))?;
    match child.wait() {
        Ok(status) if status.success() => Ok(()),
        _ => fail!("cannot write {target}"),
    }
}

/// The apt source files: sources.list and everything under sources.list.d/.
fn apt_source_texts() -> Vec<(std::path::PathBuf, String)> {
    let mut files = vec![Path::new("/etc/apt/sources.list").to_path_buf()];
    crate::text::collect_files(Path::new("/etc/apt/sources.list.d"), &mut |p| files.push(p.to_path_buf()));
    files.sort();
    files.into_iter().filter_map(|f| std::fs::read_to_string(&f).ok().map(|text| (f, text))).collect()
}

fn has_deb_src_entry_for(suite: &str) -> bool {
    entry_for_suite("deb-src", suite).is_some()
}

/// The URI of the first of `entries` that lists `suite`.
fn suite_uri(entries: &[(String, Vec<String>)], suite: &str) -> Option<String> {
    entries.iter().find_map(|(uri, suites)| suites.iter().any(|s| s == suite).then(|| uri.clone()))
}

/// The URI of the machine's first entry of type `kind` (`deb`, `deb-src`) that lists `suite`, in
/// the files apt reads.
fn entry_for_suite(kind: &str, suite: &str) -> Option<String> {
    let read_by_apt = |path: &Path| path.extension().is_some_and(|e| e == "list" || e == "sources");
    apt_source_texts()
        .iter()
        .filter(|(path, _)| read_by_apt(path))
        .find_map(|(_, text)| suite_uri(&entries(text, kind), suite))
}

/// The URI and suite of the first binary entry: deb822 `.sources` files first, then the
/// one-line format of sources.list.
pub fn first_deb_entry() -> Option<(String, String)> {
    let texts = apt_source_texts();
    let first = |wanted: &dyn Fn(&Path) -> bool| {
        texts.iter().filter(|(path, _)| wanted(path)).find_map(|(_, text)| first_binary_entry(text))
    };
    first(&|path| {
        path.parent() == Some(Path::new("/etc/apt/sources.list.d")) && path.extension().is_some_and(|e| e == "sources")
    })
    .or_else(|| first(&|path| path == Path::new("/etc/apt/sources.list")))
}

/// The URI of the machine's first binary entry that lists `suite` (e.g. `bookworm-security`).
pub fn deb_entry_for_suite(suite: &str) -> Option<String> {
    entry_for_suite("deb", suite)
}

/// The first URI and suite of [`binary_entries`].
fn first_binary_entry(text: &str) -> Option<(String, String)> {
    binary_entries(text).into_iter().next().map(|(uri, suites)| (uri, suites.into_iter().next().unwrap_or_default()))
}

/// The binary (`deb`) entries of an apt source file, as (first URI, suites).
fn binary_entries(text: &str) -> Vec<(String, Vec<String>)> {
    entries(text, "deb")
}

/// The entries of type `kind` (`deb`, `deb-src`) of an apt source file, as (first URI, suites), in
/// either format: deb822 stanzas (`Types:`, `URIs:`, `Suites:`) or sources.list's
/// `<kind> [options] uri suite components`.
fn entries(text: &str, kind: &str) -> Vec<(String, Vec<String>)> {
    let mut entries = Vec::new();
    let (mut is_deb, mut uri) = (false, String::new());
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first() {
            Some(&first) if first == kind => {
                let rest = if words.get(1).is_some_and(|w| w.starts_with('[')) { &words[2..] } else { &words[1..] };
                let suites = rest.get(1).map(|suite| suite.to_string()).into_iter().collect();
                entries.push((rest.first().unwrap_or(&"").to_string(), suites));
            }
            Some(&"Types:") => is_deb = words.contains(&kind),
            Some(&"URIs:") if is_deb => uri = words.get(1).unwrap_or(&"").to_string(),
            Some(&"Suites:") if is_deb => {
                entries.push((uri.clone(), words[1..].iter().map(|s| s.to_string()).collect()))
            }
            _ => {}
        }
    }
    entries
}

/// The release's source unpacked into the work directory, verified by its files
/// (`netcdf_source`): its archive from the cache, else the mirror folder, else where the release
/// is published (Debian's archive, through `apt-get source`; upstream's archive of its tag).
pub fn fetch_netcdf_source(h: &Harness) -> Result {
    let top = format!("netcdf-c-{}", h.version());
    if h.work.join(&top).is_dir() {
        return Ok(());
    }
    harness::create_dir_all(&h.cache)?;
    let tarball = h.cache.join(source_archive(h));
    if !tarball.is_file() {
        fetch_archive(h, &tarball)?;
    }
    h.ensure_work_dir()?;
    let tree = &h.release.source_tree;
    let verified = netcdf_source::unpack_verified(&tarball, &h.work, &top, tree.sha256, &tree.not_archived.concat());
    if verified.is_err() {
        // Fetched anew next time.
        let _ = std::fs::remove_file(&tarball);
    }
    verified
}

/// The release's source archive into `tarball`: from the mirror folder, else its publisher.
fn fetch_archive(h: &Harness, tarball: &Path) -> Result {
    let mirror = netcdf_source::mirror_folder(h);
    let upstream_name = format!("netcdf-c-{}.tar.gz", h.version());
    let names = match &h.release.source {
        Source::Apt => vec![source_archive(h), upstream_name],
        Source::Tarball { file, .. } | Source::GitArchive { file, .. } => vec![file.to_string(), upstream_name],
    };
    if let Some(found) = netcdf_source::in_mirror(h, &names) {
        log(format!("netcdf-c {} from {}", h.version(), found.display()));
        return run(cmd("cp", ["--"]).arg(&found).arg(tarball));
    }
    let not_in_mirror = format!(
        "it is not in the mirror folder {} (NCFILTERS_NETCDF_SOURCES; as {})",
        mirror.display(),
        names.join(" or ")
    );
    let published = match &h.release.source {
        Source::Apt => apt_source(h, None, &format!("netcdf={DEBIAN_4_9_0}")),
        Source::Tarball { debian_version, suite, .. } => {
            apt_source(h, Some(suite), &format!("netcdf={debian_version}"))
        }
        Source::GitArchive { tag: Some(tag), .. } => {
            let url = format!("{}/{tag}.tar.gz", netcdf_source::UPSTREAM_TAGS);
            log(format!("netcdf-c {} from {url}", h.version()));
            netcdf_source::download(&url, tarball).map_err(|why| format!("the download of {url} failed: {why}"))
        }
        Source::GitArchive { tag: None, .. } => Err("it is published nowhere but as that archive".to_string()),
    };
    match published {
        Ok(()) if tarball.is_file() => Ok(()),
        Ok(()) => fail!("netcdf-c {}: apt-get source did not produce {}", h.version(), tarball.display()),
        Err(why) => fail!(
            "netcdf-c {}'s source cannot be had: {not_in_mirror}, and {why}. Put the archive in that folder, or \
             allow the download",
            h.version()
        ),
    }
}

/// `apt-get source` of `package`, after a deb-src entry for `suite` (else the machine's own).
fn apt_source(h: &Harness, suite: Option<&str>, package: &str) -> std::result::Result<(), String> {
    let fetched = match suite {
        Some(suite) => ensure_deb_src_for(suite),
        None => ensure_deb_src(),
    }
    .and_then(|()| {
        // An entry added while the network was down has no package list until apt-get update.
        apt_get_source(h, package).or_else(|_| {
            run(&mut as_root("apt-get", ["update", "-q"])?)?;
            apt_get_source(h, package)
        })
    });
    fetched.map_err(|Failure(why)| format!("Debian's archive did not give it ({why})"))
}

/// `apt-get source --download-only <package>` into the cache.
pub fn apt_get_source(h: &Harness, package: &str) -> Result {
    log(format!("apt-get source {package} (cached in {})", h.cache.display()));
    let mut source = cmd("apt-get", ["source", "-q", "--download-only", package]);
    let out = source
        .current_dir(&h.cache)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Failure(format!("cannot run apt-get source: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    for line in last_lines(&text, 3) {
        println!("{line}");
    }
    if !out.status.success() {
        fail!("apt-get source {package} failed ({})", out.status);
    }
    Ok(())
}

fn fetch_rust_dependencies(h: &Harness) -> Result {
    if !on_path("cargo") {
        fail!("cargo not found (the Rust toolchain is a prerequisite)");
    }
    // One workspace (fuzz/, built by cargo-fuzz, fetches its own).
    run(cmd("cargo", ["fetch", "--locked", "-q"]).current_dir(&h.repo))
}

/// The first Debian package file `<name>_*.deb` in the cache, downloaded if there is none.
pub fn cached_deb(h: &Harness, name: &str) -> Result<std::path::PathBuf> {
    let prefix = format!("{name}_");
    if crate::text::glob(&h.cache, &prefix, ".deb").is_empty() {
        harness::create_dir_all(&h.cache)?;
        run(cmd("apt-get", ["download", "-q", name]).current_dir(&h.cache))?;
    }
    match crate::text::glob(&h.cache, &prefix, ".deb").into_iter().next() {
        Some(deb) => Ok(deb),
        None => fail!("apt-get download {name} produced no {prefix}*.deb"),
    }
}

/// Unpacks a Debian package file into `dir`.
pub fn unpack_deb(deb: &Path, dir: &Path) -> Result {
    let mut unpack = cmd("dpkg-deb", ["-x"]);
    unpack.arg(deb).arg(dir);
    run(&mut unpack)
}

/// Unpacks Debian's r-cran-stars (cached) and returns a real netCDF file of it.
pub fn stars_input(h: &Harness) -> Result<std::path::PathBuf> {
    let deb = cached_deb(h, "r-cran-stars")?;
    let dir = h.work.join("r-cran-stars");
    unpack_deb(&deb, &dir)?;
    let input = dir.join("usr/lib/R/site-library/stars/nc/test_stageiv_xyt.nc");
    if !input.is_file() {
        fail!("{} not found in r-cran-stars", input.display());
    }
    Ok(input)
}

/// `pkg-config --cflags hdf5-serial` (the serial HDF5, whatever `hdf5.pc` points at), split into
/// words as the shell did.
pub fn hdf5_cflags() -> Result<Vec<String>> {
    Ok(output(&mut cmd("pkg-config", ["--cflags", "hdf5-serial"]))?.split_whitespace().map(String::from).collect())
}

/// Where Debian's serial HDF5 libraries are (`-L…`), which netcdf-c's `Libs.private` does not say.
pub fn hdf5_link_dirs() -> Result<Vec<String>> {
    Ok(output(&mut cmd("pkg-config", ["--libs-only-L", "hdf5-serial"]))?.split_whitespace().map(String::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deb822_entry_skips_deb_src_stanzas() {
        let text = "Types: deb-src\nURIs: http://src.example/debian\nSuites: x\n\n\
                    Types: deb\nURIs: http://mirror.example/debian http://other\nSuites: bookworm bookworm-updates\n";
        assert_eq!(first_binary_entry(text), Some(("http://mirror.example/debian".into(), "bookworm".into())));
    }

    #[test]
    fn the_entry_of_a_suite_is_found_in_either_format() {
        let deb822 = "Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n";
        let one_line = "deb http://mirror.example/debian bookworm main\n";
        for text in [deb822, one_line] {
            let found =
                binary_entries(text).into_iter().find(|(_, suites)| suites.iter().any(|s| s.starts_with("bookworm")));
            assert!(found.is_some(), "{text}");
        }
        assert_eq!(binary_entries(deb822)[0].1, ["bookworm-security"]);
    }

    /// Setup once found no bookworm deb-src for 4.9.0 because sid's, added for HDF5 1.14.6, counted.
    #[test]
    fn a_deb_src_entry_counts_for_its_own_suites_only() {
        let sid = "Types: deb-src\nURIs: http://mirror.example/debian\nSuites: sid\n";
        let machine = "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n";
        let one_line = "deb-src [signed-by=/k.gpg] http://mirror.example/debian bookworm main\n";
        assert!(suite_uri(&entries(sid, "deb-src"), "sid").is_some());
        assert!(suite_uri(&entries(sid, "deb-src"), "bookworm").is_none());
        assert!(suite_uri(&entries(machine, "deb-src"), "bookworm").is_none());
        assert!(suite_uri(&entries(one_line, "deb-src"), "bookworm").is_some());
        assert!(entries(one_line, "deb").is_empty());
    }

    #[test]
    fn one_line_entry_skips_options() {
        let text = "# comment\ndeb [arch=amd64] http://mirror.example/debian bookworm main\n";
        assert_eq!(first_binary_entry(text), Some(("http://mirror.example/debian".into(), "bookworm".into())));
    }
}
