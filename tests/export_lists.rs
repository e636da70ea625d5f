// SPDX-License-Identifier: BSD-3-Clause
//! Lists of exports kept outside Rust, held to the exports the sources declare (read by
//! `ncfilters-source-scan`, as the NULL-policy test reads them).
use std::collections::BTreeSet;
use std::path::Path;

/// What netcdf-c's zdispatch.c defines as stubs when NCZarr's filters are off, and so exports in
/// every configuration: ncfilters exports these names in their place.
const ZDISPATCH_STUBS: [&str; 4] =
    ["NCZ_def_var_filter", "NCZ_inq_var_filter_ids", "NCZ_inq_var_filter_info", "NCZ_inq_filter_avail"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The names of a `set(NAME a b …)` of a CMake file.
fn cmake_list(file: &Path, name: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let start = text.find(&format!("set({name}\n")).unwrap_or_else(|| panic!("no set({name} in {}", file.display()));
    let body = &text[start + name.len() + 5..];
    body[..body.find(')').unwrap()].split_whitespace().map(String::from).collect()
}

/// cmake/ncfilters.cmake hides the NCZarr filter internals from libnetcdf's dynamic symbols
/// where stock exports none of them: its list is every `NCZ_` export of the library but the names
/// of zdispatch.c's stubs.
#[test]
fn the_module_s_nczarr_internals_are_the_library_s_nczarr_exports_but_the_stubs() {
    let exported: BTreeSet<String> = ncfilters_source_scan::exports(&root().join("src"))
        .into_iter()
        .map(|export| export.name)
        .filter(|name| name.starts_with("NCZ_") && !ZDISPATCH_STUBS.contains(&name.as_str()))
        .collect();
    let listed = cmake_list(&root().join("cmake/ncfilters.cmake"), "NCFILTERS_NCZARR_FILTER_INTERNALS");
    assert_eq!(listed, exported, "cmake/ncfilters.cmake's NCFILTERS_NCZARR_FILTER_INTERNALS");
    assert!(listed.len() >= 19, "{} internals", listed.len());
}
