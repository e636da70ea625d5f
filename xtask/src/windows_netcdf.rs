// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c ([`WINDOWS_RELEASES`](crate::windows_suite::WINDOWS_RELEASES)) cross-built for Windows with MinGW-w64, as MSYS2 builds it,
//! stock and with the module (`cargo xtask wine`; in CI a slow check of each release, `wine <version>`), on HDF5 1.14.6 cross-built the same
//! way, with szip on libaec as MSYS2's is, and with the same libblosc and libaec DLLs
//! (`windows_libraries`), so that netcdf-c builds its blosc and szip filters and their tests. It checks that:
//! - the module configures a MinGW toolchain file: its layout check runs under Wine;
//! - netcdf.dll exports exactly stock's functions, and ncfilters.h's;
//! - under Wine, with no plugin path, the module's ncgen writes zstd and bzip2 to a netCDF-4
//!   file and its ncdump reads them back.
//!
//! - netcdf-c's own suite under Wine fails no test on the module's build that stock's passes
//!   (`windows_suite`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::harness::{self, create_dir_all, fail, log, read_to_string, write_file, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};
use crate::text::print_tail;
use crate::windows::{wine_env, GNU};
use crate::windows_suite::WindowsRelease;

/// What the builds need besides the compilers and Wine: MinGW-w64's C++ compiler (CMake's
/// projects enable C++) and zlib.
const BUILD_PACKAGES: [&str; 2] = ["g++-mingw-w64-x86-64", "libz-mingw-w64-dev"];

/// HDF5's options besides [`crate::hdf5::COMMON_OPTIONS`] (later ones win): szip on the libaec
/// DLL of `windows_libraries` (its own CMake package), no tools.
const HDF5_OPTIONS: [&str; 4] = [
    "-DHDF5_ENABLE_Z_LIB_SUPPORT=ON",
    "-DHDF5_ENABLE_SZIP_SUPPORT=ON",
    "-DHDF5_ENABLE_SZIP_ENCODING=ON",
    "-DHDF5_BUILD_TOOLS=OFF",
];

/// What HDF5's configuration header says when its szip filter is built in.
const HDF5_HAS_SZIP: &str = "#define H5_HAVE_FILTER_SZIP 1";

/// The targets each build makes: the library and the programs the check runs.
const TARGETS: [&str; 3] = ["netcdf", "ncgen", "ncdump"];

/// The CDL the module's ncgen writes under Wine: zstd then bzip2, by id.
const FILTERED_CDL: &str = "netcdf filtered {\n\
    dimensions: x = 6 ;\n\
    variables: int v(x) ; v:_Storage = \"chunked\" ; v:_ChunkSizes = 6 ; v:_Filter = \"32015,3|307,9\" ;\n\
    data: v = 1, 2, 3, 4, 5, 6 ;\n\
    }\n";

/// `cargo xtask wine`: the shipped crates' tests under Wine, then each of `releases` built for
/// Windows (in CI two slow checks: `SlowCheck::WineTests` and `SlowCheck::WineNetcdf`).
pub fn test_wine(h: &Harness, packages: &[String], releases: &[&'static WindowsRelease]) -> Result {
    test_shipped_crates(h, packages)?;
    releases.iter().try_for_each(|release| test_netcdf(h, release))
}

/// The shipped crates' tests built for Windows and run under Wine.
pub fn test_shipped_crates(h: &Harness, packages: &[String]) -> Result {
    let _server = start_wine(h)?;
    crate::windows::test_under_wine(h, packages)
}

/// `release` built for Windows, stock and with the module, and its suite under Wine on both.
pub fn test_netcdf(h: &Harness, release: &WindowsRelease) -> Result {
    let release = crate::release::find(release.version).map_err(harness::Failure)?;
    let _server = start_wine(h)?;
    test_windows_netcdf(&h.for_release(release))
}

/// MinGW-w64 and Wine installed, Wine's prefix made, and one wineserver until the result is dropped.
fn start_wine(h: &Harness) -> Result<crate::windows::WineServer> {
    crate::windows::prepare(&[crate::windows::COMPILER_PACKAGES.as_slice(), &crate::windows::WINE_PACKAGES].concat())?;
    crate::windows::wine_prefix_with_prng(h)?;
    crate::windows::WineServer::start(h)
}

/// `h`'s release for Windows: built in `target/windows/netcdf/<version>`, on the HDF5 and with the
/// toolchain files in `target/windows/netcdf`.
fn test_windows_netcdf(h: &Harness) -> Result {
    let started = Instant::now();
    crate::windows::prepare(
        &[crate::windows::COMPILER_PACKAGES.as_slice(), &crate::windows::WINE_PACKAGES, &BUILD_PACKAGES].concat(),
    )?;
    crate::windows::wine_prefix_with_prng(h)?;
    let root = crate::windows::target_dir(h).join("netcdf");
    create_dir_all(&root)?;
    let libraries = native_libraries(h)?;
    let hdf5 = hdf5_for_windows(h, &root, &libraries)?;
    let toolchain = root.join("mingw-w64.cmake");
    write_file(&toolchain, &crate::windows_libraries::toolchain_file(GNU, &[&hdf5, &libraries], Some("wine")))?;
    // Where Windows' loader finds HDF5's, libaec's and libblosc's DLLs: on PATH, as MSYS2 has them.
    let dlls = [hdf5.join("bin"), libraries.join("bin")];
    let prerequisites =
        Prerequisites { toolchain: &toolchain, hdf5: &hdf5, dlls: &dlls, case_shim: &case_shim(&root)? };
    let tree = root.join(h.version());
    create_dir_all(&tree)?;
    crate::setup::fetch_netcdf_source(h)?;
    let source = h.work.join(format!("netcdf-c-{}", h.version()));
    let mut exports = Vec::new();
    for flavour in ["stock", "ncfilters"] {
        let build = tree.join(format!("build-{flavour}"));
        build_netcdf(h, flavour, &source, &build, &prerequisites)?;
        exports.push(dll_exports(&build.join("libnetcdf.dll"))?);
    }
    let additions = crate::library_exports::header_functions(h)?;
    crate::library_exports::check_exports("netcdf.dll", &exports[0], &exports[1], &additions)?;
    write_and_read_filters(h, &tree, &dlls)?;
    interchange_with_linux(h, &tree, &dlls, &linux_ncfilters_build(h)?)?;
    for flavour in ["stock", "ncfilters"] {
        let build = tree.join(format!("build-{flavour}"));
        crate::windows_suite::build_the_suite(h, &build, &dlls, &build.with_extension("log"))?;
    }
    crate::windows_suite::run_on_both(h, &root, &tree, &dlls)?;
    println!(
        "netcdf-c {} for Windows (MinGW-w64) under Wine: passed in {} s",
        h.version(),
        started.elapsed().as_secs()
    );
    Ok(())
}

/// The prefix of the libblosc and libaec DLLs (`windows_libraries`), built once.
fn native_libraries(h: &Harness) -> Result<PathBuf> {
    let bin = crate::windows_libraries::native_dlls(h, &crate::windows::target_dir(h).join("native"), GNU)?;
    Ok(bin.parent().unwrap_or(&bin).to_path_buf())
}

/// HDF5 1.14.6 (Debian's source) cross-built into `root` with szip on `libraries`' libaec, once:
/// its prefix.
fn hdf5_for_windows(h: &Harness, root: &Path, libraries: &Path) -> Result<PathBuf> {
    let prefix = root.join("hdf5");
    let configuration = prefix.join("include/H5pubconf.h");
    let has_szip = || std::fs::read_to_string(&configuration).is_ok_and(|text| text.contains(HDF5_HAS_SZIP));
    if prefix.join("bin/libhdf5.dll").is_file() && has_szip() {
        return Ok(prefix);
    }
    let source = crate::hdf5::unpacked_source(h, &crate::hdf5::HDF5_1_14_6)?;
    let toolchain = root.join("hdf5-mingw-w64.cmake");
    write_file(&toolchain, &crate::windows_libraries::toolchain_file(GNU, &[libraries], Some("wine")))?;
    let build = root.join("build-hdf5");
    harness::remove_dir_all_if_exists(&build)?;
    let options: Vec<&str> = crate::hdf5::COMMON_OPTIONS.iter().chain(&HDF5_OPTIONS).copied().collect();
    let cmake = crate::cmake_install::CMakeInstall {
        platform: "Windows (MinGW-w64)",
        cmake: Path::new("cmake"),
        toolchain: &toolchain,
        prefix: &prefix,
        environment: &|command| wine_env(h, command, &[libraries.join("bin")]),
    };
    cmake.install(h, &source, &build, &options)?;
    if !has_szip() {
        fail!("HDF5 for Windows was built without szip ({} lacks `{HDF5_HAS_SZIP}`)", configuration.display());
    }
    Ok(prefix)
}

/// An include folder with `Windows.h`: netcdf-c's tst_diskless6.c names it so, which Windows'
/// file systems find and MinGW-w64's `windows.h` on Linux does not.
fn case_shim(root: &Path) -> Result<PathBuf> {
    let dir = root.join("case-shim");
    create_dir_all(&dir)?;
    write_file(
        &dir.join("Windows.h"),
        "/* Written by cargo xtask: Windows.h as MinGW-w64 names it. */\n#include <windows.h>\n",
    )?;
    Ok(dir)
}

/// What each netcdf-c build for Windows is configured with.
struct Prerequisites<'a> {
    /// The MinGW-w64 toolchain file, Wine its emulator.
    toolchain: &'a Path,
    /// HDF5's prefix.
    hdf5: &'a Path,
    /// The folders of the DLLs its programs load (HDF5's, libaec's and libblosc's).
    dlls: &'a [PathBuf],
    /// [`case_shim`]'s folder.
    case_shim: &'a Path,
}

fn build_netcdf(h: &Harness, flavour: &str, source: &Path, build: &Path, prerequisites: &Prerequisites) -> Result {
    let Prerequisites { toolchain, hdf5, dlls, case_shim } = prerequisites;
    let log_file = build.with_extension("log");
    if !build.join("CMakeCache.txt").is_file() {
        log(format!("configure netcdf-c {} for Windows ({flavour})", h.version()));
        let mut configure = cmd("cmake", ["-S"]);
        configure
            .arg(source)
            .arg("-B")
            .arg(build)
            .arg(format!("-DCMAKE_TOOLCHAIN_FILE={}", toolchain.display()))
            .arg(format!("-DHDF5_ROOT={}", hdf5.display()))
            .arg(format!("-DCMAKE_C_FLAGS=-idirafter {}", case_shim.display()))
            .args(h.release.flags);
        if flavour != "stock" {
            configure
                .args(crate::netcdf::ncfilters_module_flags(h, &crate::windows::target_dir(h).join("netcdf/cargo")));
        }
        if !succeeds_into_log(wine_env(h, &mut configure, dlls), &log_file, false)? {
            print_tail(&log_file, 40);
            fail!("configure of netcdf-c for Windows ({flavour}) failed (log: {})", log_file.display());
        }
        if flavour != "stock" && !read_to_string(&log_file)?.contains("sizes and offsets of netcdf-c's structs match") {
            fail!("the module's layout check did not run in {}", log_file.display());
        }
    }
    log(format!("build netcdf-c {} for Windows ({flavour}): {}", h.version(), TARGETS.join(" ")));
    let started = Instant::now();
    let mut make = cmd("cmake", ["--build"]);
    make.arg(build).arg(format!("-j{}", h.jobs)).arg("--target").args(TARGETS);
    if !succeeds_into_log(wine_env(h, &mut make, dlls), &log_file, true)? {
        crate::text::print_matching(&log_file, &["error", "undefined"], 40);
        fail!("build of netcdf-c for Windows ({flavour}) failed (log: {})", log_file.display());
    }
    println!("built netcdf-c {} for Windows ({flavour}) in {} s", h.version(), started.elapsed().as_secs());
    Ok(())
}

/// The names a DLL exports, from its export table (objdump -p).
fn dll_exports(dll: &Path) -> Result<BTreeSet<String>> {
    let out = cmd(format!("{GNU}-objdump"), ["-p"])
        .arg(dll)
        .output()
        .map_err(|e| harness::Failure(format!("cannot run {GNU}-objdump: {e}")))?;
    if !out.status.success() {
        fail!("{GNU}-objdump -p {} failed ({})", dll.display(), out.status);
    }
    Ok(export_names(&String::from_utf8_lossy(&out.stdout)))
}

/// The names of objdump's "[Ordinal/Name Pointer] Table", one `[ n] name` line each.
fn export_names(objdump: &str) -> BTreeSet<String> {
    objdump
        .lines()
        .skip_while(|line| !line.contains("[Ordinal/Name Pointer] Table"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.rsplit(' ').next().map(str::to_string))
        .collect()
}

/// Under Wine, with no plugin path: the module's ncgen writes [`FILTERED_CDL`] to a netCDF-4
/// file and its ncdump shows the filters and the values.
fn write_and_read_filters(h: &Harness, root: &Path, libraries: &[PathBuf]) -> Result {
    let build = root.join("build-ncfilters");
    let work = root.join("filters");
    create_dir_all(&work)?;
    write_file(&work.join("filtered.cdl"), FILTERED_CDL)?;
    let dlls: Vec<PathBuf> = libraries.iter().cloned().chain([build.clone()]).collect();
    let mut ncgen = cmd("wine", [build.join("ncgen/ncgen.exe").as_os_str()]);
    ncgen.args(["-4", "-o", "filtered.nc", "filtered.cdl"]).current_dir(&work);
    run(wine_env(h, &mut ncgen, &dlls))?;
    let text = windows_ncdump(h, &build, &dlls, &work, &["-s", "filtered.nc"])?;
    for expected in ["v:_Filter = \"32015,3|307,9\" ;", "v = 1, 2, 3, 4, 5, 6 ;"] {
        if !text.contains(expected) {
            fail!("ncdump -s under Wine does not show `{expected}`:\n{text}");
        }
    }
    println!("under Wine, no plugin path: ncgen wrote zstd and bzip2, ncdump read them back");
    Ok(())
}

/// The Windows build's ncdump under Wine with `dlls` on its DLL path, run in `dir`: its output,
/// line ends as on Linux.
fn windows_ncdump(h: &Harness, build: &Path, dlls: &[PathBuf], dir: &Path, arguments: &[&str]) -> Result<String> {
    let mut ncdump = cmd("wine", [build.join("ncdump/ncdump.exe").as_os_str()]);
    ncdump.args(arguments).current_dir(dir);
    let out = wine_env(h, &mut ncdump, dlls)
        .output()
        .map_err(|e| harness::Failure(format!("cannot run ncdump under Wine: {e}")))?;
    if !out.status.success() {
        fail!("ncdump {arguments:?} under Wine failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
}

/// The CDL both builds write, one variable per filter of the interchange.
const INTERCHANGE_CDL: &str = "netcdf interchange {\n\
    dimensions: x = 1000 ;\n\
    variables:\n\
    float zstd(x) ; zstd:_Storage = \"chunked\" ; zstd:_ChunkSizes = 250 ; zstd:_Filter = \"32015,3\" ;\n\
    double bzip2(x) ; bzip2:_Storage = \"chunked\" ; bzip2:_ChunkSizes = 500 ; bzip2:_Filter = \"307,9\" ;\n\
    int blosc(x) ; blosc:_Storage = \"chunked\" ; blosc:_ChunkSizes = 1000 ; blosc:_Filter = \"32001,0,0,0,0,5,1,1\" ;\n\
    }\n";

/// The values of [`INTERCHANGE_CDL`]'s variables, appended as its data section.
fn interchange_data() -> String {
    let values = |f: &dyn Fn(usize) -> String| (0..1000).map(f).collect::<Vec<_>>().join(", ");
    format!(
        "data:\n zstd = {} ;\n bzip2 = {} ;\n blosc = {} ;\n}}\n",
        values(&|i| format!("{}.25", i % 97)),
        values(&|i| format!("{}.5", i * 7 % 1013)),
        values(&|i| format!("{}", i * i % 65_537)),
    )
}

/// Files and NCZarr stores with zstd, bzip2 and blosc, written by the Windows build under Wine
/// and by the Linux build of `linux` (both with no plugin path), each read by the other: the
/// same `ncdump` text, the values unchanged.
fn interchange_with_linux(h: &Harness, root: &Path, libraries: &[PathBuf], linux: &Path) -> Result {
    let build = root.join("build-ncfilters");
    let dlls: Vec<PathBuf> = libraries.iter().cloned().chain([build.clone()]).collect();
    let work = root.join("interchange");
    harness::remove_dir_all_if_exists(&work)?;
    let cdl = INTERCHANGE_CDL.trim_end_matches("}\n").to_string() + &interchange_data();
    let targets = ["interchange.nc", "file://interchange.zarr#mode=nczarr,file"];
    for side in ["windows", "linux"] {
        let dir = work.join(side);
        create_dir_all(&dir)?;
        write_file(&dir.join("interchange.cdl"), &cdl)?;
        for target in targets {
            if side == "windows" {
                let mut ncgen = cmd("wine", [build.join("ncgen/ncgen.exe").as_os_str()]);
                ncgen.args(["-4", "-o", target, "interchange.cdl"]).current_dir(&dir);
                run(wine_env(h, &mut ncgen, &dlls))?;
            } else {
                let mut ncgen = cmd(linux.join("ncgen/ncgen"), ["-4", "-o", target, "interchange.cdl"]);
                run(ncgen.current_dir(&dir).env_remove("HDF5_PLUGIN_PATH"))?;
            }
        }
    }
    let written = data_lines(&cdl);
    for side in ["windows", "linux"] {
        let dir = work.join(side);
        for target in targets {
            let on_windows = windows_ncdump(h, &build, &dlls, &dir, &[target])?;
            let mut ncdump = cmd(linux.join("ncdump/ncdump"), [target]);
            let on_linux = crate::process::output(ncdump.current_dir(&dir).env_remove("HDF5_PLUGIN_PATH"))?;
            let body = |text: &str| text.lines().skip(1).map(|line| format!("{line}\n")).collect::<String>();
            if body(&on_windows) != body(&on_linux) {
                fail!("{side}'s {target}: ncdump on Windows and on Linux differ:\n{on_windows}\n---\n{on_linux}");
            }
            let read = data_lines(&on_linux);
            for entry in &written {
                let name = &entry.0;
                if !read.contains(entry) {
                    fail!("{side}'s {target}: the values of {name} differ from those written");
                }
            }
            let filters = windows_ncdump(h, &build, &dlls, &dir, &["-hs", target])?;
            for id in ["32015,3", "307,9", "32001,"] {
                if !filters.contains(&format!(":_Filter = \"{id}")) {
                    fail!("{side}'s {target} has no filter {id}:\n{filters}");
                }
            }
        }
    }
    println!(
        "netCDF-4 files and NCZarr stores with zstd, bzip2 and blosc, written on Windows (Wine) and on Linux ({}), \
         read by the other with no plugin path: the same values",
        linux.display()
    );
    Ok(())
}

/// A Linux build of netcdf-c with the module: one this run (or an earlier one) made of any release
/// (CI's run builds one beside the check), else `h`'s release's, built now.
fn linux_ncfilters_build(h: &Harness) -> Result<PathBuf> {
    let built = crate::release::RELEASES.iter().map(|release| h.for_release(release).ncfilters_build());
    if let Some(build) = built.into_iter().find(|build| build.join("ncdump/ncdump").is_file()) {
        return Ok(build);
    }
    crate::netcdf::build_netcdf(h, "ncfilters")?;
    Ok(h.ncfilters_build())
}

/// `(variable, values)` of an ncdump's data section, its values with whitespace removed.
fn data_lines(cdl: &str) -> Vec<(String, String)> {
    let data = cdl.split_once("data:").map_or("", |(_, data)| data);
    data.split(';')
        .filter_map(|entry| {
            let (name, values) = entry.split_once('=')?;
            Some((name.trim().to_string(), values.split_whitespace().collect::<String>()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_names_reads_objdump_s_name_table() {
        let objdump =
            "The Export Tables\n\n[Ordinal/Name Pointer] Table\n\t[   0] NC4_show_metadata\n\t[   1] nc_open\n\n\
                       The Import Tables\n\t[   2] not_an_export\n";
        assert_eq!(export_names(objdump), BTreeSet::from(["NC4_show_metadata".to_string(), "nc_open".to_string()]));
    }

    #[test]
    fn data_lines_are_each_variable_s_values_without_whitespace() {
        let cdl = "netcdf x {\nvariables:\n int a(x) ;\ndata:\n\n a = 1, 2,\n    3 ;\n\n b = 0.5, 1 ;\n}\n";
        assert_eq!(data_lines(cdl), [("a".to_string(), "1,2,3".to_string()), ("b".to_string(), "0.5,1".to_string())]);
        let data = interchange_data();
        assert_eq!(data_lines(&data).len(), 3);
        assert!(data_lines(&data).iter().all(|(_, values)| values.split(',').count() == 1000));
    }

    /// cmake/ncfilters_dll_exports.cmake on an archive of this host's objects: the module-definition
    /// file has the declared functions the archive defines, and the linked copy loses its `.dwo`
    /// members with an `ar` (MinGW) and is the archive itself without one (MSVC).
    #[test]
    fn the_dll_exports_script_lists_defined_declarations_and_drops_split_dwarf() {
        let dir = std::env::temp_dir().join(format!("ncfilters-dll-exports-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let compile = |source: &str, object: &str| {
            std::fs::write(dir.join("x.c"), source).unwrap();
            let status = std::process::Command::new("cc").current_dir(&dir).args(["-c", "x.c", "-o", object]).status();
            assert!(status.unwrap().success(), "cc {object}");
        };
        compile("int ncfilters_report(void) { return 0; }\nint undeclared(void) { return 1; }\n", "a.o");
        compile("int in_split_dwarf(void) { return 2; }\n", "b.dwo");
        let archive = |name: &str| {
            let status = std::process::Command::new("ar").current_dir(&dir).args(["rc", name, "a.o", "b.dwo"]).status();
            assert!(status.unwrap().success());
        };
        archive("libx.a");
        std::fs::write(dir.join("declared.txt"), "ncfilters_report\nnot_defined\n").unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/ncfilters_dll_exports.cmake");
        let members = |archive: &str| {
            let out = std::process::Command::new("ar").current_dir(&dir).args(["t", archive]).output().unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        for ar in ["ar", ""] {
            let _ = std::fs::remove_file(dir.join("linked.a"));
            let out = std::process::Command::new("cmake")
                .current_dir(&dir)
                .args(["-DNM=nm", &format!("-DAR={ar}"), "-DSTATICLIB=libx.a", "-DLINKED=linked.a"])
                .args(["-DDECLARED=declared.txt", "-DDEF=x.def", "-P"])
                .arg(&script)
                .output()
                .unwrap();
            assert!(out.status.success(), "AR={ar:?}: {}", String::from_utf8_lossy(&out.stderr));
            let def = read_to_string(&dir.join("x.def")).unwrap();
            assert!(def.contains("EXPORTS\n  ncfilters_report\n"), "{def}");
            assert!(!def.contains("undeclared") && !def.contains("not_defined"), "{def}");
            let kept = members("linked.a");
            assert!(kept.contains("a.o"), "{kept}");
            assert_eq!(kept.contains("b.dwo"), ar.is_empty(), "AR={ar:?}: {kept}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
