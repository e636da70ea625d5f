//! `install`: a third netcdf-c build, configured as a packager would (no tests, a prefix under
//! /tmp, plugins installed, and *without* libzstd found, as on a machine lacking libzstd-dev),
//! installed with `cmake --install` by a user who is not root and again with `DESTDIR`; then
//! tests/install/ (pytest) checks the installed tree, its metadata, the `ncfilters` command and
//! Debian's own netcdf-bin programs running on the installed libnetcdf.

use crate::harness::{create_dir_all, fail, log, read_to_string, remove_dir_all_if_exists, Harness, Result};
use crate::netcdf::build_netcdf;
use crate::process::{cmd, output, run, succeeds_into_log};
use crate::text::{last_lines, print_tail};
use std::path::Path;
use std::process::Command;

/// Where the install goes: a prefix under /tmp, as the issue asks, owned by the installing user.
pub const PREFIX: &str = "/tmp/ncfilters-install/prefix";
/// netcdf-c 4.9.0's plugin install directory (`-DPLUGIN_INSTALL_DIR=<directory>`).
pub const PLUGIN_DIR: &str = "/tmp/ncfilters-install/prefix/lib/hdf5/plugin";
/// The user who installs when the harness runs as root.
const UNPRIVILEGED_USER: (&str, &str) = ("nobody", "nogroup");

/// The install tree's configuration: a library and its programs, no tests, and libzstd hidden
/// from netcdf-c's configure (which then writes `NC_HAS_ZSTD 0`; ncfilters must install 1).
pub const INSTALL_TREE_FLAGS: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DENABLE_NETCDF_4=ON",
    "-DENABLE_HDF5=ON",
    "-DENABLE_NCZARR=ON",
    "-DENABLE_PLUGINS=ON",
    "-DENABLE_NCZARR_FILTERS=ON",
    "-DENABLE_TESTS=OFF",
    "-DENABLE_EXAMPLES=OFF",
    "-DENABLE_DAP=OFF",
    "-DENABLE_BYTERANGE=OFF",
    "-DENABLE_NCZARR_S3=OFF",
    "-DENABLE_HDF4=OFF",
    "-DENABLE_PNETCDF=OFF",
    "-DENABLE_PARALLEL4=OFF",
    "-DENABLE_DOXYGEN=OFF",
    "-DCMAKE_DISABLE_FIND_PACKAGE_Zip=TRUE",
    "-DCMAKE_DISABLE_FIND_PACKAGE_Zstd=TRUE",
    "-DCMAKE_INSTALL_PREFIX=/tmp/ncfilters-install/prefix",
    "-DPLUGIN_INSTALL_DIR=/tmp/ncfilters-install/prefix/lib/hdf5/plugin",
];

pub fn test_install(h: &Harness) -> Result {
    crate::setup::setup(h)?;
    build_netcdf(h, "install")?;
    let build = h.build_dir("install");
    let root = Path::new(PREFIX).parent().expect("the prefix has a parent");
    remove_dir_all_if_exists(root)?;
    create_dir_all(Path::new(PREFIX))?;
    let destdir = h.work.join("install-destdir");
    remove_dir_all_if_exists(&destdir)?;

    log(format!("cmake --install into {PREFIX}, as a user who is not root"));
    let mut install = as_unprivileged_user(&[root, &build])?;
    install.arg("cmake").arg("--install").arg(&build);
    install_into_log(h, &mut install, "install-prefix.log")?;

    log(format!("cmake --install with DESTDIR={}", destdir.display()));
    let mut staged = cmd("cmake", ["--install"]);
    staged.arg(&build).env("DESTDIR", &destdir);
    install_into_log(h, &mut staged, "install-destdir.log")?;

    crate::interop::python_env(h)?;
    log("the installed tree, its metadata, the ncfilters command and Debian's netcdf-bin on it (pytest)");
    let log_file = h.work_file("install-tests.log");
    let mut pytest = cmd(h.venv().join("bin/pytest"), ["-q", "-p", "no:cacheprovider"]);
    pytest
        .arg(format!("--basetemp={}", h.work.join("pytest-install").display()))
        .arg(".")
        .current_dir(h.repo.join("tests/install"))
        .env_remove("HDF5_PLUGIN_PATH")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("NCFILTERS_CODEC_DIALECT")
        .env("NCFILTERS_PREFIX", PREFIX)
        .env("NCFILTERS_PLUGIN_DIR", PLUGIN_DIR)
        .env("NCFILTERS_DESTDIR", &destdir)
        .env("NCFILTERS_INSTALL_BUILD", &build)
        .env("NCFILTERS_REPO", &h.repo);
    if let Some(user) = unprivileged_user_needed()? {
        pytest.env("NCFILTERS_UNPRIVILEGED_USER", user);
    }
    if !succeeds_into_log(&mut pytest, &log_file, false)? {
        print_tail(&log_file, 60);
        fail!("install tests failed");
    }
    for line in last_lines(&read_to_string(&log_file)?, 1) {
        println!("{line}");
    }
    Ok(())
}

fn install_into_log(h: &Harness, install: &mut Command, log_name: &str) -> Result {
    let log_file = h.work_file(log_name);
    if !succeeds_into_log(install, &log_file, false)? {
        print_tail(&log_file, 40);
        fail!("cmake --install failed (see {})", log_file.display());
    }
    Ok(())
}

/// When the harness runs as root: the user to install as.
fn unprivileged_user_needed() -> Result<Option<&'static str>> {
    Ok((output(&mut cmd("id", ["-u"]))?.trim() == "0").then_some(UNPRIVILEGED_USER.0))
}

/// A command prefix that runs as a user who is not root, owning `dirs` as a user owns their
/// prefix and build tree (`cmake --install` writes install_manifest.txt into the build tree).
fn as_unprivileged_user(dirs: &[&Path]) -> Result<Command> {
    let Some(user) = unprivileged_user_needed()? else {
        return Ok(cmd("env", ["--"]));
    };
    let owner = format!("{user}:{}", UNPRIVILEGED_USER.1);
    for dir in dirs {
        let mut chown = cmd("chown", ["-R", owner.as_str()]);
        chown.arg(dir);
        run(&mut chown)?;
    }
    Ok(cmd(
        "setpriv",
        [
            format!("--reuid={user}"),
            format!("--regid={}", UNPRIVILEGED_USER.1),
            "--clear-groups".to_string(),
            "--".to_string(),
        ],
    ))
}
