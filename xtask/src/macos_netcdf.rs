// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c 4.10.1 cross-built for both Macs, stock and with the module, on zlib, libzstd and HDF5 2.2.0
//! built the same way (the second half of `cargo xtask macos`): CMake with a toolchain file. The x86_64 Mac's
//! compilers are named as conda-forge's (`x86_64-apple-darwin13.4.0-clang`); the arm64 Mac's are
//! `clang` told its target by `CMAKE_C_COMPILER_TARGET`, as CMake's documentation cross-compiles
//! with clang. Both are Debian's clang 19 with its `ld64.lld` (Zig's own linker ignores ld64's
//! export lists, which a shared libnetcdf needs), on the SDK that [`crate::macos::clang_sdk`]
//! makes of Zig's macOS stubs. Neither netcdf-c build gets `SDKROOT`: the module hands cargo
//! `CMAKE_OSX_SYSROOT`.
//!
//! Nothing here runs a Mach-O program; LLVM's Mach-O tools check, for each Mac:
//! - libnetcdf.dylib exports stock's symbols and ncfilters.h's functions, nothing else;
//! - its link map holds none of the netcdf-c objects the module replaces;
//! - every symbol it leaves undefined is one libSystem, libhdf5, libhdf5_hl, libz or libzstd exports;
//! - it and each plugin are found through the rpath (`@rpath/` install names) and run on the
//!   deployment target;
//! - each plugin is a Mach-O dylib whose undefined symbols libSystem, HDF5, zlib, libzstd or
//!   libnetcdf export.
//!
//! Nothing is preset for the cross build: HDF5 2.2 takes its cross-compiling defaults for what it
//! would run (its long double conversion checks; `_Float16` off), netcdf-c runs nothing at
//! configure time, and the module compiles its layout check as static assertions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::harness::{self, create_dir_all, fail, log, read_to_string, write_file, Harness, Result};
use crate::macos::ClangSdk;
use crate::process::{cmd, output, run, succeeds_into_log, with_first_on_path};
use crate::text::print_tail;

/// The netcdf-c release built.
pub const RELEASE: &str = "4.10.1";

/// netcdf-c's options besides the release's (later ones win): the library, its utilities and
/// the plugins; no tests, which nothing here could run.
const NETCDF_OPTIONS: [&str; 4] = [
    "-DNETCDF_ENABLE_TESTS=OFF",
    "-DNETCDF_ENABLE_UNIT_TESTS=OFF",
    "-DNETCDF_ENABLE_EXAMPLES=OFF",
    "-DNETCDF_ENABLE_FILTER_TESTING=OFF",
];

/// HDF5's options besides [`crate::hdf5::COMMON_OPTIONS`] (later ones win): zlib, no szip (no
/// libaec is built for the Mac here), no tools.
const HDF5_OPTIONS: [&str; 3] =
    ["-DHDF5_ENABLE_ZLIB_SUPPORT=ON", "-DHDF5_ENABLE_SZIP_SUPPORT=OFF", "-DHDF5_BUILD_TOOLS=OFF"];

/// A C library built for the Mac from the sources a crate carries (cargo checks its checksum), at
/// the version Cargo.lock has, so the Mac's libzstd is the one ncfilters bundles; with no build
/// system: `lib<name>.<major>.dylib`, its install name `@rpath/` that file, as conda-forge's.
struct CLibrary {
    crate_name: &'static str,
    /// The library's folder in the crate, and the folders in it whose `.c` files are compiled.
    root: &'static str,
    folders: &'static [&'static str],
    /// The headers installed, in the library's folder.
    headers: &'static [&'static str],
    name: &'static str,
    major: &'static str,
    defines: &'static [&'static str],
}

/// zlib, which HDF5 and netcdf-c link, and libzstd, for the zstd plugins that stock builds only
/// with it (without assembly: the Huffman decoder's is for ELF and Mach-O alike, but not needed).
const C_LIBRARIES: [CLibrary; 2] = [
    CLibrary {
        crate_name: "libz-sys",
        root: "src/zlib",
        folders: &["."],
        headers: &["zlib.h", "zconf.h"],
        name: "z",
        major: "1",
        defines: &["-DHAVE_UNISTD_H", "-DHAVE_STDARG_H"],
    },
    CLibrary {
        crate_name: "zstd-sys",
        root: "zstd/lib",
        folders: &["common", "compress", "decompress"],
        headers: &["zstd.h", "zstd_errors.h", "zdict.h"],
        name: "zstd",
        major: "1",
        defines: &["-DZSTD_DISABLE_ASM"],
    },
];

/// How a toolchain file tells clang which Mac to build for.
enum Compilers {
    /// conda-forge's: the compilers are named for their target (`<target>-clang`).
    Named(&'static str),
    /// `clang`, given this target by `CMAKE_C_COMPILER_TARGET` (clang's `--target`).
    Told(&'static str),
}

/// One Mac as the builds name it.
struct Mac {
    /// Rust's target.
    triple: &'static str,
    compilers: Compilers,
    /// Apple's name of the architecture (`CMAKE_OSX_ARCHITECTURES`).
    arch: &'static str,
    /// The Darwin of the deployment target (`CMAKE_SYSTEM_VERSION`), as conda-forge's compilers
    /// name it: CMake's Darwin platform reads link options from it.
    darwin: &'static str,
}

const MACS: [Mac; 2] = [
    Mac {
        triple: "aarch64-apple-darwin",
        compilers: Compilers::Told("arm64-apple-macos11"),
        arch: "arm64",
        darwin: "20.0.0",
    },
    Mac {
        triple: "x86_64-apple-darwin",
        compilers: Compilers::Named("x86_64-apple-darwin13.4.0"),
        arch: "x86_64",
        darwin: "16.0.0",
    },
];

/// Both Macs, each built and checked (`cargo xtask macos`, after the test programs).
pub fn test_macos_netcdf(h: &Harness) -> Result {
    let started = Instant::now();
    let release = crate::release::find(RELEASE).map_err(harness::Failure)?;
    let h = &h.for_release(release);
    let sdk = crate::macos::clang_sdk(h)?;
    run(cmd("rustup", ["target", "add"]).args(MACS.map(|mac| mac.triple)))?;
    crate::setup::fetch_netcdf_source(h)?;
    let source = h.work.join(format!("netcdf-c-{RELEASE}"));
    let libraries: Vec<PathBuf> =
        C_LIBRARIES.iter().map(|library| library_source(h, library)).collect::<Result<_>>()?;
    let hdf5 = crate::hdf5::unpacked_source(h, &crate::hdf5::HDF5_2_2_0)?;
    let cmake = crate::hdf5::newer_cmake(h)?;
    for mac in &MACS {
        let root = h.repo.join("target/macos-netcdf").join(mac.triple);
        create_dir_all(&root)?;
        let compilers = compiler_wrappers(&root, mac, &sdk)?;
        let prefix = root.join("prefix");
        let toolchain = root.join("toolchain.cmake");
        let written = toolchain_file(mac, &compilers, &sdk, &prefix);
        if std::fs::read_to_string(&toolchain).ok().as_deref() != Some(written.as_str()) {
            // Built with other settings: the C libraries, HDF5 and netcdf-c again.
            for stale in ["prefix", "build-stock", "build-ncfilters"] {
                harness::remove_dir_all_if_exists(&root.join(stale))?;
            }
            write_file(&toolchain, &written)?;
        }
        let tools = root.join("bin");
        let dependencies = Dependencies { cmake: &cmake, toolchain: &toolchain, prefix: &prefix, tools: &tools };
        let target_flags = c_library_target_flags(mac, &sdk);
        for (library, source) in C_LIBRARIES.iter().zip(&libraries) {
            if build_c_library(library, source, &compilers.0, &target_flags, &prefix)? {
                // netcdf-c finds its libraries when configured: again, with this one.
                for stale in ["build-stock", "build-ncfilters"] {
                    harness::remove_dir_all_if_exists(&root.join(stale))?;
                }
            }
        }
        build_hdf5(h, &hdf5, &root, &dependencies)?;
        for flavour in ["stock", "ncfilters"] {
            build_netcdf(h, mac, flavour, &source, &root.join(format!("build-{flavour}")), &dependencies)?;
        }
        check_mac(mac, &root, &prefix, &sdk)?;
    }
    println!("netcdf-c {RELEASE} for both Macs: built and checked in {} s", started.elapsed().as_secs());
    Ok(())
}

/// What the netcdf-c and HDF5 builds of one Mac are configured with.
struct Dependencies<'a> {
    /// PyPI's CMake ([`crate::hdf5::newer_cmake`]): HDF5 2.x needs 3.26.
    cmake: &'a Path,
    toolchain: &'a Path,
    /// Where the C libraries and HDF5 are installed.
    prefix: &'a Path,
    /// The compilers and `sw_vers` ([`compiler_wrappers`]), first on `PATH`.
    tools: &'a Path,
}

/// The C and C++ compilers of `mac`: scripts that run clang 19 linking with ld64.lld (given only
/// when they link: a compile would warn that it is unused). Those [`Compilers::Named`] are named as
/// conda-forge's and build for the Mac on the SDK, as conda-forge's do; the others are `clang`,
/// told both by CMake. C++ links without libc++, which the SDK's stubs lack and nothing built here
/// needs.
fn compiler_wrappers(root: &Path, mac: &Mac, sdk: &ClangSdk) -> Result<(PathBuf, PathBuf)> {
    let bin = root.join("bin");
    create_dir_all(&bin)?;
    let minimum = crate::macos::deployment_target(mac.triple);
    let (prefix, target) = match mac.compilers {
        Compilers::Named(target) => (
            format!("{target}-"),
            format!("-target {target} -mmacosx-version-min={minimum} -isysroot {}", sdk.root.display()),
        ),
        Compilers::Told(_) => (String::new(), String::new()),
    };
    let script = |clang: &str, extra: &str| {
        format!(
            "#!/bin/sh\n# Written by cargo xtask: clang for {triple} on the SDK made of Zig's stubs.\n\
             link=\"-fuse-ld=lld{extra}\"\n\
             for argument in \"$@\"; do case $argument in -c|-E|-S|-M|-MM) link= ;; esac; done\n\
             exec {clang} {target} $link \"$@\"\n",
            triple = mac.triple,
        )
    };
    let c = bin.join(format!("{prefix}clang"));
    let cxx = bin.join(format!("{prefix}clang++"));
    write_file(&c, &script(crate::macos::CLANG, ""))?;
    write_file(&cxx, &script(crate::macos::CLANG_CXX, " -nostdlib++"))?;
    // CMake's Darwin platform gives rpaths, and so `@rpath` install names, only when `sw_vers`
    // tells it the build machine's macOS, as on a Mac (osxcross has the same stand-in).
    let sw_vers = bin.join("sw_vers");
    write_file(&sw_vers, &format!("#!/bin/sh\n# Written by cargo xtask: the macOS CMake asks for.\necho {minimum}\n"))?;
    for file in [&c, &cxx, &sw_vers] {
        run(cmd("chmod", ["755"]).arg(file))?;
    }
    Ok((c, cxx))
}

/// The CMake toolchain file of `mac`: its compilers and LLVM's tools, the SDK, and the prefix of
/// the libraries built for it as the only place to find libraries and headers.
fn toolchain_file(mac: &Mac, compilers: &(PathBuf, PathBuf), sdk: &ClangSdk, prefix: &Path) -> String {
    let tool = |name: &str| format!("/usr/bin/llvm-{name}-{}", crate::macos::LLVM_VERSION);
    format!(
        "# Written by cargo xtask: {triple} with clang and ld64.lld.\n\
         set(CMAKE_SYSTEM_NAME Darwin)\n\
         set(CMAKE_SYSTEM_VERSION {darwin})\n\
         set(CMAKE_SYSTEM_PROCESSOR {arch})\n\
         set(CMAKE_OSX_ARCHITECTURES {arch})\n\
         set(CMAKE_OSX_DEPLOYMENT_TARGET {minimum})\n\
         set(CMAKE_OSX_SYSROOT {sdk})\n\
         set(CMAKE_C_COMPILER {c})\n\
         set(CMAKE_CXX_COMPILER {cxx})\n\
         {told}\
         set(CMAKE_AR {ar})\n\
         set(CMAKE_RANLIB {ranlib})\n\
         set(CMAKE_NM {nm})\n\
         set(CMAKE_OTOOL {otool})\n\
         set(CMAKE_INSTALL_NAME_TOOL {install_name_tool})\n\
         set(CMAKE_FIND_ROOT_PATH {prefix})\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)\n",
        triple = mac.triple,
        arch = mac.arch,
        darwin = mac.darwin,
        minimum = crate::macos::deployment_target(mac.triple),
        sdk = sdk.root.display(),
        c = compilers.0.display(),
        cxx = compilers.1.display(),
        ar = tool("ar"),
        ranlib = tool("ranlib"),
        nm = tool("nm"),
        otool = tool("otool"),
        install_name_tool = tool("install-name-tool"),
        prefix = prefix.display(),
        told = match mac.compilers {
            Compilers::Told(target) => {
                format!("set(CMAKE_C_COMPILER_TARGET {target})\nset(CMAKE_CXX_COMPILER_TARGET {target})\n")
            }
            Compilers::Named(_) => String::new(),
        },
    )
}

/// What the C libraries' compiler needs to be told of `mac`, which CMake tells the others.
fn c_library_target_flags(mac: &Mac, sdk: &ClangSdk) -> Vec<String> {
    match mac.compilers {
        Compilers::Told(target) => vec![
            format!("--target={target}"),
            format!("-mmacosx-version-min={}", crate::macos::deployment_target(mac.triple)),
            "-isysroot".into(),
            sdk.root.display().to_string(),
        ],
        Compilers::Named(_) => Vec::new(),
    }
}

/// The folder of `library`'s sources, unpacked from its crate at Cargo.lock's version.
fn library_source(h: &Harness, library: &CLibrary) -> Result<PathBuf> {
    let lock = crate::licences::locked_registry_crates(&read_to_string(&h.repo.join("Cargo.lock"))?);
    let Some((_, version)) = lock.iter().find(|(name, _)| name == library.crate_name) else {
        fail!("Cargo.lock has no {}", library.crate_name);
    };
    let crate_file = crate::hdf5::fetched_crate(h, library.crate_name, version)?;
    let unpacked = h.work_root().join(format!("macos-{}", library.name));
    harness::remove_dir_all_if_exists(&unpacked)?;
    create_dir_all(&unpacked)?;
    run(cmd("tar", ["-xzf"]).arg(&crate_file).arg("-C").arg(&unpacked))?;
    let source = unpacked.join(format!("{}-{version}", library.crate_name)).join(library.root);
    if let Some(missing) = library.headers.iter().find(|header| !source.join(header).is_file()) {
        fail!("{} has no {missing}", source.display());
    }
    Ok(source)
}

/// `library` built by `cc` into `prefix`, unless it is there: the dylib, its unversioned link and
/// the headers. Whether it was built.
fn build_c_library(
    library: &CLibrary,
    source: &Path,
    cc: &Path,
    target_flags: &[String],
    prefix: &Path,
) -> Result<bool> {
    let lib = prefix.join("lib");
    let file = format!("lib{}.{}.dylib", library.name, library.major);
    if lib.join(&file).is_file() {
        return Ok(false);
    }
    log(format!("lib{} for the Mac into {}", library.name, prefix.display()));
    create_dir_all(&lib)?;
    create_dir_all(&prefix.join("include"))?;
    let mut sources = Vec::new();
    for folder in library.folders {
        let folder = source.join(folder);
        let entries = std::fs::read_dir(&folder).map_err(|e| harness::Failure(format!("{}: {e}", folder.display())))?;
        sources.extend(
            entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .filter(|path| path.extension().is_some_and(|extension| extension == "c")),
        );
    }
    sources.sort();
    let mut compile = cmd(cc, ["-O2", "-fPIC", "-dynamiclib"]);
    compile
        .args(library.defines)
        .args(target_flags)
        .args(["-install_name", &format!("@rpath/{file}"), "-compatibility_version", library.major, "-o"])
        .arg(lib.join(&file))
        .args(&sources);
    run(&mut compile)?;
    let link = lib.join(format!("lib{}.dylib", library.name));
    std::os::unix::fs::symlink(&file, &link).map_err(|e| harness::Failure(format!("{}: {e}", link.display())))?;
    for header in library.headers {
        run(cmd("cp", ["--"]).arg(source.join(header)).arg(prefix.join("include")))?;
    }
    Ok(true)
}

/// HDF5 2.2.0 built for the Mac into the prefix, once.
fn build_hdf5(h: &Harness, source: &Path, root: &Path, dependencies: &Dependencies) -> Result {
    if dependencies.prefix.join("lib/libhdf5.dylib").is_file() {
        return Ok(());
    }
    let build = root.join("build-hdf5");
    harness::remove_dir_all_if_exists(&build)?;
    let zlib_root = format!("-DZLIB_ROOT={}", dependencies.prefix.display());
    let mut options: Vec<&str> = crate::hdf5::COMMON_OPTIONS.iter().chain(&HDF5_OPTIONS).copied().collect();
    options.push(&zlib_root);
    let cmake = crate::cmake_install::CMakeInstall {
        platform: "the Mac",
        cmake: dependencies.cmake,
        toolchain: dependencies.toolchain,
        prefix: dependencies.prefix,
        environment: &|command| with_first_on_path(command, dependencies.tools),
    };
    cmake.install(h, source, &build, &options)
}

/// netcdf-c configured with the toolchain (and for `ncfilters` the module) and built: the
/// library, its utilities and the plugins.
fn build_netcdf(
    h: &Harness,
    mac: &Mac,
    flavour: &str,
    source: &Path,
    build: &Path,
    dependencies: &Dependencies,
) -> Result {
    let log_file = build.with_extension("log");
    let environment = |command: &mut std::process::Command| {
        // No SDKROOT: the module hands cargo CMAKE_OSX_SYSROOT. pkg-config finds nothing of the
        // build machine.
        with_first_on_path(command, dependencies.tools)
            .env_remove("SDKROOT")
            .env("PKG_CONFIG_LIBDIR", dependencies.prefix.join("lib/pkgconfig"));
    };
    if !build.join("CMakeCache.txt").is_file() {
        log(format!("configure netcdf-c {RELEASE} for {} ({flavour})", mac.triple));
        let mut configure = cmd("cmake", ["-S"]);
        configure
            .arg(source)
            .arg("-B")
            .arg(build)
            .arg(format!("-DCMAKE_TOOLCHAIN_FILE={}", dependencies.toolchain.display()))
            .arg(format!("-DHDF5_ROOT={}", dependencies.prefix.display()))
            .arg(format!("-DZLIB_ROOT={}", dependencies.prefix.display()))
            .arg(format!("-DZstd_ROOT={}", dependencies.prefix.display()))
            .args(h.release.flags)
            .args(NETCDF_OPTIONS);
        if flavour != "stock" {
            configure.args(crate::netcdf::ncfilters_module_flags(h, &build.with_file_name("cargo")));
        }
        environment(&mut configure);
        if !succeeds_into_log(&mut configure, &log_file, false)? {
            print_tail(&log_file, 40);
            fail!("configure of netcdf-c for {} ({flavour}) failed (log: {})", mac.triple, log_file.display());
        }
        if flavour != "stock" && !read_to_string(&log_file)?.contains("sizes and offsets of netcdf-c's structs match") {
            fail!("the module's layout check did not run in {}", log_file.display());
        }
    }
    log(format!("build netcdf-c {RELEASE} for {} ({flavour})", mac.triple));
    let started = Instant::now();
    let mut make = cmd("cmake", ["--build"]);
    make.arg(build).arg(format!("-j{}", h.jobs));
    environment(&mut make);
    if !succeeds_into_log(&mut make, &log_file, true)? {
        crate::text::print_matching(&log_file, &["error", "undefined"], 40);
        fail!("build of netcdf-c for {} ({flavour}) failed (log: {})", mac.triple, log_file.display());
    }
    println!("built netcdf-c {RELEASE} for {} ({flavour}) in {} s", mac.triple, started.elapsed().as_secs());
    Ok(())
}

/// The checks of the module's build against stock's, for one Mac.
fn check_mac(mac: &Mac, root: &Path, prefix: &Path, sdk: &ClangSdk) -> Result {
    let library = |flavour: &str| root.join(format!("build-{flavour}/libnetcdf.dylib"));
    let stock = defined_symbols(&library("stock"))?;
    let ours = defined_symbols(&library("ncfilters"))?;
    // What libnetcdf.so adds on Linux too (packaging.md).
    let additions =
        crate::matrix::OWN_EXPORTS.iter().chain(&crate::matrix::DECLARED_BUT_UNDEFINED).map(|name| name.to_string());
    crate::library_exports::check_exports(
        &format!("{} libnetcdf.dylib", mac.triple),
        &stock,
        &ours,
        &additions.collect(),
    )?;
    let build = root.join("build-ncfilters");
    let map = read_to_string(&build.join("ncfilters-libnetcdf.map"))?;
    if let Some(object) = crate::provenance::REPLACED_OBJECTS.iter().find(|object| map.contains(**object)) {
        fail!("{}: a replaced netcdf-c object ({object}) is in libnetcdf.dylib's link map", mac.triple);
    }
    let mut system = sdk.exports()?;
    for name in ["libhdf5.dylib", "libhdf5_hl.dylib", "libz.dylib", "libzstd.dylib"] {
        system.extend(defined_symbols(&prefix.join("lib").join(name))?);
    }
    let undefined = undefined_symbols(&library("ncfilters"))?;
    let unresolved: Vec<&String> = undefined.difference(&system).collect();
    if !unresolved.is_empty() {
        fail!(
            "{}: libnetcdf.dylib needs what neither libSystem, HDF5, zlib nor libzstd exports: {unresolved:?}",
            mac.triple
        );
    }
    crate::macos::check_loadable(&library("ncfilters"), mac.triple)?;
    system.extend(ours);
    // The plugins the module replaces: those stock builds (none for a filter whose C library the
    // prefix lacks: blosc, szip), zstd's among them.
    let file = |stem: &str| format!("plugins/lib__nc{stem}.dylib");
    let stock_built = |stem: &&str| root.join("build-stock").join(file(stem)).is_file();
    let stems: Vec<&str> = crate::provenance::plugin_stems().into_iter().filter(stock_built).collect();
    if !stems.contains(&"h5zstd") {
        fail!("{}: stock built no h5zstd plugin (found libzstd?), only {stems:?}", mac.triple);
    }
    for stem in &stems {
        let plugin = build.join(file(stem));
        crate::macos::check_loadable(&plugin, mac.triple)?;
        // ncfilters' filter plugins alone export the decode limit the NCZarr chain sets.
        if stem.starts_with("h5") && !defined_symbols(&plugin)?.contains("ncfilters_set_decode_limit") {
            fail!("{}: {} is not ncfilters' plugin", mac.triple, plugin.display());
        }
        let unresolved: Vec<String> = undefined_symbols(&plugin)?.difference(&system).cloned().collect();
        if !unresolved.is_empty() {
            fail!(
                "{}: {} needs what none of libSystem, HDF5, zlib, libzstd and libnetcdf exports: {unresolved:?}",
                mac.triple,
                plugin.display()
            );
        }
    }
    println!(
        "PASS {}: libnetcdf.dylib exports stock's {} symbols and the Linux additions; no replaced object linked; \
         {} undefined symbols, all from libSystem, HDF5, zlib or libzstd; it and {} plugins ({}) load through @rpath",
        mac.triple,
        stock.len(),
        undefined.len(),
        stems.len(),
        stems.join(" ")
    );
    Ok(())
}

/// The external symbols a Mach-O file defines, without Mach-O's leading underscore.
fn defined_symbols(file: &Path) -> Result<BTreeSet<String>> {
    symbols(file, "--defined-only")
}

/// The symbols a Mach-O file leaves to the libraries it loads, without the leading underscore.
fn undefined_symbols(file: &Path) -> Result<BTreeSet<String>> {
    symbols(file, "--undefined-only")
}

fn symbols(file: &Path, which: &str) -> Result<BTreeSet<String>> {
    let nm = format!("llvm-nm-{}", crate::macos::LLVM_VERSION);
    let printed = output(cmd(nm, ["--extern-only", "--just-symbol-name", which]).arg(file))?;
    Ok(printed.lines().map(|name| name.strip_prefix('_').unwrap_or(name).to_string()).collect())
}
