// SPDX-License-Identifier: BSD-3-Clause
//! The HDF5 releases newer than Debian 12's 1.10 that distributions ship, built from source into
//! the cache for the matrix's configurations: 1.14.6 (Debian sid's source package; Debian 13 and
//! Fedora 44 ship 1.14) and 2.2.0 (the copy the hdf5-metno-src crate vendors; Fedora 45 and
//! conda-forge ship 2.x). Each is built as distributions build it: shared C and HL libraries
//! with zlib and szip (Debian's libaec).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::harness::{self, fail, log, read_to_string, write_file, Harness, Result};
use crate::process::{cmd, run, succeeds_into_log};
use crate::text::print_tail;

pub struct Hdf5Release {
    pub version: &'static str,
    /// The version, and what sets this build apart from another of the same version.
    pub label: &'static str,
    source: Hdf5Source,
    /// CMake options besides the common ones: 2.0 renamed the zlib option and its vendored copy
    /// has no tools directory.
    options: &'static [&'static str],
    /// 2.x needs CMake 3.26 or newer; Debian 12's is 3.25.
    needs_newer_cmake: bool,
    /// 1.14 finds libaec only as a CMake package, which Debian's has not ([`LIBAEC_PACKAGE`]);
    /// 2.x has a find module.
    needs_libaec_package: bool,
}

enum Hdf5Source {
    /// `apt-get source <package>=<version>` from a Debian suite: the orig tarball unpacks to `dir`.
    Debian { package: &'static str, version: &'static str, suite: &'static str, orig: &'static str, dir: &'static str },
    /// A crate of the Rust crate registry, fetched by cargo (which checks its checksum); the HDF5
    /// tree is `subdir` of it.
    Crate { name: &'static str, version: &'static str, subdir: &'static str },
}

pub static HDF5_1_14_6: Hdf5Release = Hdf5Release {
    version: "1.14.6",
    label: "1.14.6",
    source: Hdf5Source::Debian {
        package: "hdf5",
        version: "1.14.6+repack-2",
        suite: "sid",
        orig: "hdf5_1.14.6+repack.orig.tar.gz",
        dir: "hdf5-1.14.6+repack",
    },
    options: &["-DHDF5_ENABLE_Z_LIB_SUPPORT=ON", "-DHDF5_BUILD_TOOLS=ON"],
    needs_newer_cmake: false,
    needs_libaec_package: true,
};

pub static HDF5_2_2_0: Hdf5Release = HDF5_2_2_0_AS_DISTRIBUTIONS_BUILD_IT;

const HDF5_2_2_0_AS_DISTRIBUTIONS_BUILD_IT: Hdf5Release = Hdf5Release {
    version: "2.2.0",
    label: "2.2.0",
    source: Hdf5Source::Crate { name: "hdf5-metno-src", version: "0.10.4", subdir: "ext/hdf5" },
    options: &["-DHDF5_ENABLE_ZLIB_SUPPORT=ON", "-DHDF5_BUILD_TOOLS=OFF"],
    needs_newer_cmake: true,
    needs_libaec_package: false,
};

/// 2.2.0 built to load only signed plugins (`HDF5_REQUIRE_SIGNED_PLUGINS`, with OpenSSL): the
/// same ABI, so the 2.2.0 builds of netcdf-c run on it unchanged.
pub static HDF5_2_2_0_SIGNING: Hdf5Release = Hdf5Release {
    label: "2.2.0-signed-plugins",
    options: &["-DHDF5_ENABLE_ZLIB_SUPPORT=ON", "-DHDF5_BUILD_TOOLS=OFF", "-DHDF5_REQUIRE_SIGNED_PLUGINS=ON"],
    ..HDF5_2_2_0_AS_DISTRIBUTIONS_BUILD_IT
};

/// The options of every build: shared C and HL libraries with zlib and szip, nothing else.
pub const COMMON_OPTIONS: [&str; 11] = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DBUILD_STATIC_LIBS=OFF",
    "-DBUILD_TESTING=OFF",
    "-DHDF5_BUILD_EXAMPLES=OFF",
    "-DHDF5_BUILD_FORTRAN=OFF",
    "-DHDF5_BUILD_CPP_LIB=OFF",
    "-DHDF5_BUILD_JAVA=OFF",
    "-DHDF5_BUILD_HL_LIB=ON",
    "-DHDF5_ENABLE_SZIP_SUPPORT=ON",
    "-DHDF5_ALLOW_EXTERNAL_SUPPORT=NO",
];

/// The CMake of PyPI's `cmake` package that builds HDF5 2.x, pinned.
const NEWER_CMAKE: &str = "cmake==3.31.6";

/// Debian's libaec-dev ships no CMake package and HDF5 1.14 finds libaec only as one: this one
/// names Debian's libsz and libaec as the targets HDF5 links (`libaec::sz`, `libaec::aec`).
const LIBAEC_PACKAGE: &str = "\
# Written by cargo xtask: Debian's libaec as the CMake package HDF5 looks for.
find_path(SZIP_INCLUDE_DIR szlib.h REQUIRED)
find_library(libaec_SZ_LIBRARY sz REQUIRED)
find_library(libaec_AEC_LIBRARY aec REQUIRED)
foreach(name sz aec)
  string(TOUPPER ${name} upper)
  if(NOT TARGET libaec::${name})
    add_library(libaec::${name} UNKNOWN IMPORTED)
    set_target_properties(libaec::${name} PROPERTIES IMPORTED_LOCATION \"${libaec_${upper}_LIBRARY}\"
      INTERFACE_INCLUDE_DIRECTORIES \"${SZIP_INCLUDE_DIR}\")
  endif()
endforeach()
set(libaec_FOUND TRUE)
";

impl Hdf5Release {
    /// Where it is installed: in the cache, as it takes minutes to build.
    pub fn prefix(&self, h: &Harness) -> PathBuf {
        h.cache.join(format!("hdf5-{}", self.label))
    }

    fn options(&self) -> String {
        COMMON_OPTIONS.iter().chain(self.options).copied().collect::<Vec<_>>().join(" ")
    }
}

/// The release installed in its prefix, built unless a stamp there records the same options.
/// Returns the prefix.
pub fn ensure_built(h: &Harness, hdf5: &Hdf5Release) -> Result<PathBuf> {
    let prefix = hdf5.prefix(h);
    let stamp = prefix.join("ncfilters-build-options");
    if read_to_string(&stamp).is_ok_and(|options| options.trim_end() == hdf5.options()) {
        return Ok(prefix);
    }
    let src = unpacked_source(h, hdf5)?;
    let build = h.work_root().join(format!("hdf5-build-{}", hdf5.label));
    harness::remove_dir_all_if_exists(&build)?;
    harness::remove_dir_all_if_exists(&prefix)?;
    let cmake = if hdf5.needs_newer_cmake { newer_cmake(h)? } else { PathBuf::from("cmake") };

    log(format!("HDF5 {}: configure, build and install into {}", hdf5.label, prefix.display()));
    let start = Instant::now();
    let log_file = h.work_root().join(format!("hdf5-{}.log", hdf5.label));
    let mut configure = cmd(&cmake, ["-S"]);
    configure
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_INSTALL_PREFIX={}", prefix.display()))
        .args(COMMON_OPTIONS)
        .args(hdf5.options);
    if hdf5.needs_libaec_package {
        let package = h.work_root().join("libaec-cmake");
        harness::create_dir_all(&package)?;
        write_file(&package.join("libaec-config.cmake"), LIBAEC_PACKAGE)?;
        configure.arg(format!("-Dlibaec_DIR={}", package.display()));
    }
    let mut compile = cmd(&cmake, ["--build"]);
    compile.arg(&build).arg(format!("-j{}", h.jobs));
    let mut install = cmd(&cmake, ["--install"]);
    install.arg(&build);
    for (what, command) in [("configure", &mut configure), ("build", &mut compile), ("install", &mut install)] {
        if !succeeds_into_log(command, &log_file, true)? {
            print_tail(&log_file, 40);
            fail!("HDF5 {}: {what} failed (log: {})", hdf5.label, log_file.display());
        }
    }
    check_filters_built(&prefix, hdf5)?;
    write_file(&stamp, &format!("{}\n", hdf5.options()))?;
    println!("built HDF5 {} in {} s", hdf5.label, start.elapsed().as_secs());
    Ok(prefix)
}

/// zlib and szip are in the installed library, as in every distribution's: HDF5 leaves out a
/// filter whose library it does not find, and says so only in its configure output.
fn check_filters_built(prefix: &Path, hdf5: &Hdf5Release) -> Result {
    let settings = read_to_string(&prefix.join("include/H5pubconf.h"))?;
    for macro_name in ["H5_HAVE_FILTER_DEFLATE", "H5_HAVE_FILTER_SZIP"] {
        if !settings.contains(&format!("#define {macro_name} 1")) {
            fail!("HDF5 {} was built without {macro_name}", hdf5.label);
        }
    }
    Ok(())
}

/// The release's source tree, fetched into the cache and unpacked into the work directory.
pub fn unpacked_source(h: &Harness, hdf5: &Hdf5Release) -> Result<PathBuf> {
    let unpacked = h.work_root().join(format!("hdf5-src-{}", hdf5.label));
    harness::remove_dir_all_if_exists(&unpacked)?;
    harness::create_dir_all(&unpacked)?;
    harness::create_dir_all(&h.cache)?;
    let tarball = match hdf5.source {
        Hdf5Source::Debian { package, version, suite, orig, .. } => {
            let tarball = h.cache.join(orig);
            if !tarball.is_file() {
                crate::setup::ensure_deb_src_for(suite)?;
                crate::setup::apt_get_source(h, &format!("{package}={version}"))?;
            }
            tarball
        }
        Hdf5Source::Crate { name, version, .. } => fetched_crate(h, name, version)?,
    };
    let mut untar = cmd("tar", ["-xzf"]);
    untar.arg(&tarball).arg("-C").arg(&unpacked);
    run(&mut untar)?;
    let tree = match hdf5.source {
        Hdf5Source::Debian { dir, .. } => unpacked.join(dir),
        Hdf5Source::Crate { name, version, subdir } => unpacked.join(format!("{name}-{version}")).join(subdir),
    };
    if !tree.join("CMakeLists.txt").is_file() {
        fail!("the HDF5 {} source has no {}", hdf5.version, tree.join("CMakeLists.txt").display());
    }
    Ok(tree)
}

/// The `.crate` file of `name` `version`, fetched by `cargo fetch` of a manifest that depends on
/// exactly that version (cargo verifies it against the registry's checksum).
pub fn fetched_crate(h: &Harness, name: &str, version: &str) -> Result<PathBuf> {
    let file = format!("{name}-{version}.crate");
    let cached = h.cache.join(&file);
    if cached.is_file() {
        return Ok(cached);
    }
    log(format!("fetching the {name} {version} crate"));
    let project = h.work_root().join(format!("fetch-{name}"));
    harness::remove_dir_all_if_exists(&project)?;
    harness::create_dir_all(&project.join("src"))?;
    write_file(
        &project.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"fetch-{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\n{name} = \"={version}\"\n\n[workspace]\n"
        ),
    )?;
    write_file(&project.join("src/lib.rs"), "")?;
    run(cmd("cargo", ["fetch", "-q"]).current_dir(&project))?;
    let registry_cache = harness::cargo_home().join("registry/cache");
    let found = std::fs::read_dir(&registry_cache)
        .map_err(|e| harness::Failure(format!("cannot read {}: {e}", registry_cache.display())))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path().join(&file)))
        .find(|path| path.is_file());
    let Some(found) = found else {
        fail!("cargo fetch left no {file} under {}", registry_cache.display());
    };
    run(cmd("cp", ["--"]).arg(&found).arg(&cached))?;
    Ok(cached)
}

/// The `cmake` of a virtualenv in the cache with PyPI's [`NEWER_CMAKE`].
pub fn newer_cmake(h: &Harness) -> Result<PathBuf> {
    let bin = crate::setup::pypi_tools(h, &NEWER_CMAKE.replace("==", "-"), &[NEWER_CMAKE], "cmake")?;
    Ok(bin.join("cmake"))
}

/// The libhdf5 files the dynamic loader gives `file` (with `library_path` as LD_LIBRARY_PATH):
/// every one must lie in `prefix`, or the machine's 1.10 would be under test unseen. Returns them.
pub fn require_hdf5_from(file: &Path, library_path: Option<&Path>, prefix: &Path) -> Result<Vec<String>> {
    let mut ldd = cmd("ldd", [file]);
    if let Some(library_path) = library_path {
        ldd.env("LD_LIBRARY_PATH", library_path);
    }
    let ldd = crate::process::output(&mut ldd)?;
    // `libhdf5.so.310 => /path/libhdf5.so.310 (0x...)`: the path.
    let loaded: Vec<String> = ldd
        .lines()
        .filter(|line| line.contains("libhdf5"))
        .map(|line| line.split_whitespace().nth(2).unwrap_or(line).to_string())
        .collect();
    if loaded.is_empty() || !loaded.iter().all(|path| Path::new(path).starts_with(prefix)) {
        fail!("{} loads {loaded:?}, not the HDF5 in {}", file.display(), prefix.display());
    }
    Ok(loaded)
}

/// The filters of c_tests/hdf5_filter_paths.c that HDF5 implements itself, not ncfilters.
const HDF5_OWN_FILTERS: [&str; 2] = ["deflate", "szip"];

/// c_tests/hdf5_filter_paths.c through the `flavour` build and this HDF5: incompressible chunks
/// read back unchanged, damaged ones fail to read. On ncfilters (no plugin path) every case must
/// pass and every damaged chunk's failure must be explained on stderr by ncfilters itself, as
/// HDF5 2.x drops what a filter pushes onto its error stack. Stock runs with its C plugins and is
/// only reported. Returns how many cases passed.
pub fn test_filter_paths(h: &Harness, flavour: &str, hdf5: &Hdf5Release) -> Result<usize> {
    let build = h.build_dir(flavour);
    let prefix = hdf5.prefix(h);
    let dir = h.work.join(format!("filter-paths-{flavour}"));
    harness::remove_dir_all_if_exists(&dir)?;
    harness::create_dir_all(&dir)?;
    let program = dir.join("hdf5_filter_paths");
    let mut compile = cmd("cc", ["-std=c99", "-O1", "-Wall", "-Werror"]);
    compile
        .arg(format!("-I{}", build.join("include").display()))
        .arg(format!("-I{}", h.work.join(format!("src-{flavour}/include")).display()))
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(h.repo.join("c_tests/hdf5_filter_paths.c"))
        .arg(format!("-L{}", h.lib_dir(flavour).display()))
        .arg(format!("-Wl,-rpath,{}", h.lib_dir(flavour).display()))
        .arg(format!("-L{}", prefix.join("lib").display()))
        .arg(format!("-Wl,-rpath,{}", prefix.join("lib").display()))
        .args(["-lnetcdf", "-lhdf5", "-o"])
        .arg(&program);
    run(&mut compile)?;
    let mut command = cmd(&program, [&dir]);
    command.env_remove("HDF5_PLUGIN_PATH").env_remove("NCFILTERS_QUIET");
    let is_stock = flavour.starts_with("stock");
    if is_stock {
        command.env("HDF5_PLUGIN_PATH", build.join("plugins"));
    }
    let out = command.output().map_err(|e| harness::Failure(format!("cannot run {}: {e}", program.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{flavour} on HDF5 {}:", hdf5.version);
    for line in stdout.lines() {
        println!("  {line}");
    }
    let passed = stdout.lines().filter(|line| line.starts_with("PASS")).count();
    if is_stock {
        return Ok(passed);
    }
    if !out.status.success() {
        fail!("c_tests/hdf5_filter_paths.c failed on {flavour} ({}):\n{stderr}", out.status);
    }
    // Each damaged read's stderr, from its `-- reading` marker to the next.
    for segment in stderr.split("-- reading the damaged ").skip(1) {
        let filter = segment.split_whitespace().next().unwrap_or("?");
        match segment.lines().find(|line| line.starts_with("ncfilters:")) {
            Some(message) => println!("  {filter}: {message}"),
            None if HDF5_OWN_FILTERS.contains(&filter) => {
                println!("  {filter}: HDF5's own filter, whose error stays on HDF5's stack")
            }
            None => fail!("reading the damaged {filter} chunk on {flavour} printed no ncfilters message:\n{segment}"),
        }
    }
    Ok(passed)
}

/// The footer HDF5 2.2's plugin loader reads at the end of a signed plugin library
/// (`H5PLsig.h`): algorithm, signature length (little-endian), magic, format version.
const SIGNATURE_MAGIC: [u8; 8] = [0x89, b'H', b'P', b'S', b'\r', b'\n', 0x1A, b'\n'];
const SIGNATURE_SHA256_RSA_PKCS1: u8 = 0x01;
const SIGNATURE_FORMAT_VERSION: u8 = 1;

/// ncfilters' zstd plugin library in a build tree (cmake/ncfilters_plugins.cmake names it).
const ZSTD_PLUGIN: &str = "plugins/lib__nch5zstd.so";

/// Appends an RSA signature of `library` by `private_key` in the format of HDF5's `h5sign -p
/// LIBRARY -k KEY` (HDF5 2.2's tool; its vendored copy in the crate has no tools), made with the
/// openssl command.
fn sign_plugin(library: &Path, private_key: &Path) -> Result {
    let signature_file = library.with_extension("signature");
    let mut sign = cmd("openssl", ["dgst", "-sha256", "-sign"]);
    sign.arg(private_key).arg("-out").arg(&signature_file).arg(library);
    run(&mut sign)?;
    let signature = std::fs::read(&signature_file)
        .map_err(|e| harness::Failure(format!("cannot read {}: {e}", signature_file.display())))?;
    let mut signed =
        std::fs::read(library).map_err(|e| harness::Failure(format!("cannot read {}: {e}", library.display())))?;
    signed.extend_from_slice(&signature);
    signed.push(SIGNATURE_SHA256_RSA_PKCS1);
    let length = u32::try_from(signature.len()).map_err(|_| harness::Failure("signature too long".into()))?;
    signed.extend_from_slice(&length.to_le_bytes());
    signed.extend_from_slice(&SIGNATURE_MAGIC);
    signed.push(SIGNATURE_FORMAT_VERSION);
    std::fs::write(library, signed).map_err(|e| harness::Failure(format!("cannot write {}: {e}", library.display())))
}

/// Under HDF5 2.2.0 built to require signed plugins, with ncfilters' 2.2.0 build of `flavour`:
/// netcdf-c's standard filters keep working with no plugin path and no keystore, as they are
/// built in; HDF5 alone refuses ncfilters' zstd plugin library unsigned, and loads it once signed
/// with a key of the keystore (`HDF5_PLUGIN_KEYSTORE`).
pub fn test_signed_plugins(h: &Harness, flavour: &str) -> Result {
    let signing = ensure_built(h, &HDF5_2_2_0_SIGNING)?;
    let library_path = signing.join("lib");
    let dir = h.work.join(format!("signed-plugins-{flavour}"));
    harness::remove_dir_all_if_exists(&dir)?;
    harness::create_dir_all(&dir.join("plugins"))?;
    harness::create_dir_all(&dir.join("keystore"))?;

    let filter_paths = h.work.join(format!("filter-paths-{flavour}/hdf5_filter_paths"));
    require_hdf5_from(&filter_paths, Some(&library_path), &signing)?;
    let mut built_in = cmd(&filter_paths, [&dir]);
    built_in.env_remove("HDF5_PLUGIN_PATH").env_remove("HDF5_PLUGIN_KEYSTORE").env("LD_LIBRARY_PATH", &library_path);
    let out = crate::process::output(&mut built_in)?;
    println!(
        "PASS {flavour} on HDF5 {}: the built-in filters, no plugin path or keystore: {} of {} cases",
        HDF5_2_2_0_SIGNING.label,
        out.lines().filter(|line| line.starts_with("PASS")).count(),
        out.lines().filter(|line| line.starts_with("PASS") || line.starts_with("FAIL")).count()
    );

    let reader = dir.join("hdf5_plugin_read");
    let mut compile = cmd("cc", ["-std=c99", "-O1", "-Wall", "-Werror"]);
    compile
        .arg(format!("-I{}", signing.join("include").display()))
        .arg(h.repo.join("c_tests/hdf5_plugin_read.c"))
        .arg(format!("-L{}", library_path.display()))
        .arg(format!("-Wl,-rpath,{}", library_path.display()))
        .args(["-lhdf5", "-o"])
        .arg(&reader);
    run(&mut compile)?;
    let key = dir.join("private.pem");
    run(cmd("openssl", ["genpkey", "-quiet", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out"])
        .arg(&key))?;
    run(cmd("openssl", ["pkey", "-pubout", "-in"]).arg(&key).arg("-out").arg(dir.join("keystore/ncfilters-test.pem")))?;
    let plugin = h.build_dir(flavour).join(ZSTD_PLUGIN);
    let signed = dir.join("plugins").join(plugin.file_name().unwrap_or_default());
    run(cmd("cp", ["--"]).arg(&plugin).arg(&signed))?;
    sign_plugin(&signed, &key)?;

    let data = dir.join("compressible.nc");
    for (plugins, should_read) in [(plugin.parent().unwrap_or(&dir), false), (&dir.join("plugins"), true)] {
        let mut read = cmd(&reader, [data.as_os_str(), "zstd".as_ref()]);
        read.env("HDF5_PLUGIN_PATH", plugins).env("HDF5_PLUGIN_KEYSTORE", dir.join("keystore"));
        let out = read.output().map_err(|e| harness::Failure(format!("cannot run {}: {e}", reader.display())))?;
        let what = if should_read { "signed" } else { "unsigned" };
        // Refused for its signature, and not for anything else.
        let refused_unsigned = String::from_utf8_lossy(&out.stderr).contains("plugin signature verification failed");
        if out.status.success() != should_read || refused_unsigned == should_read {
            fail!(
                "HDF5 {} with the {what} zstd plugin: {}{}",
                HDF5_2_2_0_SIGNING.label,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let verdict = if should_read { "loads" } else { "refuses" };
        println!("PASS HDF5 {} {verdict} ncfilters' {what} zstd plugin", HDF5_2_2_0_SIGNING.label);
    }
    Ok(())
}
