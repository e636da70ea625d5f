// SPDX-License-Identifier: BSD-3-Clause
//! The configurations of netcdf-c that distributions ship, which `matrix` builds and tests (and
//! `debian13` reuses): each one's options over a release's test flags, its HDF5, its expected
//! counts and stock's known failures. `netcdf` configures their builds from here.

use crate::harness::Harness;
use crate::hdf5::{Hdf5Release, HDF5_1_14_6, HDF5_2_2_0};
use crate::process::cmd;
use crate::release::{self, KnownFailure, Release};

/// A configuration of netcdf-c that a distribution ships, over one release's test flags.
pub struct Configuration {
    /// The flavour suffix of its builds (`stock-<name>`, `ncfilters-<name>`).
    pub name: &'static str,
    /// How the summary lines name it.
    pub title: &'static str,
    pub release: &'static str,
    /// Options set over the release's test flags: `ENABLE_*` in the release's own naming
    /// ([`Release::option`]), any other as it is.
    pub options: &'static [(&'static str, &'static str)],
    /// The HDF5 it builds against when not the machine's (Debian 12's 1.10.8).
    pub hdf5: Option<&'static Hdf5Release>,
    /// How many ctest tests the ncfilters build passes.
    pub ctest_expected: usize,
    /// ctest tests that fail on the stock build in this configuration, and why.
    pub stock_failures: &'static [KnownFailure],
}

/// 4.9.0 registers its NCZarr filter tests with ENABLE_FILTER_TESTING, whatever
/// ENABLE_NCZARR_FILTERS says; with NCZarr's filters off stock's stub accepts a filter and stores
/// none, and they fail. ncfilters brings the filters, and they pass.
const NCZARR_FILTER_TESTS_WITHOUT_FILTERS_4_9_0: [KnownFailure; 3] = [
    KnownFailure {
        test: "nczarr_test_run_filter",
        on_ncfilters: false,
        why: "testfilter.c: filter def/inq mismatch (zdispatch.c's stub defines no filter)",
    },
    KnownFailure {
        test: "nczarr_test_run_specific_filters",
        on_ncfilters: false,
        why: "the stub writes no filter, so no variable shows the _Filter it expects",
    },
    KnownFailure {
        test: "nczarr_test_run_unknown",
        on_ncfilters: false,
        why: "ncgen: undefined filter, where the test expects the filter defined and its data unreadable",
    },
];

pub static CONFIGURATIONS: [Configuration; 7] = [
    // Debian 13's libnetcdf22 (its libnetcdf.settings): plugins off, which turns NCZarr's filters
    // off, logging (nc_set_log_level is exported), DAP2, DAP4 and byte-range on.
    Configuration {
        name: "debian13",
        title: "Debian 13 flags",
        release: "4.9.3",
        options: &[
            ("ENABLE_PLUGINS", "OFF"),
            ("ENABLE_FILTER_TESTING", "OFF"),
            ("ENABLE_NCZARR_FILTERS", "OFF"),
            ("ENABLE_LOGGING", "ON"),
            ("ENABLE_DAP", "ON"),
            ("ENABLE_DAP2", "ON"),
            ("ENABLE_DAP4", "ON"),
            ("ENABLE_BYTERANGE", "ON"),
        ],
        hdf5: None,
        ctest_expected: 218,
        stock_failures: &[],
    },
    // Static libraries only: netcdf-c builds no plugins, and libnetcdf.a must carry ncfilters.
    Configuration {
        name: "static",
        title: "static",
        release: "4.10.1",
        options: &[("BUILD_SHARED_LIBS", "OFF")],
        hdf5: None,
        ctest_expected: 222,
        stock_failures: &[],
    },
    // Plugins on, NCZarr's filters off.
    Configuration {
        name: "nczarr-filters-off",
        title: "NCZarr filters off",
        release: "4.9.0",
        options: &[("ENABLE_NCZARR_FILTERS", "OFF"), ("ENABLE_NCZARR_FILTERS_TESTING", "OFF")],
        hdf5: None,
        ctest_expected: 221,
        stock_failures: &NCZARR_FILTER_TESTS_WITHOUT_FILTERS_4_9_0,
    },
    // The test flags on HDF5 1.14 (Debian 13, Ubuntu 26.04, Fedora 44) ...
    Configuration {
        name: "hdf5-1.14.6",
        title: "HDF5 1.14.6 from source",
        release: "4.10.1",
        options: &[],
        hdf5: Some(&HDF5_1_14_6),
        ctest_expected: 235,
        stock_failures: &[],
    },
    // ... and on HDF5 2.x (Fedora 45, conda-forge), which checks the filter contract.
    Configuration {
        name: "hdf5-2.2.0",
        title: "HDF5 2.2.0 from source",
        release: "4.10.1",
        options: &[],
        hdf5: Some(&HDF5_2_2_0),
        ctest_expected: 235,
        stock_failures: &[],
    },
    // 4.9.3 on HDF5 2.x: its nczarr_test/ncdumpchunks.c calls H5Dread_chunk with 1.x's five
    // arguments, which 2.x maps to the six of H5Dread_chunk2, so the build fails (netcdf-c #3202).
    // HDF5's own API-version macro keeps the old call, as a packager would set it.
    Configuration {
        name: "hdf5-2.2.0-read-chunk-v1",
        title: "HDF5 2.2.0 from source, H5Dread_chunk_vers=1",
        release: "4.9.3",
        options: &[("CMAKE_C_FLAGS", "-DH5Dread_chunk_vers=1")],
        hdf5: Some(&HDF5_2_2_0),
        ctest_expected: 221,
        stock_failures: &STOCK_4_9_3_ON_HDF5_2,
    },
    // netcdf-c's configure finds no zstd, blosc or szip library (a machine without their -dev
    // packages): stock builds none of those plugins; ncfilters' filters work all the same, and the
    // metadata it installs says so.
    Configuration {
        name: "without-zstd-blosc-szip",
        title: "zstd, blosc and szip not found",
        release: "4.10.1",
        options: &[
            ("CMAKE_DISABLE_FIND_PACKAGE_Zstd", "ON"),
            ("CMAKE_DISABLE_FIND_PACKAGE_Blosc", "ON"),
            ("CMAKE_DISABLE_FIND_PACKAGE_Szip", "ON"),
        ],
        hdf5: None,
        ctest_expected: 233,
        stock_failures: &[KnownFailure {
            test: "nczarr_test_run_specific_filters",
            on_ncfilters: false,
            why: "its szip case runs wherever HDF5 has szip, but with no libsz found stock builds no NCZarr szip codec: 'ncgen: NetCDF: Filter error: undefined filter encountered'",
        }],
    },
];

/// What stock 4.9.3 fails on HDF5 2.2, which allocates a chunk's read buffer at the chunk's size
/// (`*buf_size > nbytes` when a filter decodes).
const STOCK_4_9_3_ON_HDF5_2: [KnownFailure; 3] = [
    KnownFailure {
        test: "nc_test4_run_zstd_test",
        on_ncfilters: false,
        why: "4.9.3's C zstd plugin takes *buf_size for the compressed size: 'zstd: Src size is incorrect' (netcdf-c #3370, fixed in 4.10.1)",
    },
    KnownFailure {
        test: "h5_test_run_h5_zstd_tests",
        on_ncfilters: false,
        why: "the same zstd plugin, read through HDF5 alone",
    },
    KnownFailure {
        test: "nc_test4_tst_filter",
        on_ncfilters: true,
        why: "test_filter_misc.c's test1 through netcdf-c's own test filter (plugins/H5Zmisc.c, which ncfilters leaves in place): 'mismatch: tint64, tuint64, tfloat64'",
    },
];

impl Configuration {
    /// The release's test flags with this configuration's options in place of theirs.
    pub fn flags(&self, release: &Release) -> Vec<String> {
        let set: Vec<String> = self
            .options
            .iter()
            .map(|(option, value)| {
                if option.starts_with("ENABLE_") {
                    release.option(option, value)
                } else {
                    format!("-D{option}={value}")
                }
            })
            .collect();
        let names: Vec<&str> = set.iter().filter_map(|flag| flag.split_once('=').map(|(name, _)| name)).collect();
        let mut flags: Vec<String> = release
            .flags
            .iter()
            .filter(|flag| !names.iter().any(|name| flag.split_once('=').is_some_and(|(n, _)| n == *name)))
            .map(|flag| flag.to_string())
            .collect();
        flags.extend(set);
        flags
    }

    /// The option that points netcdf-c's configure at this configuration's HDF5, if not the
    /// machine's.
    pub fn hdf5_flags(&self, h: &Harness) -> Vec<String> {
        self.hdf5.iter().map(|hdf5| format!("-DHDF5_ROOT={}", hdf5.prefix(h).display())).collect()
    }

    pub fn release(&self) -> &'static Release {
        release::find(self.release).expect("a configuration names a known release")
    }

    pub fn is_static(&self) -> bool {
        self.options.contains(&("BUILD_SHARED_LIBS", "OFF"))
    }
}

/// The configuration a flavour (`stock-<name>` or `ncfilters-<name>`) builds, if any.
pub fn configuration_of(flavour: &str) -> Option<&'static Configuration> {
    let name = flavour.strip_prefix("stock-").or_else(|| flavour.strip_prefix("ncfilters-"))?;
    CONFIGURATIONS.iter().find(|configuration| configuration.name == name)
}

/// How a summary line names a flavour's build: `4.9.3 (Debian 13 flags) on HDF5 1.10.8 ncfilters`
/// for a configuration's, `4.9.3 ncfilters` for the others.
pub fn describe(h: &Harness, flavour: &str) -> String {
    match configuration_of(flavour) {
        Some(configuration) => {
            let base = flavour.split('-').next().unwrap_or(flavour);
            let hdf5 = hdf5_version(h, flavour).unwrap_or_else(|| "(unknown)".into());
            format!("{} ({}) on HDF5 {hdf5} {base}", h.version(), configuration.title)
        }
        None => format!("{} {}", h.version(), flavour.replace('-', " ")),
    }
}

/// The HDF5 version a build compiled against: what netcdf-c's configure found (4.9.3 on print it),
/// else `-showconfig` of `h5cc`.
fn hdf5_version(h: &Harness, flavour: &str) -> Option<String> {
    let configure_log = std::fs::read_to_string(h.work_file(&format!("configure-{flavour}.log"))).unwrap_or_default();
    if let Some(version) = configure_log.lines().find_map(|line| line.split("Found HDF5 version: ").nth(1)) {
        return Some(version.trim().to_string());
    }
    let config = crate::process::output_ignoring_errors(&mut cmd("h5cc", ["-showconfig"])).ok()?;
    let line = config.lines().find(|line| line.trim_start().starts_with("HDF5 Version:"))?;
    Some(line.split(':').nth(1)?.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_replaces_the_test_flags_it_names() {
        let debian = &CONFIGURATIONS[0];
        let flags = debian.flags(debian.release());
        assert!(flags.contains(&"-DNETCDF_ENABLE_PLUGINS=OFF".to_string()));
        assert!(!flags.contains(&"-DNETCDF_ENABLE_PLUGINS=ON".to_string()));
        assert!(flags.contains(&"-DNETCDF_ENABLE_LOGGING=ON".to_string()));
        let static_build = &CONFIGURATIONS[1];
        let flags = static_build.flags(static_build.release());
        assert!(flags.contains(&"-DBUILD_SHARED_LIBS=OFF".to_string()));
        assert!(!flags.contains(&"-DBUILD_SHARED_LIBS=ON".to_string()));
    }

    #[test]
    fn flavours_name_their_configuration() {
        assert_eq!(configuration_of("ncfilters-debian13").map(|c| c.release), Some("4.9.3"));
        assert_eq!(configuration_of("stock-static").map(|c| c.release), Some("4.10.1"));
        assert!(configuration_of("stock-parallel").is_none() && configuration_of("ncfilters").is_none());
    }
}
