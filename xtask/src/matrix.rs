// SPDX-License-Identifier: BSD-3-Clause
//! `matrix`: netcdf-c configured as distributions build it, not as the other steps' test flags
//! do. Each configuration is built twice, stock and with ncfilters; netcdf-c's suite must pass on
//! ncfilters every test it passes on stock (and the configuration's known stock failures), and
//! libnetcdf must export what stock exports in that configuration, plus only ncfilters'
//! documented additions (docs/compatibility.md).

use std::collections::BTreeSet;
use std::path::Path;

use crate::configurations::{Configuration, CONFIGURATIONS};
use crate::harness::{fail, Harness, Result};
use crate::hdf5::Hdf5Release;
use crate::netcdf::{build_netcdf, run_suite_pair};
use crate::process::{cmd, output};
use crate::release::BuildSystem;

/// ncfilters' own functions (include/ncfilters.h) and the hooks its compiled copies of zsync.c
/// and zxcache.c call: exported in every configuration.
pub const OWN_EXPORTS: [&str; 5] = [
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
pub const DECLARED_BUT_UNDEFINED: [&str; 1] = ["NCZ_codec_freelist"];

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
    let mut wanted = h.release.filter_meta_macros.to_vec();
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
    let replaced_internals: &[&str] = if h.release.own_plugin_path_api { &[] } else { &LOADER_INTERNALS_OF_4_9_0 };
    let missing: Vec<&String> = stock_symbols
        .difference(&ncfilters_symbols)
        .filter(|name| !replaced_internals.contains(&name.as_str()))
        .collect();
    let mut allowed: BTreeSet<&str> = OWN_EXPORTS.into_iter().chain(DECLARED_BUT_UNDEFINED).collect();
    // 4.9.3 on compile zfilter.c only with NCZarr filters on (4.9.0 and 4.9.2 always).
    if is_static && h.release.build_system == BuildSystem::NetcdfPrefixed {
        allowed.extend(nczarr_filter_internals());
    }
    let plugin_path_api_added =
        |name: &str| !h.release.own_plugin_path_api && PLUGIN_PATH_API_PREFIXES.iter().any(|p| name.starts_with(p));
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
    fn the_nczarr_filter_internals_are_read_from_the_cmake_module() {
        let internals = nczarr_filter_internals();
        assert_eq!(internals.len(), 19);
        assert!(internals.contains(&"NCZ_addfilter") && internals.contains(&"NCZ_plugin_path_set"));
    }
}
