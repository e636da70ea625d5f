// SPDX-License-Identifier: BSD-3-Clause
//! `symbol-provenance`: every function ncfilters exports is exported by the ncfilters build's
//! libnetcdf.so from libncfilters.a's code (per the link map), none of the replaced C is linked,
//! netcdf-c compiled against our headers, its standard plugins are ours, and libnetcdf.so needs
//! no more shared libraries than stock.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::harness::{fail, log, read_to_string, Harness, Result};
use crate::process::{cmd, output, output_ignoring_errors};
use crate::text::files_with_suffix;

/// Prefixes of global functions that are not netcdf-c API: the C shim's own functions, the
/// Rust runtime's and compiler-generated ones, and mangled Rust (legacy and v0 schemes).
const NOT_NETCDF_API: [&str; 5] = ["ncfilters_", "rust_", "_ZN", "_R", "__"];

/// ncfilters' own API (include/ncfilters.h): not netcdf-c's, so not among the replaced symbols
/// (the `ncfilters_` prefix), but libnetcdf.so must export it from libncfilters.a too.
const OWN_API: [&str; 3] = ["ncfilters_report", "ncfilters_describe_spec", "ncfilters_describe_codec"];

/// The CMake module's list of replaced plugin targets, generated from the table of standard
/// filters (logic/src/standard_filter_table.rs).
const PLUGIN_LIST: &str = include_str!("../../cmake/ncfilters_plugins.cmake");
const HEADERS: [&str; 3] = ["netcdf_filter.h", "netcdf_filter_build.h", "netcdf_filter_hdf5_build.h"];
/// Shared libraries ncfilters may add: Rust's unwinder (libgcc_s, for the panic boundary) and
/// the dynamic loader itself, which every process has mapped.
const ALLOWED_EXTRA_NEEDED: [&str; 2] = ["libgcc_s.so.1", "ld-linux-x86-64.so.2"];

/// The netcdf-c functions libncfilters.a exports: global text symbols of the ncfilters crate's
/// own code (archive members `ncfilters.*.rcgu.o`; the bundled zstd, zlib-rs and bzip2 objects
/// export their own C APIs) that are not Rust or shim internals.
pub fn replaced_symbols(archive_listing: &str) -> BTreeSet<String> {
    archive_listing
        .lines()
        .filter_map(parse_archive_symbol)
        .filter(|s| s.kind == "T" && is_ncfilters_rust_object(s.member))
        .map(|s| s.name)
        .filter(|name| !NOT_NETCDF_API.iter().any(|p| name.starts_with(p)))
        .map(String::from)
        .collect()
}

struct ArchiveSymbol<'a> {
    member: &'a str,
    kind: &'a str,
    name: &'a str,
}

/// A line of `nm -A`: `<archive>:<member>:<address> <kind> <name>`.
fn parse_archive_symbol(line: &str) -> Option<ArchiveSymbol<'_>> {
    let mut words = line.split_whitespace();
    let (location, kind, name) = (words.next()?, words.next()?, words.next()?);
    let mut parts = location.rsplitn(3, ':');
    let (_address, member) = (parts.next()?, parts.next()?);
    Some(ArchiveSymbol { member, kind, name })
}

/// rustc names the codegen units of the crate it builds `<crate>.<crate>.<hash>-cgu.<n>.rcgu.o`
/// (dependencies' members start `<crate>-<hash>.`).
fn is_ncfilters_rust_object(member: &str) -> bool {
    member.starts_with("ncfilters.") && member.ends_with(".rcgu.o")
}

/// "start size" of every .text input section the link map attributes to libncfilters.a.
/// Symbols are located by address, since LLVM may merge identical functions under one section.
pub fn ncfilters_text_ranges(link_map: &str) -> Vec<(u64, u64)> {
    let mut section = "";
    let mut ranges = Vec::new();
    for line in link_map.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(first) = words.first().filter(|w| w.starts_with('.')) {
            section = first;
        }
        let n = words.len();
        if n < 3 || !line.contains("libncfilters.a(") || !section.starts_with(".text") {
            continue;
        }
        let (start, size) = (words[n - 3], words[n - 2]);
        if let (Some(start), Some(size)) = (hex(start), hex(size)) {
            if start != 0 {
                ranges.push((start, size));
            }
        }
    }
    ranges
}

fn hex(word: &str) -> Option<u64> {
    u64::from_str_radix(word.strip_prefix("0x")?, 16).ok()
}

fn in_ranges(address: u64, ranges: &[(u64, u64)]) -> bool {
    ranges.iter().any(|&(start, size)| address >= start && address < start + size)
}

/// The defined dynamic symbols of a shared library: name -> (kind, address).
fn dynamic_symbols(library: &Path) -> Result<HashMap<String, (String, u64)>> {
    let mut nm = cmd("nm", ["-D", "--defined-only"]);
    nm.arg(library);
    Ok(output(&mut nm)?
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words[..] {
                [address, kind, name] => {
                    Some((name.to_string(), (kind.to_string(), u64::from_str_radix(address, 16).ok()?)))
                }
                _ => None,
            }
        })
        .collect())
}

fn exported_function(symbols: &HashMap<String, (String, u64)>, name: &str) -> Option<u64> {
    symbols.get(name).filter(|(kind, _)| kind == "T").map(|(_, address)| *address)
}

pub fn test_symbol_provenance(h: &Harness) -> Result {
    let build = h.ncfilters_build();
    let archive = h.cargo_target().join("release/libncfilters.a");
    let map = build.join("ncfilters-libnetcdf.map");
    let lib = h.lib_dir("ncfilters").join("libnetcdf.so");
    log(format!("symbol provenance in {}", lib.display()));
    if !map.is_file() {
        fail!("no link map at {}", map.display());
    }
    let replaced = derive_replaced_symbols(h, &archive)?;
    let lib_syms = dynamic_symbols(&lib)?;
    let ranges = ncfilters_text_ranges(&read_to_string(&map)?);
    check_replaced_symbols_come_from_ncfilters(&replaced, &lib_syms, &ranges)?;
    check_replaced_symbols_come_from_ncfilters(&OWN_API.map(String::from).into(), &lib_syms, &ranges)?;
    check_replaced_c_not_linked(&build, &map, &lib_syms)?;
    for header in HEADERS {
        let users = check_compiled_against_our_header(h, &build, header)?;
        println!(
            "PASS {users} netcdf-c objects (library, tests, plugins) compiled against include/{header}, none against netcdf-c's"
        );
    }
    println!(
        "PASS {} replaced symbols and the {} functions of include/ncfilters.h come from libncfilters.a; dfilter.c, hdf5filter.c, zfilter.c and the C filter-spec parser are not linked",
        replaced.len(),
        OWN_API.len()
    );
    check_plugins_are_ours(&build)?;
    check_needed_libraries(h, &lib)?;
    crate::matrix::compare_exports(h, false, "stock", "ncfilters")
}

/// The netcdf-c functions libncfilters.a defines (nm), which must be exactly those the sources
/// declare for this release ([`declared_exports`]): a rule that missed ncfilters' objects, or
/// took in another's, would otherwise change the list silently.
fn derive_replaced_symbols(h: &Harness, archive: &Path) -> Result<BTreeSet<String>> {
    let mut nm = cmd("nm", ["-A", "--defined-only", "-g"]);
    nm.arg(archive);
    let replaced = replaced_symbols(&output_ignoring_errors(&mut nm)?);
    let declared = declared_exports(h)?;
    let undeclared: Vec<&String> = replaced.difference(&declared).collect();
    let missing: Vec<&String> = declared.difference(&replaced).collect();
    if !undeclared.is_empty() || !missing.is_empty() {
        fail!(
            "nm of {} and the sources disagree: defined but not declared {undeclared:?}; declared but not defined {missing:?}",
            archive.display()
        );
    }
    println!(
        "{} replaced symbols: the netcdf-c functions {} defines, each a #[no_mangle] function of src/ for netcdf-c {}",
        replaced.len(),
        archive.display(),
        h.version()
    );
    Ok(replaced)
}

/// The netcdf-c functions the sources declare for this release: every `#[no_mangle]` function of
/// `src/` (read by ncfilters-source-scan) whose `cfg` conditions the release meets, but ncfilters'
/// own API.
fn declared_exports(h: &Harness) -> Result<BTreeSet<String>> {
    let mut declared = BTreeSet::new();
    for export in ncfilters_source_scan::exports(&h.repo.join("src")) {
        let mut built = true;
        for condition in &export.cfgs {
            match condition.as_str() {
                "ncf_plugin_path_release" => built &= h.release.own_plugin_path_api,
                "test" => built = false,
                other => fail!(
                    "{} ({}): cfg({other}) is a condition symbol-provenance does not know",
                    export.name,
                    export.file.display()
                ),
            }
        }
        if built && !NOT_NETCDF_API.iter().any(|prefix| export.name.starts_with(prefix)) {
            declared.insert(export.name);
        }
    }
    Ok(declared)
}

fn check_replaced_symbols_come_from_ncfilters(
    replaced: &BTreeSet<String>,
    lib_syms: &HashMap<String, (String, u64)>,
    ranges: &[(u64, u64)],
) -> Result {
    for symbol in replaced {
        let Some(address) = exported_function(lib_syms, symbol) else {
            fail!("{symbol} is not exported by libnetcdf.so");
        };
        if !in_ranges(address, ranges) {
            fail!("{symbol} (0x{address:x}) in libnetcdf.so does not come from libncfilters.a (link map)");
        }
    }
    // Negative control: a C function of netcdf-c must not be attributed to libncfilters.a.
    let Some(nc_create) = exported_function(lib_syms, "nc_create") else {
        fail!("nc_create is not exported by libnetcdf.so");
    };
    if in_ranges(nc_create, ranges) {
        fail!("the provenance check attributes nc_create to ncfilters");
    }
    Ok(())
}

/// The objects of the netcdf-c sources the module replaces, as a link map names them.
pub const REPLACED_OBJECTS: [&str; 7] =
    ["dfilter.c.o", "/daux.c.o", "hdf5filter.c.o", "zfilter.c.o", "dplugins.c.o", "hdf5plugins.c.o", "zplugins.c.o"];

fn check_replaced_c_not_linked(build: &Path, map: &Path, lib_syms: &HashMap<String, (String, u64)>) -> Result {
    let link_map = read_to_string(map)?;
    if let Some(object) = REPLACED_OBJECTS.iter().find(|o| link_map.contains(**o)) {
        fail!("a replaced C object ({object}) is linked into libnetcdf.so");
    }
    let Some(trimmed) = files_with_suffix(&build.join("libdispatch"), "daux_nonfilter.c.o").into_iter().next() else {
        fail!("the trimmed daux object is missing");
    };
    let mut nm = cmd("nm", [&trimmed]);
    let symbols = output(&mut nm)?.to_lowercase();
    if symbols.contains("filterspec") || symbols.contains("gettype") || symbols.contains("plugin_path") {
        fail!("filter-spec or plugin-path C code left in {}", trimmed.display());
    }
    if exported_function(lib_syms, "ncaux_class_alignment").is_none() {
        fail!("non-filter ncaux_* functions lost");
    }
    Ok(())
}

/// The compiler's dependency files list headers in the order they were first opened. Ours and
/// netcdf-c's copies share include guards, so the one opened first is the one in effect.
/// Returns how many objects were compiled against ours.
fn check_compiled_against_our_header(h: &Harness, build: &Path, header: &str) -> Result<usize> {
    let ours = format!("{}/include/{header}", h.repo.display());
    let ours_via_cmake = format!("{}/cmake/../include/{header}", h.repo.display());
    let theirs = format!("{}/include/{header}", h.work.join("src-ncfilters").display());
    let mut users = 0;
    let mut shadowed: Vec<PathBuf> = Vec::new();
    for dep_file in files_with_suffix(build, ".o.d") {
        let text = read_to_string(&dep_file)?;
        if text.contains(&ours) || text.contains(&ours_via_cmake) {
            users += 1;
        }
        if opens_theirs_first(&text, &ours, &theirs) {
            shadowed.push(dep_file);
        }
    }
    if users == 0 {
        fail!("no netcdf-c object was compiled against include/{header}");
    }
    if !shadowed.is_empty() {
        for file in shadowed.iter().take(5) {
            println!("{}", file.display());
        }
        fail!("objects compiled with netcdf-c's own {header}");
    }
    Ok(users)
}

/// Whether a dependency file names netcdf-c's copy of a header before ours.
fn opens_theirs_first(dep_file: &str, ours: &str, theirs: &str) -> bool {
    for line in dep_file.lines() {
        let line = line.replace("/cmake/../", "/");
        if line.contains(ours) {
            return false;
        }
        if line.contains(theirs) {
            return true;
        }
    }
    false
}

/// A `set(NAME a b c)` list of the generated CMake plugin list.
fn cmake_list<'a>(cmake: &'a str, name: &str) -> Vec<&'a str> {
    cmake
        .lines()
        .find_map(|line| line.strip_prefix("set(")?.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|rest| rest.strip_suffix(')'))
        .map(|items| items.split_whitespace().collect())
        .unwrap_or_default()
}

/// The stems of the module's plugin libraries (`NCFILTERS_RUST_PLUGIN_STEMS`): `h5<filter>` for
/// each standard filter, then the codec-defaults libraries.
pub fn plugin_stems() -> Vec<&'static str> {
    cmake_list(PLUGIN_LIST, "NCFILTERS_RUST_PLUGIN_STEMS")
}

/// netcdf-c's plugin targets ncfilters replaces (`NCFILTERS_RUST_PLUGINS` of the CMake list),
/// `h5<filter>` for each standard filter, then the codec-defaults libraries, each with its
/// library file on Linux (`lib__nc<stem>.so`, the stems of `NCFILTERS_RUST_PLUGIN_STEMS` in the
/// same order).
fn replaced_plugin_targets(cmake: &str) -> Vec<(&str, String)> {
    let targets = cmake_list(cmake, "NCFILTERS_RUST_PLUGINS");
    let stems = cmake_list(cmake, "NCFILTERS_RUST_PLUGIN_STEMS");
    if targets.len() != stems.len() {
        return Vec::new();
    }
    targets.into_iter().zip(stems.into_iter().map(|stem| format!("lib__nc{stem}.so"))).collect()
}

/// The standard-filter plugins netcdf-c's tests load are ncfilters' Rust ones (see
/// ncfilters.cmake).
fn check_plugins_are_ours(build: &Path) -> Result {
    let targets = replaced_plugin_targets(PLUGIN_LIST);
    if targets.is_empty() {
        fail!("cmake/ncfilters_plugins.cmake lists no plugin targets");
    }
    for (target, file) in &targets {
        let plugin = build.join("plugins").join(file);
        if target.starts_with("h5") {
            let symbols = dynamic_symbols(&plugin)?;
            // ncfilters' plugins alone export the decode limit the NCZarr chain sets.
            if !symbols.contains_key("ncfilters_set_decode_limit") || !file_contains(&plugin, b"rust_panic") {
                fail!("{} is not ncfilters' Rust plugin", plugin.display());
            }
            if !symbols.contains_key("NCZ_get_codec_info") {
                fail!("{} exports no NCZ_get_codec_info", plugin.display());
            }
        } else if !file_contains(&plugin, b"rust_panic") {
            fail!("{} is not ncfilters' Rust codec-defaults library", plugin.display());
        }
    }
    let files: Vec<&str> = targets.iter().map(|(_, file)| file.as_str()).collect();
    println!("PASS {}/plugins: {} are ncfilters' Rust ones", build.display(), files.join(", "));
    Ok(())
}

fn file_contains(path: &Path, needle: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
}

/// Startup cost: ncfilters must not make every netCDF program load more shared libraries
/// (libblosc, say, brings snappy and the C++ runtime).
fn check_needed_libraries(h: &Harness, lib: &Path) -> Result {
    let stock = needed_libraries(&h.stock_lib())?;
    let ours: Vec<String> =
        needed_libraries(lib)?.into_iter().filter(|l| !ALLOWED_EXTRA_NEEDED.contains(&l.as_str())).collect();
    if ours != stock {
        for only_stock in stock.iter().filter(|l| !ours.contains(l)) {
            println!("< {only_stock}");
        }
        for only_ours in ours.iter().filter(|l| !stock.contains(l)) {
            println!("> {only_ours}");
        }
        fail!("libnetcdf.so needs other shared libraries than stock");
    }
    println!("PASS libnetcdf.so needs stock's {} shared libraries (plus libgcc_s for unwinding)", ours.len());
    Ok(())
}

/// The NEEDED entries of a library's dynamic section, sorted.
fn needed_libraries(lib: &Path) -> Result<Vec<String>> {
    let mut readelf = cmd("readelf", ["-d"]);
    readelf.arg(lib);
    let mut needed: Vec<String> = output(&mut readelf)?
        .lines()
        .filter(|line| line.contains("NEEDED"))
        .filter_map(|line| line.split_whitespace().last())
        .map(|word| word.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect();
    needed.sort();
    Ok(needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conditions declared_exports reads: 4.9.3's plugin-path internals carry theirs, the
    /// public API none.
    #[test]
    fn the_sources_mark_the_plugin_path_release_s_exports() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let exports = ncfilters_source_scan::exports(&repo.join("src"));
        let cfgs = |name: &str| exports.iter().find(|e| e.name == name).map(|e| e.cfgs.clone()).unwrap();
        assert_eq!(cfgs("NC4_hdf5_plugin_path_get"), ["ncf_plugin_path_release"]);
        assert_eq!(cfgs("NCZ_load_all_plugins"), ["ncf_plugin_path_release"]);
        assert!(cfgs("nc_def_var_filter").is_empty() && cfgs("nc_plugin_path_set").is_empty());
    }

    #[test]
    fn the_plugin_targets_come_from_the_cmake_list() {
        let list = "# comment\nset(NCFILTERS_RUST_PLUGINS h5zstd nczstdfilters)\n\
                    set(NCFILTERS_RUST_PLUGIN_STEMS h5zstd zstdfilters)\n";
        let expected = [("h5zstd", "lib__nch5zstd.so".to_string()), ("nczstdfilters", "lib__nczstdfilters.so".into())];
        assert_eq!(replaced_plugin_targets(list), expected);
        assert!(replaced_plugin_targets("set(NCFILTERS_RUST_PLUGINS h5zstd)\n").is_empty(), "no stems: no pairs");
        let targets = replaced_plugin_targets(PLUGIN_LIST);
        assert!(targets.contains(&("h5deflate", "lib__nch5deflate.so".into())), "{targets:?}");
        assert!(targets.contains(&("nczhdf5filters", "lib__nczhdf5filters.so".into())), "{targets:?}");
    }

    #[test]
    fn only_ncfilters_own_exports_are_replaced_symbols() {
        let listing = "\
lib.a:ncfilters.ncfilters.abc-cgu.01.rcgu.o:0000000000000000 T nc_def_var_filter
lib.a:ncfilters.ncfilters.abc-cgu.01.rcgu.o:0000000000000010 T _ZN9ncfilters3fooE
lib.a:ncfilters.ncfilters.abc-cgu.01.rcgu.o:0000000000000020 T rust_eh_personality
lib.a:ncfilters.ncfilters.abc-cgu.01.rcgu.o:0000000000000030 R NCZ_constant
lib.a:ncfilters.ncfilters.abc-cgu.02.rcgu.o:0000000000000000 T NCZ_applyfilterchain
lib.a:3a91-shim.o:0000000000000000 T ncfilters_NC_check_id
lib.a:7c99-zstd_compress.o:0000000000000000 T ZSTD_compress
lib.a:zlib_rs-123.zlib_rs.456-cgu.0.rcgu.o:0000000000000000 T deflate
";
        let names: Vec<String> = replaced_symbols(listing).into_iter().collect();
        assert_eq!(names, ["NCZ_applyfilterchain", "nc_def_var_filter"]);
    }

    #[test]
    fn link_map_ranges_follow_text_sections_of_the_archive() {
        let map = "\
 .text.nc_def_var_filter
                0x0000000000051000       0x40 /repo/target/release/libncfilters.a(ncfilters.ncfilters.abc-cgu.01.rcgu.o)
 .text          0x0000000000060000      0x100 CMakeFiles/netcdf.dir/dfile.c.o
 .text.unused   0x0000000000000000       0x10 /repo/target/release/libncfilters.a(x.o)
 .rodata.x      0x0000000000070000       0x10 /repo/target/release/libncfilters.a(x.o)
";
        let ranges = ncfilters_text_ranges(map);
        assert_eq!(ranges, [(0x51000, 0x40)]);
        assert!(in_ranges(0x51020, &ranges));
        assert!(!in_ranges(0x51040, &ranges));
    }

    #[test]
    fn netcdf_copy_of_a_header_first_is_shadowing() {
        let ours = "/repo/include/netcdf_filter.h";
        let theirs = "/w/src-ncfilters/include/netcdf_filter.h";
        assert!(!opens_theirs_first(
            "x.o: \\\n /repo/cmake/../include/netcdf_filter.h \\\n /w/src-ncfilters/include/netcdf_filter.h",
            ours,
            theirs
        ));
        assert!(opens_theirs_first("x.o: \\\n /w/src-ncfilters/include/netcdf_filter.h", ours, theirs));
    }
}
