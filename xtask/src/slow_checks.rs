// SPDX-License-Identifier: BSD-3-Clause
//! The slow checks of `test`: valgrind and the MPI-parallel pair for each release, and the
//! distribution checks (the matrix's configurations, HDF5 1.14.6 and 2.2.0 among them, and the
//! Debian 13 root). `cargo xtask test` runs them all. CI (`NCFILTERS_TIER=ci`) runs one per run,
//! rotating by the UTC day (`rotation.rs`): on a 2-core CI machine the rest of `test` (three
//! releases) takes up to 75 minutes and a slow check 6 to 17 more, so two would not fit in CI's 90.

use crate::configurations::{Configuration, CONFIGURATIONS};
use crate::harness::{Harness, Result};
use crate::release::{Release, RELEASES};

pub enum SlowCheck {
    Valgrind(&'static Release),
    Parallel(&'static Release),
    /// One of the matrix's configurations (`cargo xtask matrix`).
    Configuration(&'static Configuration),
    /// 4.9.3 in a Debian 13 root (`cargo xtask debian13`).
    Debian13Root,
    /// 4.10.1 from the release tarball, with no network (`cargo xtask offline`).
    OfflineFromTarball,
    /// netcdf-c's main branch built as 4.10.1 (`cargo xtask development`).
    DevelopmentSnapshot,
}

/// In CI's order: the kinds alternate, so that consecutive runs cover different ones.
pub static SLOW_CHECKS: [SlowCheck; 20] = [
    SlowCheck::Valgrind(&RELEASES[0]),
    SlowCheck::Parallel(&RELEASES[2]),
    SlowCheck::Configuration(&CONFIGURATIONS[1]),
    SlowCheck::Valgrind(&RELEASES[2]),
    SlowCheck::Configuration(&CONFIGURATIONS[2]),
    SlowCheck::Parallel(&RELEASES[4]),
    SlowCheck::Debian13Root,
    SlowCheck::Configuration(&CONFIGURATIONS[4]),
    SlowCheck::Configuration(&CONFIGURATIONS[3]),
    SlowCheck::Valgrind(&RELEASES[4]),
    SlowCheck::Configuration(&CONFIGURATIONS[0]),
    SlowCheck::Configuration(&CONFIGURATIONS[5]),
    SlowCheck::Parallel(&RELEASES[0]),
    SlowCheck::Configuration(&CONFIGURATIONS[6]),
    SlowCheck::Parallel(&RELEASES[1]),
    SlowCheck::Valgrind(&RELEASES[3]),
    SlowCheck::Parallel(&RELEASES[3]),
    SlowCheck::Valgrind(&RELEASES[1]),
    SlowCheck::OfflineFromTarball,
    SlowCheck::DevelopmentSnapshot,
];

impl SlowCheck {
    pub fn name(&self) -> String {
        match self {
            SlowCheck::Valgrind(release) => format!("valgrind {}", release.version),
            SlowCheck::Parallel(release) => format!("parallel {}", release.version),
            SlowCheck::Configuration(configuration) => format!("matrix {}", configuration.name),
            SlowCheck::Debian13Root => "debian13".into(),
            SlowCheck::OfflineFromTarball => "offline".into(),
            SlowCheck::DevelopmentSnapshot => "development".into(),
        }
    }

    /// Whether the check takes so long (about 10 minutes or more on a 2-core machine: valgrind 16,
    /// the parallel pair 11 to 15, an HDF5 built from source and the Debian root about 15) that its
    /// CI run tests two releases, not three (`rotation`).
    pub fn is_heavy(&self) -> bool {
        match self {
            SlowCheck::Valgrind(_) | SlowCheck::Parallel(_) | SlowCheck::Debian13Root => true,
            SlowCheck::Configuration(configuration) => configuration.hdf5.is_some(),
            SlowCheck::OfflineFromTarball | SlowCheck::DevelopmentSnapshot => false,
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
            | SlowCheck::OfflineFromTarball
            | SlowCheck::DevelopmentSnapshot => None,
        }
    }

    pub fn run(&self, h: &Harness) -> Result {
        match self {
            SlowCheck::Valgrind(release) => crate::valgrind::test_valgrind(&h.for_release(release)),
            SlowCheck::Parallel(release) => crate::parallel::test_parallel(&h.for_release(release)),
            SlowCheck::Configuration(configuration) => crate::matrix::test_configuration(h, configuration),
            SlowCheck::Debian13Root => crate::debian13::test_debian13(h),
            SlowCheck::OfflineFromTarball => crate::offline::test_offline(h),
            SlowCheck::DevelopmentSnapshot => crate::development::test_development(h),
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
        // The distribution checks: debian13, offline, development.
        assert_eq!(names.len(), 2 * RELEASES.len() + CONFIGURATIONS.len() + 3);
    }
}
