//! `matrix`: netcdf-c configured as distributions build it, not as the other steps' test flags
//! do. Each configuration is built twice, stock and with ncfilters; netcdf-c's suite must pass on
//! ncfilters every test it passes on stock (and the configuration's known stock failures), and
//! libnetcdf must export what stock exports in that configuration, plus only ncfilters'
//! documented additions (docs/compatibility.md).

use std::collections::BTreeSet;
use std::path::Path;

use crate::harness::{fail, Harness, Result};
use crate::hdf5::{Hdf5Release, HDF5_1_14_6, HDF5_2_2_0};
use crate::netcdf::{build_netcdf, run_suite_pair};
use crate::process::{cmd, output};
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

/// ncfilters' own functions (include/ncfilters.h) and the hooks its compiled copies of zsync.c
/// and zxcache.c call: exported in every configuration.
const OWN_EXPORTS: [&str; 5] = [
    "ncfilters_report",
    "ncfilters_describe_spec",
    "ncfilters_describe_codec",
    "ncfilters_zarr_codec",
    "ncfilters_zarr_raw_chunk",
];

/// 4.9.3's plugin-path API, which ncfilters adds to 4.9.0 (docs/compatibility.md): the public
/// `nc_plugin_path_*` and `ncaux_plugin_path_*`, and the dispatch layers' `NC4_hdf5_plugin_path_*`
/// and `NCZ_plugin_path_*`.
const PLUGIN_PATH_API_PREFIXES: [&str; 4] =
    ["nc_plugin_path_", "ncaux_plugin_path_", "NC4_hdf5_plugin_path_", "NCZ_plugin_path_"];

/// The CMake module, whose NCFILTERS_NCZARR_FILTER_INTERNALS lists the NCZarr filter internals
/// ncfilters adds where netcdf-c's NCZarr filters are off (4.9.3 on).
const CMAKE_MODULE: &str = include_str!("../../cmake/ncfilters.cmake");

/// The names of NCFILTERS_NCZARR_FILTER_INTERNALS: a static libnetcdf.a has them global, as its
/// objects call each other (libnetcdf.so keeps them local with its version script).
fn nczarr_filter_internals() -> Vec<&'static str> {
    let start = CMAKE_MODULE.find("set(NCFILTERS_NCZARR_FILTER_INTERNALS").expect("the module lists the internals");
    let list = &CMAKE_MODULE[start..];
    let list = &list[..list.find(')').expect("the list ends")];
    list.split_whitespace().skip(1).collect()
}

/// What 4.9.0's zfilter.c exports and ncfilters does not: the C plugin loader's own state and
/// helper, which no other netcdf-c file uses (docs/compatibility.md).
const LOADER_INTERNALS_OF_4_9_0: [&str; 3] = ["loadcodecdefaults", "loaded_plugins", "loaded_plugins_max"];

/// What ncfilters exports besides stock's wherever NCZarr's filters are exported:
/// `NCZ_codec_freelist`, which every release's zfilter.h declares and no file defines.
const DECLARED_BUT_UNDEFINED: [&str; 1] = ["NCZ_codec_freelist"];

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

    fn is_static(&self) -> bool {
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

/// The libhdf5 the dynamic loader gives a build's libnetcdf.so is the configuration's own: an
/// HDF5 in the cache that configure missed would otherwise leave the machine's 1.10 under test.
fn check_loaded_hdf5(h: &Harness, flavour: &str, hdf5: &Hdf5Release) -> Result {
    let library = h.lib_dir(flavour).join("libnetcdf.so");
    let loaded = crate::hdf5::require_hdf5_from(&library, None, &hdf5.prefix(h))?;
    println!("PASS {flavour}: libnetcdf.so loads HDF5 {}: {}", hdf5.version, loaded.join(", "));
    Ok(())
}

/// `cargo xtask matrix`: the configuration `NCFILTERS_CONFIGURATION` names, else every one.
pub fn test_chosen(h: &Harness) -> Result {
    let chosen = crate::harness::env_or("NCFILTERS_CONFIGURATION", "");
    let configurations: Vec<&Configuration> =
        CONFIGURATIONS.iter().filter(|c| chosen.is_empty() || c.name == chosen).collect();
    if configurations.is_empty() {
        let names: Vec<&str> = CONFIGURATIONS.iter().map(|c| c.name).collect();
        fail!("NCFILTERS_CONFIGURATION={chosen:?} is none of {}", names.join(", "));
    }
    configurations.into_iter().try_for_each(|configuration| test_configuration(h, configuration))
}

pub fn test_configuration(h: &Harness, configuration: &Configuration) -> Result {
    let h = h.for_release(configuration.release());
    crate::setup::setup(&h)?;
    if let Some(hdf5) = configuration.hdf5 {
        crate::hdf5::ensure_built(&h, hdf5)?;
    }
    let (stock, ncfilters) = (format!("stock-{}", configuration.name), format!("ncfilters-{}", configuration.name));
    build_netcdf(&h, &stock)?;
    build_netcdf(&h, &ncfilters)?;
    if let Some(hdf5) = configuration.hdf5 {
        check_loaded_hdf5(&h, &stock, hdf5)?;
        check_loaded_hdf5(&h, &ncfilters, hdf5)?;
    }
    run_suite_pair(&h, &stock, &ncfilters, configuration.ctest_expected, configuration.stock_failures)?;
    compare_exports(&h, configuration.is_static(), &stock, &ncfilters)?;
    if let Some(hdf5) = configuration.hdf5 {
        crate::rust_checks::test_abi_with_hdf5(&h, &stock, hdf5)?;
        let stock_passed = crate::hdf5::test_filter_paths(&h, &stock, hdf5)?;
        let ncfilters_passed = crate::hdf5::test_filter_paths(&h, &ncfilters, hdf5)?;
        println!(
            "netcdf-c {} on HDF5 {}, incompressible and damaged chunks: stock {stock_passed} passed, ncfilters {ncfilters_passed} (all)",
            h.version(),
            hdf5.version
        );
        if hdf5.version == crate::hdf5::HDF5_2_2_0_SIGNING.version {
            crate::hdf5::test_signed_plugins(&h, &ncfilters)?;
        }
    }
    if configuration.is_static() {
        link_with_pkg_config_libs(&h, &ncfilters)?;
    }
    check_installed_metadata(&h, &ncfilters)?;
    Ok(())
}

/// The `netcdf_meta.h` ncfilters installs says zstd, blosc and bzip2 are there whatever
/// netcdf-c's configure found, and szip where HDF5 has it (`cmake/ncfilters_install.cmake`).
fn check_installed_metadata(h: &Harness, flavour: &str) -> Result {
    let build = h.build_dir(flavour);
    let found = crate::harness::read_to_string(&build.join("include/netcdf_meta.h"))?;
    let installed = crate::harness::read_to_string(&build.join("ncfilters-generated/netcdf_meta.h"))?;
    // `#define NAME VALUE ...`: VALUE.
    let value = |text: &str, name: &str| {
        text.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("#define") && words.next() == Some(name)).then(|| words.next().map(String::from))?
        })
    };
    let hdf5_has_szip = crate::harness::read_to_string(&build.join("CMakeCache.txt"))?
        .lines()
        .any(|line| line.starts_with("_has_H5_HAVE_FILTER_SZIP:INTERNAL=1"));
    let mut wanted = vec!["NC_HAS_ZSTD"];
    if !h.release.is_first() {
        wanted.extend(["NC_HAS_BLOSC", "NC_HAS_BZ2"]);
    }
    if hdf5_has_szip {
        wanted.extend(["NC_HAS_SZIP", "NC_HAS_SZIP_WRITE"]);
    }
    let mut said = Vec::new();
    for name in wanted {
        let (configured, written) = (value(&found, name), value(&installed, name));
        if written.as_deref() != Some("1") {
            fail!(
                "the netcdf_meta.h ncfilters installs has {name} {written:?}, not 1 (configure wrote {configured:?})"
            );
        }
        said.push(format!("{name} 1 (configure: {})", configured.unwrap_or_default()));
    }
    println!("PASS installed netcdf_meta.h of {flavour}: {}", said.join(", "));
    Ok(())
}

/// c_tests/static_program.c linked against the static build's libnetcdf.a with only the
/// libraries the netcdf.pc it installs names in `Libs.private`, run with no plugin path.
fn link_with_pkg_config_libs(h: &Harness, flavour: &str) -> Result {
    let build = h.build_dir(flavour);
    let pc = crate::harness::read_to_string(&build.join("ncfilters-generated/netcdf.pc"))?;
    let Some(private) = pc.lines().find_map(|line| line.strip_prefix("Libs.private:")) else {
        fail!("the netcdf.pc ncfilters installs has no Libs.private");
    };
    let dir = h.work.join("static-program");
    crate::harness::remove_dir_all_if_exists(&dir)?;
    crate::harness::create_dir_all(&dir)?;
    let program = dir.join("static_program");
    let mut compile = cmd("cc", ["-std=c99", "-O1", "-Wall", "-Werror"]);
    compile
        .arg(format!("-I{}", h.repo.join("include").display()))
        .arg(format!("-I{}", build.join("include").display()))
        .arg(format!("-I{}", h.work.join(format!("src-{flavour}/include")).display()))
        .arg(h.repo.join("c_tests/static_program.c"))
        .arg(build.join("libnetcdf.a"))
        .args(crate::setup::hdf5_link_dirs()?)
        .args(private.split_whitespace())
        .arg("-o")
        .arg(&program);
    crate::process::run(&mut compile)?;
    let url = format!("file://{}#mode=nczarr,file", dir.join("zstd.zarr").display());
    let mut program = cmd(&program, [url]);
    program.env_remove("HDF5_PLUGIN_PATH");
    print!("{}", output(&mut program)?);
    Ok(())
}

/// ncfilters' libnetcdf exports every symbol stock's does, and besides them only its documented
/// additions. Also run on each release's test-flag builds (`symbol-provenance`).
pub fn compare_exports(h: &Harness, is_static: bool, stock: &str, ncfilters: &str) -> Result {
    let library = if is_static { "libnetcdf.a" } else { "libnetcdf.so" };
    let stock_symbols = exported_symbols(&h.lib_dir(stock).join(library))?;
    let ncfilters_symbols = exported_symbols(&h.lib_dir(ncfilters).join(library))?;
    let replaced_internals: &[&str] = if h.release.is_first() { &LOADER_INTERNALS_OF_4_9_0 } else { &[] };
    let missing: Vec<&String> = stock_symbols
        .difference(&ncfilters_symbols)
        .filter(|name| !replaced_internals.contains(&name.as_str()))
        .collect();
    let mut allowed: BTreeSet<&str> = OWN_EXPORTS.into_iter().chain(DECLARED_BUT_UNDEFINED).collect();
    if is_static && !h.release.is_first() {
        allowed.extend(nczarr_filter_internals());
    }
    let plugin_path_api_added =
        |name: &str| h.release.is_first() && PLUGIN_PATH_API_PREFIXES.iter().any(|p| name.starts_with(p));
    let undocumented: Vec<&String> = ncfilters_symbols
        .difference(&stock_symbols)
        .filter(|name| !allowed.contains(name.as_str()) && !plugin_path_api_added(name))
        .collect();
    if !missing.is_empty() || !undocumented.is_empty() {
        fail!(
            "{library} of the {ncfilters} build: stock exports {missing:?} and it does not; it exports {undocumented:?}, which stock does not and ncfilters does not document"
        );
    }
    println!(
        "PASS {library}: the {ncfilters} build exports stock's {} symbols (but {} loader internals it replaces) and {} documented additions",
        stock_symbols.len(),
        replaced_internals.len(),
        ncfilters_symbols.difference(&stock_symbols).count()
    );
    Ok(())
}

/// The global symbols a library defines for its users: `nm -D` of a shared library, `nm -g` of an
/// archive (ncfilters' object in it has only its C functions global).
fn exported_symbols(library: &Path) -> Result<BTreeSet<String>> {
    let is_archive = library.extension().is_some_and(|extension| extension == "a");
    let mut nm = cmd("nm", ["--defined-only", if is_archive { "-g" } else { "-D" }]);
    nm.arg(library);
    Ok(output(&mut nm)?
        .lines()
        .filter_map(|line| match line.split_whitespace().collect::<Vec<_>>()[..] {
            [_address, _kind, name] => Some(name.to_string()),
            _ => None,
        })
        .collect())
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
    fn the_nczarr_filter_internals_are_read_from_the_cmake_module() {
        let internals = nczarr_filter_internals();
        assert_eq!(internals.len(), 19);
        assert!(internals.contains(&"NCZ_addfilter") && internals.contains(&"NCZ_plugin_path_set"));
    }

    #[test]
    fn flavours_name_their_configuration() {
        assert_eq!(configuration_of("ncfilters-debian13").map(|c| c.release), Some("4.9.3"));
        assert_eq!(configuration_of("stock-static").map(|c| c.release), Some("4.10.1"));
        assert!(configuration_of("stock-parallel").is_none() && configuration_of("ncfilters").is_none());
    }
}
