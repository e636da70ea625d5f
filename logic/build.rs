// SPDX-License-Identifier: BSD-3-Clause
//! The netcdf-c release ncfilters is built for, and what differs between releases: the one
//! release table. The library reads its cfgs through this crate's `links` metadata
//! (`DEP_NCFILTERS_RELEASE_*`), so no crate keeps a copy; the other crates need none (it reads the
//! few facts it uses as constants of this crate); the release itself is `NETCDF_RELEASE`.

/// The netcdf-c releases ncfilters knows, oldest first: cmake/ncfilters.cmake's and xtask's
/// release table list the same (checked by xtask's tests).
const RELEASES: [&str; 5] = ["4.9.0", "4.9.2", "4.9.3", "4.10.0", "4.10.1"];

/// What differs between releases, as cfgs (`ncf_*`), each with the first release that has it.
const RELEASE_CFGS: [(&str, &str); 10] = [
    // NC_OBJ.id is an int (size_t before).
    ("ncf_obj_id_int", "4.9.3"),
    // NC_TYPE_INFO_T has `int varsized` after format_type_info.
    ("ncf_type_varsized", "4.9.3"),
    // NCZ_VAR_INFO_T has maxstrlen after incompletefilters, and NCZarr stores an NC_STRING chunk as
    // char[maxstrlen] per element.
    ("ncf_zvar_maxstrlen", "4.9.2"),
    // NCZ_VAR_INFO_T has zarray and zattrs after maxstrlen.
    ("ncf_zvar_zarr_objects", "4.9.3"),
    // Filters on variable-length types: no NC_EFILTER; NCZarr suppresses them (FLAG_SUPPRESS).
    ("ncf_vlen_filters", "4.9.3"),
    // netcdf-c's own plugin-path API (dplugins.c, hdf5plugins.c, zplugins.c): HDF5_PLUGIN_PATH split
    // on ':' only, else the build's NETCDF_PLUGIN_SEARCH_PATH; HDF5's search table replaced at start.
    ("ncf_plugin_path_release", "4.9.3"),
    // blosc's set_local stores 0, 0 in cd_values[0..2] (2, 2 before).
    ("ncf_blosc_zero_slots", "4.9.2"),
    // NClist is {content, alloc, length, extendible}.
    ("ncf_nclist_v2", "4.10.0"),
    // NCZ_applyfilterchain reports "Variable '…' has unsupported codec: (…). Not found in …".
    ("ncf_log_unsupported_codec", "4.10.0"),
    // The release's own NCZarr codec JSON is numeric (#3201).
    ("ncf_numeric_codecs", "4.10.0"),
];

/// What only some consecutive releases do, as cfgs, each with its first release and the first
/// release that no longer does it.
const RELEASE_SPAN_CFGS: [(&str, &str, &str); 1] = [
    // blosc fails a chunk it cannot shrink into the chunk's own size (H5Zblosc.c gives c-blosc no
    // more room), and the release's suite requires it (tst_bloscfail.sh). 4.9.0 fails it too, but
    // no 4.9.0 test asks for that, so ncfilters stores such a chunk there (netcdf-c #3075).
    ("ncf_blosc_fails_incompressible", "4.9.2", "4.9.3"),
];

fn release_index(version: &str) -> Option<usize> {
    RELEASES.iter().position(|r| *r == version)
}

fn main() {
    // The CMake option NCFILTERS_CODEC_DIALECT reaches the crate as this (see codec_json.rs).
    println!("cargo:rerun-if-env-changed=NCFILTERS_DEFAULT_CODEC_DIALECT");

    // The release, from cmake/ncfilters.cmake (netcdf-c's own version); 4.9.0 when unset.
    println!("cargo:rerun-if-env-changed=NCFILTERS_NETCDF_VERSION");
    let version = std::env::var("NCFILTERS_NETCDF_VERSION").ok().filter(|v| !v.is_empty());
    let version = version.as_deref().unwrap_or(RELEASES[0]);
    let Some(index) = release_index(version) else {
        panic!("NCFILTERS_NETCDF_VERSION={version}: ncfilters knows netcdf-c {}", RELEASES.join(", "));
    };
    println!("cargo:rustc-env=NCFILTERS_NETCDF_VERSION={version}");
    let known = |release| release_index(release).expect("a known release");
    let spans = RELEASE_CFGS
        .iter()
        .map(|&(cfg, since)| (cfg, known(since), RELEASES.len()))
        .chain(RELEASE_SPAN_CFGS.iter().map(|&(cfg, since, until)| (cfg, known(since), known(until))));
    let mut active = Vec::new();
    let mut all = Vec::new();
    for (cfg, since, until) in spans {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
        if (since..until).contains(&index) {
            println!("cargo:rustc-cfg={cfg}");
            active.push(cfg);
        }
        all.push(cfg);
    }
    // For the library's build.rs (DEP_NCFILTERS_RELEASE_CFGS, _ALL_CFGS).
    println!("cargo:cfgs={}", active.join(","));
    println!("cargo:all_cfgs={}", all.join(","));

    // The build-time plugin search path of a release with its own plugin-path API
    // (NETCDF_PLUGIN_SEARCH_PATH in its config.h), used when HDF5_PLUGIN_PATH is unset.
    println!("cargo:rerun-if-env-changed=NCFILTERS_PLUGIN_SEARCH_PATH");
    let search_path = std::env::var("NCFILTERS_PLUGIN_SEARCH_PATH").unwrap_or_else(|_| default_search_path());
    println!("cargo:rustc-env=NCFILTERS_PLUGIN_SEARCH_PATH={search_path}");

    // What this build is, for the report: cmake/ncfilters.cmake names the source ("git <commit>",
    // or "release" for the tarball of `cargo xtask dist`), as it does in libnetcdf.settings.
    println!("cargo:rerun-if-env-changed=NCFILTERS_BUILD_SOURCE");
    let source = std::env::var("NCFILTERS_BUILD_SOURCE").ok().filter(|s| !s.is_empty());
    let source = source.as_deref().unwrap_or("built by cargo, not by the CMake module");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    println!("cargo:rustc-env=NCFILTERS_BUILD={version} ({source})");
}

/// Without the CMake module, netcdf-c's CMake default for prefix /usr/local: that prefix's
/// `hdf5/lib/plugin`, then `PLATFORMDEFAULT`, joined by `PLATFORMSEP`; on Windows targets
/// `$ENV{ALLUSERSPROFILE}\\hdf5\\lib\\plugin` as the build sees it, backslashes made `/`.
fn default_search_path() -> String {
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "windows") {
        println!("cargo:rerun-if-env-changed=ALLUSERSPROFILE");
        let root = std::env::var("ALLUSERSPROFILE").unwrap_or_default();
        format!("/usr/local/hdf5/lib/plugin;{root}/hdf5/lib/plugin").replace('\\', "/")
    } else {
        "/usr/local/hdf5/lib/plugin:/usr/local/hdf5/lib/plugin".into()
    }
}
