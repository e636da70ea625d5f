// SPDX-License-Identifier: BSD-3-Clause
//! `deb`: Debian's own netcdf source package built as a packager would ship ncfilters in it
//! (docs/packaging.md), and installed as a user would. For each package of [`PACKAGES`]:
//! - `dpkg-source -x` of Debian's source package (`../shared/netcdf-c/debian`, the release's orig);
//! - in a build root of that suite, with `apt-get build-dep`: `dpkg-buildpackage -b` with the
//!   network cut, once as Debian ships it and once with the release tarball (`dist`) unpacked into
//!   `ncfilters/` and the one line added to `debian/rules`; Debian's own `dh_auto_test` runs
//!   netcdf-c's suite in each, and its counts are read from the log (the rules ignore failures);
//! - `lintian` on both builds: no error Debian's own build lacks;
//! - in two clean roots (the suite's debootstrap, made anew): `apt-get install` of ncfilters'
//!   packages, and of the suite's own libnetcdf; in each, with no `HDF5_PLUGIN_PATH`, NCO and CDO
//!   (tests/debian13/clients.sh), GDAL (tests/deb/gdal.sh) and python3-netcdf4
//!   (tests/deb/python3-netcdf4.py): ncfilters' must succeed in every case; and netCDF4-python's own
//!   suite, built from its sdist against the root's libnetcdf-dev (tests/deb/netcdf4-python-suite.sh):
//!   ncfilters' must fail no test the suite's own library passes.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::debian_root::{
    self, inside, step, step_output, ClientCases, ClientLacks, PytestOutcome, Suite, REPO_INSIDE, WORK_INSIDE,
};
use crate::harness::{self, fail, Harness, Result};
use crate::process::{cmd, output, run};

/// One of Debian's netcdf source packages, and the suite and architecture that build it.
pub struct DebianPackage {
    /// e.g. "Debian 13".
    pub debian: &'static str,
    pub suite: &'static str,
    /// Debian's name of the architecture: the machine's (`amd64`), or `i386`, which its kernel runs
    /// natively.
    pub arch: &'static str,
    /// The netcdf-c release of the harness's table it packages.
    pub release: &'static str,
    /// Its Debian version, without the epoch.
    pub version: &'static str,
    /// The packages of the suite's Rust toolchain, which the package build depends on.
    pub toolchain: &'static [&'static str],
    /// The shared library's package, e.g. `libnetcdf22`.
    pub library: &'static str,
    /// What the suite's NCO and CDO cannot do on any library (compiled against its own
    /// libnetcdf-dev, which lacked the feature).
    pub client_lacks: &'static [ClientLacks],
    /// Whose netCDF4-python test suite runs in the clean roots.
    pub python_suite: PythonSuite,
    /// The programs of [`CLIENTS`] the suite does not build for the architecture.
    pub unpackaged_clients: &'static [&'static str],
    /// Where ncfilters' crates come from.
    pub crates: Crates,
}

/// Where the package build takes ncfilters' crates from.
#[derive(Clone, Copy, PartialEq)]
pub enum Crates {
    /// The release tarball's `vendor/` (docs/packaging.md's vendored build).
    Vendored,
    /// Debian's own `librust-*-dev` packages, as Debian's Rust team builds (the distribution build).
    Debian,
}

/// A netCDF4-python test suite.
#[derive(Clone, Copy)]
pub enum PythonSuite {
    /// That version's sdist, built with pip against the root's libnetcdf-dev, and its tests.
    Sdist(&'static str),
    /// The suite's own python3-netcdf4, of that version, with the tests of that version's sdist
    /// (netCDF4-python 1.7's sdist does not build against 4.9.0's headers, which lack
    /// `NC_HAS_BLOSC`: its compat header then redefines `nc_def_var_blosc`).
    Installed(&'static str),
}

/// Debian 12's NCO 5.1.4 and CDO 2.1.1 were compiled against a libnetcdf-dev without zstd.
const BOOKWORM_CLIENTS_LACK: [ClientLacks; 3] = [
    ClientLacks { case: "ncks --cmp=zst", says: "neither netCDF nor CCR library appears to define an API" },
    ClientLacks { case: "ncks --cmp=shf|zst", says: "neither netCDF nor CCR library appears to define an API" },
    ClientLacks { case: "cdo -z zstd", says: "Compression type 'zstd' unsupported" },
];

/// Debian 13's netcdf, as its amd64 buildd builds it.
const TRIXIE: DebianPackage = DebianPackage {
    debian: "Debian 13",
    suite: "trixie",
    arch: "amd64",
    release: "4.10.1",
    version: "4.10.1-1",
    toolchain: &["cargo", "rustc"],
    library: "libnetcdf22",
    client_lacks: &[],
    python_suite: PythonSuite::Sdist("1.7.5.1"),
    unpackaged_clients: &[],
    crates: Crates::Vendored,
};

pub static PACKAGES: [DebianPackage; 4] = [
    TRIXIE,
    DebianPackage {
        debian: "Debian 12",
        suite: "bookworm",
        arch: "amd64",
        release: "4.9.0",
        version: "4.9.0-3",
        // Debian 12's rustc is 1.63: a packager takes 1.96 from its security updates, whose cargo-web
        // provides cargo.
        toolchain: &["cargo-web", "rustc-web"],
        library: "libnetcdf19",
        client_lacks: &BOOKWORM_CLIENTS_LACK,
        python_suite: PythonSuite::Installed("1.6.2"),
        unpackaged_clients: &[],
        crates: Crates::Vendored,
    },
    // As an i386 buildd builds it: 32-bit, with Debian 13's i386 cargo and rustc. Debian builds cdo
    // for no 32-bit architecture: clients.sh runs NCO's cases only, and the grid comes from ncgen
    // (tests/debian13/topography.sh).
    DebianPackage { arch: "i386", unpackaged_clients: &["cdo"], ..TRIXIE },
    // As Debian's Rust team would: no vendor/, Debian's crates, the system's compression libraries.
    DebianPackage { crates: Crates::Debian, ..TRIXIE },
];

impl DebianPackage {
    /// "trixie", "trixie i386" for another architecture than the machine's, "trixie
    /// debian-crates" when built from Debian's crates.
    pub fn name(&self) -> String {
        let mut name = self.suite.to_string();
        if let Some(arch) = self.foreign_arch() {
            name.push_str(&format!(" {arch}"));
        }
        if self.crates == Crates::Debian {
            name.push_str(" debian-crates");
        }
        name
    }

    fn foreign_arch(&self) -> Option<&'static str> {
        (self.arch != MACHINE_ARCH).then_some(self.arch)
    }

    fn debian_suite(&self) -> Suite {
        Suite { name: self.suite, foreign_arch: self.foreign_arch() }
    }

    /// The packages of [`CLIENTS`] the suite builds for the architecture.
    fn clients(&self) -> impl Iterator<Item = &'static str> + '_ {
        CLIENTS.into_iter().filter(|name| !self.unpackaged_clients.contains(name))
    }

    /// The cache name of its roots: `deb-trixie-<what>`, `deb-trixie-i386-<what>`.
    fn root_name(&self, what: &str) -> String {
        format!("deb-{}-{what}", self.name().replace(' ', "-"))
    }

    /// The version the build of `flavour` gets: ncfilters' carries a local suffix, as a packager's
    /// rebuild does (`dch --local +ncfilters`), above the archive's own binNMUs (Debian 12 has
    /// 1:4.9.0-3+b1, and its libc6-dev breaks libnetcdf-dev 1:4.9.0-3).
    fn built_version(&self, flavour: &str) -> String {
        if flavour == NCFILTERS {
            format!("{}+ncfilters1", self.version)
        } else {
            self.version.to_string()
        }
    }
}

/// Debian's name of the machine's architecture.
const MACHINE_ARCH: &str = "amd64";

/// What the build root has besides the source package's build dependencies.
const BUILD_TOOLS: [&str; 5] = ["dpkg-dev", "build-essential", "lintian", "xz-utils", "util-linux"];

/// What the clean roots install besides the library: the programs whose use of it is checked, and
/// what a user's `pip install` of netCDF4-python's sdist needs (pkg-config finds HDF5's headers;
/// its suite's alignment test runs h5ls).
const CLIENTS: [&str; 10] = [
    "nco",
    "cdo",
    "gdal-bin",
    "python3-netcdf4",
    "python3-venv",
    "python3-dev",
    "build-essential",
    "pkg-config",
    "hdf5-tools",
    "python3-pytest",
];

/// Where Debian keeps the host's CA bundle, when `SSL_CERT_FILE` names none.
const HOST_CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The two builds of the package.
const STOCK: &str = "stock";
const NCFILTERS: &str = "ncfilters";

/// Every package of [`PACKAGES`], or those of the suite `NCFILTERS_DEB_SUITE` and the
/// architecture `NCFILTERS_DEB_ARCH` name.
pub fn test_deb(h: &Harness) -> Result {
    let suite = std::env::var("NCFILTERS_DEB_SUITE").ok();
    let arch = std::env::var("NCFILTERS_DEB_ARCH").ok();
    let debian_crates = std::env::var("NCFILTERS_DEB_CRATES").ok();
    let packages: Vec<&DebianPackage> = PACKAGES
        .iter()
        .filter(|package| suite.as_deref().is_none_or(|suite| suite == package.suite))
        .filter(|package| arch.as_deref().is_none_or(|arch| arch == package.arch))
        .filter(|package| {
            debian_crates.as_deref().is_none_or(|crates| (crates == "debian") == (package.crates == Crates::Debian))
        })
        .collect();
    if packages.is_empty() {
        let known: Vec<String> =
            PACKAGES.iter().map(|package| format!("{} {}", package.name(), package.arch)).collect();
        fail!(
            "NCFILTERS_DEB_SUITE={suite:?} NCFILTERS_DEB_ARCH={arch:?} NCFILTERS_DEB_CRATES={debian_crates:?}: \
             the packages are {}",
            known.join(", ")
        );
    }
    for package in packages {
        test_package(h, package)?;
    }
    Ok(())
}

pub fn test_package(h: &Harness, package: &DebianPackage) -> Result {
    let release = crate::release::find(package.release).map_err(harness::Failure)?;
    let h = h.for_release(release);
    crate::setup::setup(&h)?;
    let tarball = crate::dist::make_tarball(&h)?;
    let started = Instant::now();
    let root = debian_root::ensure(&h, &package.root_name("build"), package.debian_suite(), &BUILD_TOOLS)?;
    let mut tests = Vec::new();
    let mut lintian = Vec::new();
    for flavour in [STOCK, NCFILTERS] {
        let tree = unpack(&h, &root, package, flavour, &tarball)?;
        let build_deps = format!("apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q {tree}");
        step(&h, &root, &format!("apt-get build-dep ({flavour})"), &["sh", "-c", build_deps.as_str()])?;
        let start = Instant::now();
        let build = format!(
            "cd {tree} && env -u CARGO_HOME -u RUSTUP_HOME PATH=/usr/sbin:/usr/bin:/sbin:/bin \
             DEB_BUILD_OPTIONS=parallel={} dpkg-buildpackage -b -uc -us",
            h.jobs
        );
        let what =
            format!("dpkg-buildpackage -b of netcdf {} ({flavour}), network cut", package.built_version(flavour));
        let log_text = debian_root::offline_step_output(&h, &root, &what, &build)?;
        harness::write_file(&h.work_file(&format!("{}-{flavour}.log", package.root_name("build"))), &log_text)?;
        let Some(counts) = crate::ctest_suite::ctest_counts(&log_text) else {
            fail!("dh_auto_test printed no ctest summary");
        };
        let failed: Vec<String> = crate::ctest_suite::failed_tests(&log_text).into_iter().map(String::from).collect();
        let toolchain = if flavour == NCFILTERS { toolchain_versions(&h, &root)? } else { String::new() };
        println!(
            "{} netcdf {} {} ({flavour}): built offline{toolchain} in {} s; dh_auto_test: {} of {} passed{}",
            package.debian,
            package.version,
            package.arch,
            start.elapsed().as_secs(),
            counts.0,
            counts.1,
            if failed.is_empty() { String::new() } else { format!(", failed {failed:?}") }
        );
        tests.push((counts, failed));
        lintian.push(lintian_errors(&h, &root, package, flavour)?);
    }
    let [((stock_passed, stock_total), stock_failed), ((passed, total), failed)] = &tests[..] else {
        fail!("two package builds")
    };
    if let Some(test) = failed.iter().find(|test| !stock_failed.contains(test)) {
        fail!("dh_auto_test: {test} fails in ncfilters' package and passes in Debian's own build");
    }
    if passed < stock_passed || total < stock_total {
        fail!("dh_auto_test: ncfilters' package passes {passed} of {total}, Debian's {stock_passed} of {stock_total}");
    }
    println!("PASS dh_auto_test: ncfilters' package passes {passed} of {total}, Debian's own build {stock_passed} of {stock_total}");
    let new_errors: Vec<&String> = lintian[1].iter().filter(|tag| !lintian[0].contains(tag)).collect();
    if !new_errors.is_empty() {
        fail!("lintian errors that Debian's own build lacks: {new_errors:?}");
    }
    println!("PASS lintian: no error Debian's own build lacks ({} errors on both)", lintian[0].len());
    if package.crates == Crates::Debian {
        crate::netcdf::check_system_libs_of(&h.lib_dir_in(&debhelper_build_dir(&root, package)?).join("libnetcdf.so"))?;
    }
    let debs = built_debs(&root, package)?;
    clients_in_clean_roots(&h, package, &debs)?;
    println!(
        "PASS {} netcdf {} {} with ncfilters in {} s",
        package.debian,
        package.version,
        package.arch,
        started.elapsed().as_secs()
    );
    Ok(())
}

/// debhelper's build directory (`obj-<triplet>`) of the ncfilters build, whose libnetcdf.so is
/// not yet stripped.
fn debhelper_build_dir(root: &Path, package: &DebianPackage) -> Result<PathBuf> {
    let upstream = package.version.split('-').next().unwrap_or(package.version);
    let tree = root.join(format!("work/deb/{NCFILTERS}/netcdf-{upstream}"));
    let entries = std::fs::read_dir(&tree).map_err(|e| harness::Failure(format!("{}: {e}", tree.display())))?;
    let build = entries.flatten().find(|entry| entry.file_name().to_string_lossy().starts_with("obj-"));
    match build {
        Some(build) => Ok(build.path()),
        None => fail!("{} has no obj-* directory: where did debhelper build?", tree.display()),
    }
}

/// The source package unpacked in `<root>/work/deb/<flavour>`, for ncfilters with the release
/// tarball in `ncfilters/` and docs/packaging.md's changes; returns the tree's path inside the root.
fn unpack(h: &Harness, root: &Path, package: &DebianPackage, flavour: &str, tarball: &Path) -> Result<String> {
    let dir = root.join(format!("work/deb/{flavour}"));
    harness::remove_dir_all_if_exists(&dir)?;
    harness::create_dir_all(&dir)?;
    let debian = crate::netcdf_source::mirror_folder(h).join("debian");
    let upstream = package.version.split('-').next().unwrap_or(package.version);
    let dsc = format!("netcdf_{}.dsc", package.version);
    let orig = h.cache.join(format!("netcdf_{upstream}.orig.tar.gz"));
    for file in [debian.join(&dsc), debian.join(format!("netcdf_{}.debian.tar.xz", package.version)), orig] {
        if !file.is_file() {
            fail!("{} is missing: Debian's source package of netcdf {}", file.display(), package.version);
        }
        run(cmd("cp", ["-L"]).arg(&file).arg(&dir))?;
    }
    let inside_dir = format!("{WORK_INSIDE}/deb/{flavour}");
    let tree = format!("{inside_dir}/netcdf-{upstream}");
    let what = format!("dpkg-source -x {dsc} ({flavour})");
    step(h, root, &what, &["sh", "-c", &format!("cd {inside_dir} && dpkg-source -x {dsc}")])?;
    if flavour == NCFILTERS {
        let name = tarball.file_name().unwrap_or_default().to_string_lossy().to_string();
        let (line, depends, debian_crates) = match package.crates {
            Crates::Vendored => (
                "-DCMAKE_PROJECT_INCLUDE=$(CURDIR)/ncfilters/cmake/ncfilters.cmake -DNCFILTERS_SYSTEM_ZSTD=ON"
                    .to_string(),
                [package.toolchain, &["libzstd-dev"]].concat(),
                String::new(),
            ),
            Crates::Debian => (
                "-DCMAKE_PROJECT_INCLUDE=$(CURDIR)/ncfilters/cmake/ncfilters.cmake -DNCFILTERS_SYSTEM_LIBS=ON \
                 -DNCFILTERS_CARGO_HOME=$(CURDIR)/debian/ncfilters-cargo-home"
                    .to_string(),
                [package.toolchain, &crate::debian_crates::SHIPPED, &crate::debian_crates::SYSTEM_LIBRARIES].concat(),
                format!(
                    "{}; {}; ",
                    crate::debian_crates::prepare_tree("ncfilters"),
                    crate::debian_crates::write_cargo_home("debian/ncfilters-cargo-home")
                ),
            ),
        };
        // netcdf-bin.install names its programs one by one, so the command needs a line; it takes
        // all of usr/share/man/man1, so the command's man page needs none.
        let script = format!(
            "set -e; cd {tree}; mkdir ncfilters; tar -xJf {REPO_INSIDE}/target/dist/{name} -C ncfilters --strip-components=1; \
             {debian_crates}\
             sed -i 's|^\\(\t\t-DHDF5_LIBRARY_PATH=.*\\)$|\\1 \\\\\\n\t\t{line}|' debian/rules; \
             grep -q NCFILTERS_ debian/rules; \
             sed -i 's|^Build-Depends: |Build-Depends: {depends}, |' debian/control; \
             echo usr/bin/ncfilters >> debian/netcdf-bin.install; \
             {{ printf 'netcdf (1:%s) %s; urgency=medium\\n\\n  * Build with ncfilters (ncfilters/), as its docs/packaging.md says.\\n\\n -- ncfilters packaging test <packager@example.org>  %s\\n\\n' \
               {built} \"$(dpkg-parsechangelog -S Distribution)\" \"$(date -R)\"; cat debian/changelog; }} > debian/changelog.new; \
             mv debian/changelog.new debian/changelog",
            depends = depends.join(", "),
            built = package.built_version(NCFILTERS),
        );
        step(h, root, "ncfilters' tarball into ncfilters/, and the one line in debian/rules", &["sh", "-c", &script])?;
    }
    Ok(tree)
}

/// ", Debian's cargo 1.85.1 and rustc 1.85.1": what the package build ran.
fn toolchain_versions(h: &Harness, root: &Path) -> Result<String> {
    let script = "env -u CARGO_HOME -u RUSTUP_HOME PATH=/usr/bin:/bin sh -c 'cargo --version; rustc --version'";
    let versions = output(&mut inside(h, root, &["sh", "-c", script]))?;
    let words: Vec<&str> = versions.lines().filter_map(|line| line.split_whitespace().nth(1)).collect();
    Ok(format!(" with the suite's cargo {} and rustc {}", words.first().unwrap_or(&"?"), words.get(1).unwrap_or(&"?")))
}

/// lintian's errors (`E:` tags with their package, without versions) on the build of `flavour`.
fn lintian_errors(h: &Harness, root: &Path, package: &DebianPackage, flavour: &str) -> Result<Vec<String>> {
    let changes =
        format!("{WORK_INSIDE}/deb/{flavour}/netcdf_{}_{}.changes", package.built_version(flavour), package.arch);
    // lintian exits non-zero when it finds errors: they are read from its output.
    let text = crate::process::output_ignoring_errors(&mut inside(
        h,
        root,
        &["lintian", "--tag-display-limit", "0", &changes],
    ))?;
    let errors: Vec<String> = text
        .lines()
        .filter_map(|line| line.strip_prefix("E: "))
        .map(|line| line.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    println!(
        "lintian ({flavour}): {} errors{}",
        errors.len(),
        if errors.is_empty() { String::new() } else { format!(" {errors:?}") }
    );
    Ok(errors)
}

/// The ncfilters build's `.deb`s a user installs: the library, netcdf-bin and libnetcdf-dev.
fn built_debs(root: &Path, package: &DebianPackage) -> Result<Vec<PathBuf>> {
    let dir = root.join(format!("work/deb/{NCFILTERS}"));
    let mut debs = Vec::new();
    for name in [package.library, "netcdf-bin", "libnetcdf-dev"] {
        let file = dir.join(format!("{name}_{}_{}.deb", package.built_version(NCFILTERS), package.arch));
        if !file.is_file() {
            fail!("the package build made no {}", file.display());
        }
        debs.push(file);
    }
    Ok(debs)
}

/// The name in the cache of the clean root of `side` (ncfilters' packages, or the suite's own).
fn clean_root(package: &DebianPackage, side: &str) -> String {
    package.root_name(&format!("clean-{side}"))
}

/// NCO, CDO, GDAL, python3-netcdf4 and netCDF4-python's suite in two clean roots: one with
/// ncfilters' packages, one with the suite's own libnetcdf. ncfilters' must succeed in every case,
/// and so in every case the suite's does, and fail no test of the suite that the suite's passes.
fn clients_in_clean_roots(h: &Harness, package: &DebianPackage, debs: &[PathBuf]) -> Result {
    let mut cases = Vec::new();
    let mut suites = Vec::new();
    let files = format!("{WORK_INSIDE}/gdal-files");
    for side in [NCFILTERS, "debian"] {
        let root = debian_root::fresh(h, &clean_root(package, side), package.debian_suite())?;
        let mut install: Vec<String> = package.clients().map(String::from).collect();
        if side == NCFILTERS {
            harness::create_dir_all(&root.join("work/debs"))?;
            for deb in debs {
                run(cmd("cp", [deb.as_os_str()]).arg(root.join("work/debs")))?;
                install.push(format!("{WORK_INSIDE}/debs/{}", deb.file_name().unwrap_or_default().to_string_lossy()));
            }
        } else {
            install.extend([package.library, "netcdf-bin", "libnetcdf-dev"].map(String::from));
            // The files ncfilters' side wrote with every filter.
            let made = h.cache.join(clean_root(package, NCFILTERS)).join("work/gdal-files");
            harness::create_dir_all(&root.join("work"))?;
            run(cmd("cp", ["-a"]).arg(made).arg(root.join("work/gdal-files")))?;
        }
        let names: Vec<&str> = install.iter().map(String::as_str).collect();
        let label = if side == NCFILTERS {
            "ncfilters' packages".to_string()
        } else {
            format!("{}'s own {}", package.debian, package.library)
        };
        debian_root::apt_install(
            h,
            &root,
            &format!("apt-get install in a clean {} root: {label}", package.debian),
            &names,
        )?;
        let version = output(&mut inside(h, &root, &["dpkg-query", "-W", "-f", "${Version}", package.library]))?;
        println!("{label}: {} {version} installed with apt in a clean root", package.library);
        for script in [
            "debian13/clients.sh",
            "debian13/topography.sh",
            "deb/gdal.sh",
            "deb/python3-netcdf4.py",
            "deb/netcdf4-python-suite.sh",
            "deb/python3-netcdf4-suite.sh",
        ] {
            let source = h.repo.join("tests").join(script);
            let copy = root.join("work").join(Path::new(script).file_name().unwrap_or_default());
            std::fs::copy(&source, &copy).map_err(|e| harness::Failure(format!("cannot copy {script}: {e}")))?;
        }
        let mut outputs = String::new();
        for args in [
            vec!["bash", "/work/clients.sh", &label, WORK_INSIDE],
            vec!["bash", "/work/gdal.sh", &label, &files],
            vec!["python3", "/work/python3-netcdf4.py", &label, &files, WORK_INSIDE],
        ] {
            let text = output(&mut inside(h, &root, &args))?;
            print!("{text}");
            outputs.push_str(&text);
        }
        cases.push(ClientCases::read(&outputs));
        suites.push(netcdf4_python_suite(h, &root, package, side, &label)?);
    }
    let theirs = format!("{}'s own {}", package.debian, package.library);
    let clients_sh_programs: Vec<&str> = package.clients().filter(|name| ["nco", "cdo"].contains(name)).collect();
    cases[0].must_have_run_each_of(&clients_sh_programs)?;
    let counts = cases[0].must_pass_all("ncfilters' packages", &cases[1], &theirs, package.client_lacks)?;
    let programs: Vec<&str> =
        package.clients().filter(|name| ["nco", "cdo", "gdal-bin", "python3-netcdf4"].contains(name)).collect();
    println!("PASS {}'s {}: {counts}", package.debian, programs.join(", "));
    suites[0].must_fail_nothing_passing_on("ncfilters' packages", &suites[1], &theirs)?;
    println!(
        "PASS {}: {} on {theirs}, {} on ncfilters' packages",
        python_suite_name(package),
        suites[1].counts(),
        suites[0].counts()
    );
    Ok(())
}

fn python_suite_name(package: &DebianPackage) -> String {
    match package.python_suite {
        PythonSuite::Sdist(version) => format!("netCDF4-python {version}'s suite"),
        PythonSuite::Installed(version) => {
            format!("{}'s python3-netcdf4 with netCDF4-python {version}'s suite", package.debian)
        }
    }
}

/// The package's netCDF4-python suite in `root` (see [`PythonSuite`]): an sdist built with pip in a
/// venv against the root's libnetcdf-dev, or the suite's python3-netcdf4 with its sdist's tests.
fn netcdf4_python_suite(
    h: &Harness,
    root: &Path,
    package: &DebianPackage,
    side: &str,
    label: &str,
) -> Result<PytestOutcome> {
    let suite = python_suite_name(package);
    let (what, args) = match package.python_suite {
        PythonSuite::Sdist(version) => {
            let sdist = debian_root::netcdf4_python_sdist(h, root, version)?;
            let name = sdist.file_name().unwrap_or_default().to_string_lossy().to_string();
            run(cmd("cp", [sdist.as_os_str()]).arg(root.join("work")))?;
            let mut args = vec![
                "bash".to_string(),
                format!("{WORK_INSIDE}/netcdf4-python-suite.sh"),
                format!("{WORK_INSIDE}/{name}"),
                format!("{WORK_INSIDE}/netcdf4-python"),
            ];
            // pip reaches the package index through the machine's network, whose certificates the
            // host's bundle may hold and the root's lacks; the root's own trust store is left as
            // apt made it.
            let bundle = std::env::var_os("SSL_CERT_FILE").map_or_else(|| PathBuf::from(HOST_CA_BUNDLE), PathBuf::from);
            if bundle.is_file() {
                run(cmd("cp", ["-L"]).arg(&bundle).arg(root.join("work/host-ca.crt")))?;
                args.push(format!("{WORK_INSIDE}/host-ca.crt"));
            }
            (format!("netCDF4-python {version} built from its sdist and its suite run: {label}"), args)
        }
        PythonSuite::Installed(version) => {
            let sdist = debian_root::netcdf4_python_sdist(h, root, version)?;
            let source = root.join("work/netcdf4-python-source");
            harness::remove_dir_all_if_exists(&source)?;
            harness::create_dir_all(&source)?;
            run(cmd("tar", ["-xzf"]).arg(&sdist).arg("-C").arg(&source).arg("--strip-components=1"))?;
            let args = vec![
                "bash".to_string(),
                format!("{WORK_INSIDE}/python3-netcdf4-suite.sh"),
                format!("{WORK_INSIDE}/netcdf4-python-source/test"),
            ];
            (format!("{suite}: {label}"), args)
        }
    };
    let text = step_output(h, root, &what, &args)?;
    harness::write_file(&h.work_file(&format!("{}-netcdf4-python-{side}.log", package.root_name("build"))), &text)?;
    let outcome = PytestOutcome::read(&text);
    if let Some(line) = text.lines().find(|line| line.starts_with("netCDF4-python ")) {
        println!("{line}");
    }
    println!("{suite} on {label}: {}", outcome.counts());
    if outcome.passed == 0 {
        fail!("netCDF4-python's suite ran no test on {label}");
    }
    Ok(outcome)
}
