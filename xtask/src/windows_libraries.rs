// SPDX-License-Identifier: BSD-3-Clause
//! The C libraries ncfilters loads on first use (blosc's `libblosc.dll`, szip's `libsz.dll`),
//! cross-built for Windows with MinGW-w64 as MSYS2 ships them, so that `cargo xtask wine` runs
//! the blosc and szip tests too. Debian has neither for MinGW, so each comes from a pinned
//! release source a registry carries:
//! - c-blosc 1.21.6 with its bundled LZ4, zlib and Zstandard, as PyPI's `blosc` 1.11.2 sdist
//!   carries it (`blosc/c-blosc`);
//! - libaec 1.1.4, as the `libaec-sys` 0.1.3 crate carries it, whose CMake asks for 3.26.

use std::path::{Path, PathBuf};

use crate::cmake_install::CMakeInstall;
use crate::harness::{create_dir_all, fail, log, write_file, Harness, Result};
use crate::process::{cmd, run};

/// PyPI's python-blosc sdist, pinned by hash, which carries c-blosc.
const BLOSC_SDIST: &str = "blosc==1.11.2";
const BLOSC_SDIST_SHA256: &str = "ac5e7c1bfc1c7232b900be94cddb5ffcf9ea49f313c8ae98a7ca0dd87b872bf4";
/// What pip needs to read the sdist's metadata (its build backend) without building it.
const SDIST_TOOLS: [&str; 2] = ["setuptools==65.5.0", "scikit-build==0.19.1"];

/// The crate that carries libaec's release source.
const LIBAEC_CRATE: (&str, &str) = ("libaec-sys", "0.1.3");
const LIBAEC_DIR: &str = "libaec-1.1.4";

/// The DLLs the tests load, as libaec's and c-blosc's CMake name them.
pub const DLLS: [&str; 2] = ["libblosc.dll", "libsz.dll"];

/// The folder holding [`DLLS`], built once into `root` with the MinGW-w64 compilers of GNU
/// triplet `gnu`.
pub fn native_dlls(h: &Harness, root: &Path, gnu: &str) -> Result<PathBuf> {
    let bin = root.join("install/bin");
    if DLLS.iter().all(|dll| bin.join(dll).is_file()) {
        return Ok(bin);
    }
    create_dir_all(root)?;
    let toolchain = root.join("mingw-w64.cmake");
    write_file(&toolchain, &toolchain_file(gnu, &[], None))?;
    let cmake = crate::hdf5::newer_cmake(h)?;
    let blosc = c_blosc_source(h, root)?;
    let blosc_options = [
        "-DBUILD_STATIC=OFF",
        "-DBUILD_TESTS=OFF",
        "-DBUILD_BENCHMARKS=OFF",
        "-DBUILD_FUZZERS=OFF",
        "-DPREFER_EXTERNAL_LZ4=OFF",
        "-DPREFER_EXTERNAL_ZLIB=OFF",
        "-DPREFER_EXTERNAL_ZSTD=OFF",
    ];
    let prefix = root.join("install");
    let builds = CMakeInstall {
        platform: "Windows (MinGW-w64)",
        cmake: &cmake,
        toolchain: &toolchain,
        prefix: &prefix,
        environment: &|command| command,
    };
    builds.install(h, &blosc, &root.join("build-blosc"), &blosc_options)?;
    let libaec = libaec_source(root)?;
    builds.install(h, &libaec, &root.join("build-libaec"), &["-DBUILD_STATIC_LIBS=OFF", "-DBUILD_TESTING=OFF"])?;
    for dll in DLLS {
        if !bin.join(dll).is_file() {
            fail!("the MinGW-w64 builds made no {}", bin.join(dll).display());
        }
    }
    Ok(bin)
}

/// CMake's cross toolchain for Debian's MinGW-w64 compilers: libraries are found in their root
/// and in `prefixes`; `emulator` runs the programs a configure step runs (try_run).
pub fn toolchain_file(gnu: &str, prefixes: &[&Path], emulator: Option<&str>) -> String {
    let roots: String = prefixes.iter().map(|prefix| format!(" {}", prefix.display())).collect();
    let emulator =
        emulator.map(|program| format!("set(CMAKE_CROSSCOMPILING_EMULATOR {program})\n")).unwrap_or_default();
    format!(
        "# Written by cargo xtask: Debian's MinGW-w64 cross compilers.\n\
         set(CMAKE_SYSTEM_NAME Windows)\n\
         set(CMAKE_SYSTEM_PROCESSOR x86_64)\n\
         set(CMAKE_C_COMPILER {gnu}-gcc)\n\
         set(CMAKE_CXX_COMPILER {gnu}-g++)\n\
         set(CMAKE_RC_COMPILER {gnu}-windres)\n\
         set(CMAKE_FIND_ROOT_PATH /usr/{gnu}{roots})\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)\n\
         set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)\n\
         {emulator}"
    )
}

/// c-blosc's CMake project, unpacked from the sdist (downloaded once into the cache).
fn c_blosc_source(h: &Harness, root: &Path) -> Result<PathBuf> {
    let name = BLOSC_SDIST.replace("==", "-");
    let sdist = h.cache.join(format!("{name}.tar.gz"));
    if !sdist.is_file() {
        let tools = crate::setup::pypi_tools(h, "sdist-tools", &SDIST_TOOLS, "wheel")?;
        let requirements = root.join("blosc-requirements.txt");
        write_file(&requirements, &format!("{BLOSC_SDIST} --hash=sha256:{BLOSC_SDIST_SHA256}\n"))?;
        log(format!("pip download {BLOSC_SDIST} (sdist, hash-pinned)"));
        let mut pip = cmd(tools.join("pip"), ["download", "-q", "--disable-pip-version-check", "--no-deps"]);
        pip.args(["--no-binary", ":all:", "--no-build-isolation", "-d"]).arg(&h.cache).arg("-r").arg(&requirements);
        run(&mut pip)?;
    }
    let unpacked = root.join(&name);
    if !unpacked.is_dir() {
        run(cmd("tar", ["-C"]).arg(root).arg("-xzf").arg(&sdist))?;
    }
    Ok(unpacked.join("blosc/c-blosc"))
}

/// libaec's release source inside the crate, which cargo fetches into its registry.
fn libaec_source(root: &Path) -> Result<PathBuf> {
    let (crate_name, version) = LIBAEC_CRATE;
    let project = root.join("fetch-libaec");
    create_dir_all(&project.join("src"))?;
    write_file(
        &project.join("Cargo.toml"),
        &format!(
            "# Written by cargo xtask: fetches libaec's source crate.\n[package]\nname = \"fetch-libaec\"\n\
             version = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n\
             {crate_name} = \"={version}\"\n\n[workspace]\n"
        ),
    )?;
    write_file(&project.join("src/main.rs"), "fn main() {}\n")?;
    let manifest = project.join("Cargo.toml");
    run(cmd("cargo", ["fetch", "--quiet", "--manifest-path"]).arg(&manifest))?;
    let metadata = crate::licences::metadata(&project)?;
    let manifest_path = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|package| package["name"] == crate_name && package["version"] == version)
        .and_then(|package| package["manifest_path"].as_str())
        .map(PathBuf::from);
    let Some(manifest_path) = manifest_path else {
        fail!("cargo metadata names no {crate_name} {version}");
    };
    let source = manifest_path.parent().unwrap_or(Path::new("/")).join(LIBAEC_DIR);
    if !source.join("CMakeLists.txt").is_file() {
        fail!("{crate_name} {version} carries no {}", source.display());
    }
    Ok(source)
}
