// SPDX-License-Identifier: BSD-3-Clause
//! The slow checks of `test`: valgrind and the MPI-parallel pair for each release, and the
//! distribution checks (the matrix's configurations, HDF5 1.14.6 and 2.2.0 among them, the Debian 13
//! root, and Debian's own packages). `cargo xtask test` runs them all. CI (`NCFILTERS_TIER=ci`) runs
//! one per run, rotating by the UTC day (`rotation.rs`): on a 2-core CI machine the rest of `test`
//! (two releases) takes up to 75 minutes and a slow check 5 to 30 more, so two would not fit in
//! CI's 90, and the heaviest leave room for one release ([`SlowCheck::releases_beside`]).

use crate::configurations::{Configuration, CONFIGURATIONS};
use crate::cross::{Target, TARGETS};
use crate::deb::{DebianPackage, PACKAGES};
use crate::harness::{Harness, Result};
use crate::release::{Release, RELEASES};
use crate::windows_suite::{WindowsRelease, WINDOWS_RELEASES};

pub enum SlowCheck {
    Valgrind(&'static Release),
    Parallel(&'static Release),
    /// One of the matrix's configurations (`cargo xtask matrix`).
    Configuration(&'static Configuration),
    /// 4.9.3 in a Debian 13 root (`cargo xtask debian13`).
    Debian13Root,
    /// 4.9.3 in a Debian 13 i386 root (`cargo xtask debian13-i386`).
    Debian13I386Root,
    /// 4.9.3 cross-built for arm64 in a Debian 13 root, its suite under qemu (`cargo xtask debian13-arm64`).
    Debian13Arm64Cross,
    /// 4.10.1 from the release tarball, with no network (`cargo xtask offline`).
    OfflineFromTarball,
    /// netcdf-c's main branch built as 4.10.1 (`cargo xtask development`).
    DevelopmentSnapshot,
    /// Debian's own netcdf source package built with ncfilters and installed (`cargo xtask deb`).
    DebianPackage(&'static DebianPackage),
    /// The shipped crates' tests on another architecture under qemu-user (`cargo xtask cross`).
    Cross(&'static Target),
    /// The shipped crates' tests built for Windows with MinGW-w64 and run under Wine, with
    /// libblosc and libsz cross-built (the first half of `cargo xtask wine`).
    WineTests,
    /// HDF5 and one of `windows_suite::WINDOWS_RELEASES` cross-built for Windows, stock and with
    /// the module, and the suite under Wine on both (the second half of `cargo xtask wine`). Apart
    /// from the tests: together they took 45 minutes, too many for a CI run.
    WineNetcdf(&'static WindowsRelease),
    /// The shipped crates' test programs built for both Macs in every release's cfg set, then
    /// netcdf-c 4.10.1 cross-built for both, stock and with the module, and its Mach-O files
    /// checked (`cargo xtask macos`).
    Macos,
}

/// In CI's order: the kinds alternate, so that consecutive runs cover different ones.
pub static SLOW_CHECKS: [SlowCheck; 37] = [
    SlowCheck::Valgrind(&RELEASES[0]),
    SlowCheck::Parallel(&RELEASES[2]),
    SlowCheck::Configuration(&CONFIGURATIONS[1]),
    SlowCheck::Cross(&TARGETS[6]),
    SlowCheck::Valgrind(&RELEASES[2]),
    SlowCheck::Configuration(&CONFIGURATIONS[2]),
    SlowCheck::Parallel(&RELEASES[4]),
    SlowCheck::Cross(&TARGETS[0]),
    SlowCheck::Debian13Root,
    SlowCheck::Configuration(&CONFIGURATIONS[4]),
    SlowCheck::Configuration(&CONFIGURATIONS[3]),
    SlowCheck::Cross(&TARGETS[3]),
    SlowCheck::Valgrind(&RELEASES[4]),
    SlowCheck::DebianPackage(&PACKAGES[0]),
    SlowCheck::Configuration(&CONFIGURATIONS[0]),
    SlowCheck::Cross(&TARGETS[1]),
    SlowCheck::Configuration(&CONFIGURATIONS[5]),
    SlowCheck::Parallel(&RELEASES[0]),
    SlowCheck::Configuration(&CONFIGURATIONS[6]),
    SlowCheck::Cross(&TARGETS[4]),
    SlowCheck::Parallel(&RELEASES[1]),
    SlowCheck::Valgrind(&RELEASES[3]),
    SlowCheck::WineNetcdf(&WINDOWS_RELEASES[1]),
    SlowCheck::Parallel(&RELEASES[3]),
    SlowCheck::Cross(&TARGETS[5]),
    SlowCheck::Valgrind(&RELEASES[1]),
    SlowCheck::OfflineFromTarball,
    SlowCheck::DevelopmentSnapshot,
    SlowCheck::Cross(&TARGETS[2]),
    SlowCheck::DebianPackage(&PACKAGES[1]),
    SlowCheck::Debian13I386Root,
    SlowCheck::DebianPackage(&PACKAGES[2]),
    SlowCheck::Debian13Arm64Cross,
    SlowCheck::DebianPackage(&PACKAGES[3]),
    SlowCheck::WineNetcdf(&WINDOWS_RELEASES[0]),
    SlowCheck::Macos,
    SlowCheck::WineTests,
];

impl SlowCheck {
    pub fn name(&self) -> String {
        match self {
            SlowCheck::Valgrind(release) => format!("valgrind {}", release.version),
            SlowCheck::Parallel(release) => format!("parallel {}", release.version),
            SlowCheck::Configuration(configuration) => format!("matrix {}", configuration.name),
            SlowCheck::Debian13Root => "debian13".into(),
            SlowCheck::Debian13I386Root => "debian13-i386".into(),
            SlowCheck::Debian13Arm64Cross => "debian13-arm64".into(),
            SlowCheck::OfflineFromTarball => "offline".into(),
            SlowCheck::DevelopmentSnapshot => "development".into(),
            SlowCheck::DebianPackage(package) => format!("deb {}", package.name()),
            SlowCheck::Cross(target) => format!("cross {}", target.arch),
            SlowCheck::WineTests => "wine".into(),
            SlowCheck::WineNetcdf(release) => format!("wine {}", release.version),
            SlowCheck::Macos => "macos".into(),
        }
    }

    /// How many releases a CI run tests beside the check (`rotation`), by the check's time on a
    /// 2-core machine, where the rest of a run (the Rust checks, fuzz, cross-compile) takes about
    /// 34 minutes and each release 12 to 20: two beside a light check (under 10 minutes: the i386
    /// root's suite about 7), the parallel pair (11 to 15), an HDF5 built from source, `macos`
    /// (about 15: the Mac test programs, then zlib, libzstd, HDF5 and netcdf-c twice cross-built
    /// for each Mac) and the Debian 13 root (about 15); one beside valgrind (its own release, whose builds and suite it
    /// reuses: 17 minutes for the suite's tests, then the damaged chunks; with two releases CI ran
    /// past 90 minutes on 2026-12-03), the arm64 cross build with its suite under qemu (about 21),
    /// `wine` (the Windows tests, then HDF5 and one release's netcdf-c twice cross-built and its
    /// suite under Wine on both) and Debian's package, built twice from scratch and
    /// installed into two new roots (about 30, for amd64 or i386). Three releases beside even a
    /// light check took 95 minutes on a slow 2-core machine (2026-12-02).
    pub fn releases_beside(&self) -> usize {
        match self {
            SlowCheck::OfflineFromTarball
            | SlowCheck::DevelopmentSnapshot
            | SlowCheck::Cross(_)
            | SlowCheck::Macos
            | SlowCheck::WineTests
            | SlowCheck::Debian13I386Root
            | SlowCheck::Parallel(_)
            | SlowCheck::Configuration(_)
            | SlowCheck::Debian13Root => 2,
            SlowCheck::Valgrind(_)
            | SlowCheck::Debian13Arm64Cross
            | SlowCheck::DebianPackage(_)
            | SlowCheck::WineNetcdf(_) => 1,
        }
    }

    /// The release whose two serial builds (`build`) the check tests, if it needs them: a CI run
    /// builds that release among its own (`rotation`).
    pub fn tests_serial_builds_of(&self) -> Option<&'static Release> {
        match self {
            SlowCheck::Valgrind(release) => Some(release),
            SlowCheck::Parallel(_)
            | SlowCheck::Configuration(_)
            | SlowCheck::Debian13Root
            | SlowCheck::Debian13I386Root
            | SlowCheck::Debian13Arm64Cross
            | SlowCheck::OfflineFromTarball
            | SlowCheck::DevelopmentSnapshot
            | SlowCheck::DebianPackage(_)
            | SlowCheck::Cross(_)
            | SlowCheck::WineTests
            | SlowCheck::WineNetcdf(_)
            | SlowCheck::Macos => None,
        }
    }

    /// Whether the check reads the trees of the run's netcdf-c builds (valgrind reruns their
    /// suites; the parallel pair and the matrix's configurations start from their releases').
    pub fn reuses_release_builds(&self) -> bool {
        matches!(self, SlowCheck::Valgrind(_) | SlowCheck::Parallel(_) | SlowCheck::Configuration(_))
    }

    /// Runs the check.
    pub fn run(&self, h: &Harness) -> Result {
        match self {
            SlowCheck::Valgrind(release) => crate::valgrind::test_valgrind(&h.for_release(release)),
            SlowCheck::Parallel(release) => crate::parallel::test_parallel(&h.for_release(release)),
            SlowCheck::Configuration(configuration) => crate::matrix::test_configuration(h, configuration),
            SlowCheck::Debian13Root => crate::debian13::test_debian13(h),
            SlowCheck::Debian13I386Root => crate::debian13::test_debian13_i386(h),
            SlowCheck::Debian13Arm64Cross => crate::debian13::test_debian13_arm64(h),
            SlowCheck::OfflineFromTarball => crate::offline::test_offline(h),
            SlowCheck::DevelopmentSnapshot => crate::development::test_development(h),
            SlowCheck::DebianPackage(package) => crate::deb::test_package(h, package),
            SlowCheck::Cross(target) => crate::cross::test_cross(h, &[target]),
            SlowCheck::WineTests => crate::windows_netcdf::test_shipped_crates(h, &crate::cross::shipped_packages(h)?),
            SlowCheck::WineNetcdf(release) => crate::windows_netcdf::test_netcdf(h, release),
            SlowCheck::Macos => {
                crate::macos::build_tests_for_every_release(h, &crate::cross::shipped_packages(h)?)?;
                crate::macos_netcdf::test_macos_netcdf(h)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_release_and_distribution_check_is_in_the_rotation_once() {
        let mut names: Vec<String> = SLOW_CHECKS.iter().map(SlowCheck::name).collect();
        names.sort();
        names.dedup();
        // The distribution checks: debian13, debian13-i386, debian13-arm64, offline, development,
        // wine, macos, Debian's packages, the architectures, and netcdf-c's releases for Windows.
        let windows = WINDOWS_RELEASES.len();
        assert_eq!(
            names.len(),
            2 * RELEASES.len() + CONFIGURATIONS.len() + 7 + PACKAGES.len() + TARGETS.len() + windows
        );
        assert_eq!(names.len(), SLOW_CHECKS.len());
    }
}
