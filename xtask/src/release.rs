// SPDX-License-Identifier: BSD-3-Clause
//! The netcdf-c releases the harness builds and tests, and what differs between them: where the
//! source comes from, the configure flags, the suite's size and codec dialect, and the filter
//! tests run by hand. `NCFILTERS_NETCDF_VERSION` picks one for a step; `test` runs them all.

/// Where a release's source comes from.
pub enum Source {
    /// `apt-get source netcdf` on the machine's own suite (Debian 12: 4.9.0).
    Apt,
    /// Upstream's release tarball as Debian distributes it: `apt-get source netcdf=<debian_version>`
    /// from `suite`'s deb-src entry.
    Tarball { file: &'static str, debian_version: &'static str, suite: &'static str },
    /// A `git archive` of an upstream commit no Debian suite carries: upstream's archive of `tag`,
    /// if it has one.
    GitArchive { file: &'static str, tag: Option<&'static str> },
}

/// What a release's source holds, whichever archive brought it (`netcdf_source`).
pub struct SourceTree {
    /// [`crate::netcdf_source::tree_sha256`] of its files, less `not_archived`.
    pub sha256: &'static str,
    /// Files upstream's tarball of the tag has and the `git archive` copy lacks (large test data
    /// no configuration here reads), in lists.
    pub not_archived: &'static [&'static [&'static str]],
}

/// The files 4.9.2's and 4.10.0's archives both lack ("../shared/netcdf-c/README.md"); each also
/// lacks one of its own.
const NOT_ARCHIVED: &[&str] = &[
    "ncdap_test/expecttds3/tst-NCEP-RUC-CONUS.nc.dmp",
    "ncdap_test/expecttds3/tst-NWS-NDFD-CONUS.nc.dmp",
    "ncdap_test/expecttds3/tst-RUC.nc.dmp",
    "ncdap_test/expecttds3/tst-sst.nc.dmp",
    "ncdap_test/expecttds3/tst-striped.nc.dmp",
    "ncdump/cdl/gfs1.cdl",
];

/// The build system a release's CMakeLists.txt has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildSystem {
    /// 4.9.0's (4.9.2 too): options `ENABLE_*`, libnetcdf built in `liblib/`, HDF5 found by its
    /// library paths, plugins installed with `-DPLUGIN_INSTALL_DIR`.
    Enable,
    /// 4.9.3's (4.10 too): options `NETCDF_ENABLE_*`, libnetcdf at the top of the build, HDF5
    /// found through its compiler wrapper, plugins installed with `-DNETCDF_PLUGIN_INSTALL`.
    NetcdfPrefixed,
}

/// The netcdf-c programs the install step runs on ncfilters' installed libnetcdf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistributionPrograms {
    /// Debian 12's netcdf-bin, linked against its libnetcdf19 (4.9.0).
    Debian12,
    /// The stock build's ncdump, nccopy and ncgen, linked against its own libnetcdf.
    StockBuild,
}

pub struct Release {
    pub version: &'static str,
    /// A netcdf-c ncfilters does not know, built with this known release's behaviour
    /// (`-DNCFILTERS_NETCDF_LIKE`): main's snapshot. None for the releases themselves.
    pub built_like: Option<&'static str>,
    pub source: Source,
    pub source_tree: SourceTree,
    pub build_system: BuildSystem,
    /// libnetcdf's file name with its SONAME.
    pub soname: &'static str,
    /// The release has its own plugin-path API (`nc_plugin_path_*`, dplugins.c; 4.9.3 on). Before
    /// it, ncfilters adds the public part (docs/compatibility.md).
    pub own_plugin_path_api: bool,
    /// The filter macros its netcdf_meta.h has.
    pub filter_meta_macros: &'static [&'static str],
    /// Its nc-config has `--plugindir` (4.9.2 on).
    pub nc_config_plugindir: bool,
    pub distribution_programs: DistributionPrograms,
    /// The configure flags of both builds (netcdf-c's option names changed in 4.9.3).
    pub flags: &'static [&'static str],
    /// How many ctest tests the serial builds register; stock and ncfilters pass them all.
    pub ctest_expected: usize,
    /// How many the MPI-parallel ncfilters build passes (the serial tests and the parallel ones).
    pub parallel_ctest_expected: usize,
    /// ctest tests that fail on the stock parallel build, each with whether it fails with ncfilters too.
    pub parallel_stock_failures: &'static [KnownFailure],
    /// `NCFILTERS_CODEC_DIALECT` for the release's suite: its test baselines hold 4.9.x's
    /// string parameters (legacy) or 4.10's numbers (numeric).
    pub suite_dialect: &'static str,
    /// Filter programs netcdf-c's CMake builds but no registered test runs.
    pub unrun_filter_programs: &'static [&'static str],
    /// Filter test scripts present but not registered (run by hand, one at a time).
    pub unregistered_scripts: &'static [&'static str],
    /// The release's own ctest tests the `valgrind` step runs besides those all releases share.
    pub valgrind_tests: &'static [&'static str],
}

/// netcdf_meta.h's filter macros: 4.9.0 has NC_HAS_ZSTD, 4.9.2 on also say blosc and bzip2.
const META_4_9_0: &[&str] = &["NC_HAS_ZSTD"];
const META_4_9_2: &[&str] = &["NC_HAS_ZSTD", "NC_HAS_BLOSC", "NC_HAS_BZ2"];

/// The filter tests 4.9.3 added (the `*_unknown` ones it no longer registers).
const VALGRIND_TESTS_4_9_3: &[&str] = &[
    "nc_test4_tst_filter_vlen",
    "nc_test4_tst_bloscfail",
    "nc_test4_run_zstd_test",
    "nczarr_test_run_filter_vlen",
    "unit_test_run_pluginpaths",
    "unit_test_run_dfaltpluginpath",
];

/// A ctest test that fails on a stock build, and why.
pub struct KnownFailure {
    pub test: &'static str,
    /// It fails with ncfilters too (the cause is outside the code ncfilters replaces).
    pub on_ncfilters: bool,
    pub why: &'static str,
}

/// h5_test's tst_h_par_compress (HDF5 calls only, no netCDF code) reads szip-compressed data in
/// parallel from 4.9.3 on, which Debian 12's HDF5 1.10.8 fails on both builds.
const PARALLEL_SZIP_FAILURE: KnownFailure = KnownFailure {
    test: "h5_test_run_par_tests",
    on_ncfilters: true,
    why: "tst_h_par_compress: HDF5 1.10.8's szip filter fails to decompress in parallel",
};

/// 4.9.3's and 4.10.0's C zstd plugin fails a chunk on rank 0 ("zstd: Src size is incorrect", its
/// decoder reads the output size from the wrong place, fixed in 4.10.1 by #3370), so tst_parallel5's
/// zstd test leaves the other ranks in a collective write forever: the test times out. ncfilters'
/// zstd passes it. (4.9.0's and 4.9.2's tst_parallel5 have no zstd test.)
const PARALLEL_ZSTD_PLUGIN_HANG: KnownFailure = KnownFailure {
    test: "nc_test4_run_par_test",
    on_ncfilters: false,
    why: "tst_parallel5 deadlocks: the C zstd plugin of 4.9.3 and 4.10.0 fails a chunk on rank 0 (\"Src size is incorrect\")",
};

/// The flags every release's builds share, in its own option names.
const FLAGS_4_9_0: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DENABLE_NETCDF_4=ON",
    "-DENABLE_HDF5=ON",
    "-DENABLE_NCZARR=ON",
    "-DENABLE_PLUGINS=ON",
    "-DENABLE_FILTER_TESTING=ON",
    "-DENABLE_NCZARR_FILTERS=ON",
    "-DENABLE_NCZARR_FILTERS_TESTING=ON",
    "-DPLUGIN_INSTALL_DIR=NO",
    "-DENABLE_TESTS=ON",
    "-DENABLE_UNIT_TESTS=ON",
    "-DENABLE_EXAMPLES=ON",
    "-DENABLE_DAP=OFF",
    "-DENABLE_DAP_REMOTE_TESTS=OFF",
    "-DENABLE_BYTERANGE=OFF",
    "-DENABLE_NCZARR_S3=OFF",
    "-DENABLE_NCZARR_S3_TESTS=OFF",
    "-DENABLE_HDF4=OFF",
    "-DENABLE_PNETCDF=OFF",
    "-DENABLE_PARALLEL4=OFF",
    "-DENABLE_DOXYGEN=OFF",
    "-DCMAKE_DISABLE_FIND_PACKAGE_Zip=TRUE",
];

/// 4.9.3 on name their options NETCDF_*.
const FLAGS_4_9_3: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DNETCDF_ENABLE_HDF5=ON",
    "-DNETCDF_ENABLE_NCZARR=ON",
    "-DNETCDF_ENABLE_PLUGINS=ON",
    "-DNETCDF_ENABLE_FILTER_TESTING=ON",
    "-DNETCDF_ENABLE_NCZARR_FILTERS=ON",
    "-DNETCDF_PLUGIN_INSTALL=OFF",
    "-DNETCDF_ENABLE_TESTS=ON",
    "-DNETCDF_ENABLE_UNIT_TESTS=ON",
    "-DNETCDF_ENABLE_EXAMPLES=ON",
    "-DNETCDF_ENABLE_DAP=OFF",
    "-DNETCDF_ENABLE_DAP_REMOTE_TESTS=OFF",
    "-DNETCDF_ENABLE_BYTERANGE=OFF",
    "-DNETCDF_ENABLE_S3=OFF",
    "-DNETCDF_ENABLE_NCZARR_S3=OFF",
    "-DNETCDF_ENABLE_HDF4=OFF",
    "-DNETCDF_ENABLE_PNETCDF=OFF",
    "-DNETCDF_ENABLE_PARALLEL4=OFF",
    "-DNETCDF_ENABLE_DOXYGEN=OFF",
    "-DNETCDF_ENABLE_NCZARR_ZIP=OFF",
];

/// 4.10.1's: 4.9.3's and the test of its unsupported-codec message.
const VALGRIND_TESTS_4_10_1: &[&str] = &[
    "nc_test4_tst_filter_vlen",
    "nc_test4_tst_bloscfail",
    "nc_test4_run_zstd_test",
    "nczarr_test_run_filter_vlen",
    "unit_test_run_pluginpaths",
    "unit_test_run_dfaltpluginpath",
    "nczarr_test_run_filter_errors",
];

/// 4.10.1, the newest release; main's snapshot is built like it.
const RELEASE_4_10_1: Release = Release {
    built_like: None,
    version: "4.10.1",
    source: Source::Tarball { file: "netcdf_4.10.1.orig.tar.gz", debian_version: "1:4.10.1-1", suite: "sid" },
    source_tree: SourceTree {
        sha256: "35fcb4041ce85767bd9509560f4bc48bd3b6e95438eeaec2acb37d178fc7d8d5",
        not_archived: &[],
    },
    build_system: BuildSystem::NetcdfPrefixed,
    soname: "libnetcdf.so.22",
    own_plugin_path_api: true,
    filter_meta_macros: META_4_9_2,
    nc_config_plugindir: true,
    distribution_programs: DistributionPrograms::StockBuild,
    flags: FLAGS_4_9_3,
    ctest_expected: 235,
    parallel_ctest_expected: 237,
    parallel_stock_failures: &[PARALLEL_SZIP_FAILURE],
    suite_dialect: "numeric",
    unrun_filter_programs: &["nc_test4/tst_filterparser"],
    unregistered_scripts: &["nc_test4/tst_unknown.sh", "nczarr_test/run_unknown.sh"],
    valgrind_tests: VALGRIND_TESTS_4_10_1,
};

pub static RELEASES: [Release; 5] = [
    Release {
        built_like: None,
        version: "4.9.0",
        source: Source::Apt,
        source_tree: SourceTree {
            sha256: "1af311b6d582e490adabd57f7dc22b44427507516aae0e9f8df65dfbbf2b81b7",
            not_archived: &[],
        },
        build_system: BuildSystem::Enable,
        soname: "libnetcdf.so.19",
        own_plugin_path_api: false,
        filter_meta_macros: META_4_9_0,
        nc_config_plugindir: false,
        distribution_programs: DistributionPrograms::Debian12,
        flags: FLAGS_4_9_0,
        ctest_expected: 221,
        parallel_ctest_expected: 223,
        parallel_stock_failures: &[],
        suite_dialect: "legacy",
        unrun_filter_programs: UNRUN_FILTER_PROGRAMS_4_9_0,
        unregistered_scripts: &[],
        valgrind_tests: &["tst_create_files", "tst_special_atts", "nc_test4_tst_unknown", "nczarr_test_run_unknown"],
    },
    Release {
        built_like: None,
        version: "4.9.2",
        source: Source::GitArchive { file: "netcdf-c-4.9.2.git-archive.tar.gz", tag: Some("v4.9.2") },
        source_tree: SourceTree {
            sha256: "37bdcdf82716e8d17c331912a1398abc94b6a76033810c8d787e2e4556bd7288",
            not_archived: &[NOT_ARCHIVED, &["dap4_test/baselinehyrax/amsre_20060131v5.dat.hyrax"]],
        },
        build_system: BuildSystem::Enable,
        soname: "libnetcdf.so.19",
        own_plugin_path_api: false,
        filter_meta_macros: META_4_9_2,
        nc_config_plugindir: true,
        distribution_programs: DistributionPrograms::StockBuild,
        flags: FLAGS_4_9_0,
        ctest_expected: CTEST_4_9_2,
        parallel_ctest_expected: CTEST_4_9_2 + 2,
        parallel_stock_failures: &[],
        suite_dialect: "legacy",
        unrun_filter_programs: UNRUN_FILTER_PROGRAMS_4_9_0,
        unregistered_scripts: &["nc_test4/tst_unknown.sh"],
        // 4.9.0's, less tst_unknown (no longer registered), and the blosc test it added.
        valgrind_tests: &["tst_create_files", "tst_special_atts", "nczarr_test_run_unknown", "nc_test4_tst_bloscfail"],
    },
    Release {
        built_like: None,
        version: "4.9.3",
        source: Source::Tarball { file: "netcdf_4.9.3.orig.tar.gz", debian_version: "1:4.9.3-1", suite: "trixie" },
        source_tree: SourceTree {
            sha256: "691f959ac6a0f673b8ea74ccc831df8940176cb63b254a0936bfce7098def838",
            not_archived: &[],
        },
        build_system: BuildSystem::NetcdfPrefixed,
        soname: "libnetcdf.so.22",
        own_plugin_path_api: true,
        filter_meta_macros: META_4_9_2,
        nc_config_plugindir: true,
        distribution_programs: DistributionPrograms::StockBuild,
        flags: FLAGS_4_9_3,
        ctest_expected: 222,
        parallel_ctest_expected: 224,
        parallel_stock_failures: &[PARALLEL_SZIP_FAILURE, PARALLEL_ZSTD_PLUGIN_HANG],
        suite_dialect: "legacy",
        unrun_filter_programs: &["nc_test4/tst_filterparser"],
        unregistered_scripts: &["nc_test4/tst_unknown.sh", "nczarr_test/run_unknown.sh"],
        valgrind_tests: VALGRIND_TESTS_4_9_3,
    },
    Release {
        built_like: None,
        version: "4.10.0",
        source: Source::GitArchive { file: "netcdf-c-4.10.0.git-archive.tar.gz", tag: Some("v4.10.0") },
        source_tree: SourceTree {
            sha256: "5a5bf24706a6ae23f270130d04b4f85985796f233835fcc9a5a5b92352c8a585",
            not_archived: &[NOT_ARCHIVED, &["docs/doxygen-awesome-css/docs/img/fancy_scrollbars_webkit.gif"]],
        },
        build_system: BuildSystem::NetcdfPrefixed,
        soname: "libnetcdf.so.22",
        own_plugin_path_api: true,
        filter_meta_macros: META_4_9_2,
        nc_config_plugindir: true,
        distribution_programs: DistributionPrograms::StockBuild,
        flags: FLAGS_4_9_3,
        ctest_expected: CTEST_4_10_0,
        parallel_ctest_expected: CTEST_4_10_0 + 2,
        parallel_stock_failures: &[PARALLEL_SZIP_FAILURE, PARALLEL_ZSTD_PLUGIN_HANG],
        suite_dialect: "numeric",
        unrun_filter_programs: &["nc_test4/tst_filterparser"],
        unregistered_scripts: &["nc_test4/tst_unknown.sh", "nczarr_test/run_unknown.sh"],
        valgrind_tests: VALGRIND_TESTS_4_10_1,
    },
    RELEASE_4_10_1,
];

/// netcdf-c's main branch after 4.10.1 (`../shared/netcdf-c`), which calls itself 4.10.2: the
/// next release before it ships, built as 4.10.1 (`cargo xtask development`). Its changes since
/// 4.10.1 leave what ncfilters mirrors and replaces as it was, so it needs no row of its own in
/// logic/build.rs's table.
pub static DEVELOPMENT_SNAPSHOT: Release = Release {
    version: "4.10.2-development",
    built_like: Some("4.10.1"),
    source: Source::GitArchive { file: "netcdf-c-4.10.2-development.git-2ed1b285b.tar.gz", tag: None },
    // main at 2ed1b285b.
    source_tree: SourceTree {
        sha256: "78472541be5f5238cac54a9710f681359a64621011e677ddd38c36996c135ce9",
        not_archived: &[],
    },
    // Five tests more than 4.10.1's suite.
    ctest_expected: 240,
    parallel_ctest_expected: 242,
    ..RELEASE_4_10_1
};

/// How many ctest tests 4.9.2's and 4.10.0's test-flag builds register (stock passes them all).
const CTEST_4_9_2: usize = 226;
const CTEST_4_10_0: usize = 228;

/// Filter programs 4.9.0's and 4.9.2's CMake builds but no registered test runs.
const UNRUN_FILTER_PROGRAMS_4_9_0: &[&str] = &[
    "nc_test4/tst_filterparser",
    "nc_test4/tst_filter_avail",
    "nczarr_test/test_filter_avail",
    "nc_test4/test_filter_vlen",
];

/// The release `version` names, or an error listing the known ones.
pub fn find(version: &str) -> Result<&'static Release, String> {
    RELEASES.iter().find(|r| r.version == version).ok_or_else(|| {
        let known: Vec<&str> = RELEASES.iter().map(|r| r.version).collect();
        format!("netcdf-c {version:?} is not a release ncfilters knows ({})", known.join(", "))
    })
}

impl Release {
    /// The first release, whose trees keep the harness's original paths.
    pub fn is_first(&self) -> bool {
        self.version == RELEASES[0].version
    }

    /// `-D<option>=<value>` with the release's name for a netcdf-c option (`ENABLE_TESTS` in
    /// 4.9.0 and 4.9.2, `NETCDF_ENABLE_TESTS` from 4.9.3 on).
    pub fn option(&self, option: &str, value: &str) -> String {
        let prefix = match self.build_system {
            BuildSystem::Enable => "",
            BuildSystem::NetcdfPrefixed => "NETCDF_",
        };
        format!("-D{prefix}{option}={value}")
    }
}

/// The newest release ncfilters supports.
pub fn newest() -> &'static Release {
    &RELEASES[RELEASES.len() - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// logic/build.rs and the CMake module keep their own copy of the release list (neither can read
    /// this table); they must list the same releases in the same order.
    #[test]
    fn build_rs_and_the_cmake_module_list_the_table_s_releases() {
        let versions: Vec<&str> = RELEASES.iter().map(|r| r.version).collect();
        let build_rs = include_str!("../../logic/build.rs");
        let line = build_rs.lines().find(|l| l.starts_with("const RELEASES:")).expect("logic/build.rs lists RELEASES");
        let listed: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
        assert_eq!(listed, versions, "logic/build.rs");
        let cmake = include_str!("../../cmake/ncfilters.cmake");
        let line =
            cmake.lines().find(|l| l.starts_with("set(NCFILTERS_KNOWN_RELEASES ")).expect("the module lists them");
        let listed: Vec<&str> = line.trim_end_matches(')').split_whitespace().skip(1).collect();
        assert_eq!(listed, versions, "cmake/ncfilters.cmake");
    }

    #[test]
    fn the_first_release_is_4_9_0_and_found_by_name() {
        assert!(find("4.9.0").unwrap().is_first());
        assert!(!find("4.10.1").unwrap().is_first() && std::ptr::eq(find("4.10.1").unwrap(), newest()));
        assert!(find("4.9.1").err().is_some_and(|e| e.contains("4.9.0, 4.9.2, 4.9.3, 4.10.0, 4.10.1")));
    }

    /// The facts the table states agree with the releases' build systems.
    #[test]
    fn build_system_facts_go_together() {
        for release in &RELEASES {
            let enable = release.build_system == BuildSystem::Enable;
            assert_eq!(release.flags.iter().any(|f| f.starts_with("-DNETCDF_")), !enable, "{}", release.version);
            assert_eq!(release.soname.ends_with(".19"), enable, "{}", release.version);
            assert_eq!(release.option("ENABLE_TESTS", "ON").contains("NETCDF_"), !enable, "{}", release.version);
            assert!(!release.own_plugin_path_api || !enable, "{}", release.version);
        }
    }
}
