// SPDX-License-Identifier: BSD-3-Clause
//! `install`: a third netcdf-c build, configured as a packager would (no tests, a prefix under
//! /tmp, plugins installed, and *without* libzstd found, as on a machine lacking libzstd-dev),
//! installed with `cmake --install` by a user who is not root and again with `DESTDIR`; then
//! tests/install/ (pytest) checks the installed tree, its metadata, the `ncfilters` command and
//! the distribution's netcdf-bin programs running on the installed libnetcdf (Debian 12's for
//! 4.9.0; the stock build's for the releases with SONAME 22, see `distribution_programs`).

use crate::build_flags::{PLUGIN_DIR, PREFIX};
use crate::harness::{create_dir_all, fail, log, read_to_string, remove_dir_all_if_exists, Harness, Result};
use crate::netcdf::build_netcdf;
use crate::process::{cmd, output, run, succeeds_into_log};
use crate::release::DistributionPrograms;
use crate::text::{last_lines, print_tail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian 12's libnetcdf19 (netcdf-c 4.9.0), which its netcdf-bin programs are linked against.
const DEBIAN_LIBNETCDF: &str = "/usr/lib/x86_64-linux-gnu/libnetcdf.so.19";
/// The user who installs when the harness runs as root.
const UNPRIVILEGED_USER: (&str, &str) = ("nobody", "nogroup");

pub fn test_install(h: &Harness) -> Result {
    crate::setup::setup(h)?;
    let (distribution_bin, distribution_libnetcdf) = distribution_programs(h)?;
    let staged = staged_for_unprivileged_user(h)?;
    let tree = staged.as_ref().unwrap_or(h);
    build_netcdf(tree, "install")?;
    let build = tree.build_dir("install");
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
        .env("NCFILTERS_REPO", &h.repo)
        .env("NCFILTERS_NETCDF_VERSION", h.version())
        .env("NCFILTERS_SONAME", h.release.soname)
        .env("NCFILTERS_FILTER_META_MACROS", h.release.filter_meta_macros.join(" "))
        .env("NCFILTERS_NC_CONFIG_PLUGINDIR", if h.release.nc_config_plugindir { "1" } else { "0" })
        .env("NCFILTERS_OWN_PLUGIN_PATH_API", if h.release.own_plugin_path_api { "1" } else { "0" })
        .env("NCFILTERS_DISTRIBUTION_BIN", &distribution_bin)
        .env("NCFILTERS_DISTRIBUTION_LIBNETCDF", &distribution_libnetcdf);
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

/// The programs a distribution ships for the release and the libnetcdf they were linked against:
/// Debian 12's netcdf-bin and libnetcdf19 for 4.9.0; for the releases Debian 12 cannot install
/// (Ubuntu 24.04's 4.9.2, Debian 13's 4.9.3, Fedora's 4.10) the stock build's ncdump, nccopy and
/// ncgen, linked against its stock libnetcdf with a RUNPATH, which LD_LIBRARY_PATH overrides as
/// it does a system path.
fn distribution_programs(h: &Harness) -> Result<(PathBuf, PathBuf)> {
    if h.release.distribution_programs == DistributionPrograms::Debian12 {
        return Ok((PathBuf::from("/usr/bin"), PathBuf::from(DEBIAN_LIBNETCDF)));
    }
    build_netcdf(h, "stock")?;
    let stock = h.build_dir("stock");
    let bin = h.work.join("distribution-bin");
    remove_dir_all_if_exists(&bin)?;
    create_dir_all(&bin)?;
    for program in ["ncdump/ncdump", "ncdump/nccopy", "ncgen/ncgen"] {
        let target = stock.join(program);
        let name = target.file_name().expect("a program has a name");
        std::os::unix::fs::symlink(&target, bin.join(name))
            .map_err(|e| crate::harness::Failure(format!("symlink {}: {e}", target.display())))?;
    }
    Ok((bin, h.lib_dir("stock").join(h.release.soname)))
}

fn install_into_log(h: &Harness, install: &mut Command, log_name: &str) -> Result {
    let log_file = h.work_file(log_name);
    if !succeeds_into_log(install, &log_file, false)? {
        print_tail(&log_file, 40);
        fail!("cmake --install failed (see {})", log_file.display());
    }
    Ok(())
}

/// Where the install build is staged when the unprivileged user cannot read the clone.
const STAGE: &str = "/tmp/ncfilters-install-stage";

/// The install build's trees when the user who installs cannot read the clone (a clone in a
/// home directory of mode 0700): a copy of the repository's working tree (without `target/` and
/// `.git`) and of the release's netcdf-c source under [`STAGE`], readable by everyone, where the
/// install build is configured and built (its cargo target directory with it). None when the
/// user can read the clone, or the harness is not root.
fn staged_for_unprivileged_user(h: &Harness) -> Result<Option<Harness>> {
    let Some(user) = unprivileged_user_needed()? else {
        return Ok(None);
    };
    let mut check = as_user(user);
    check.args(["sh", "-c", "test -r \"$1\" && test -x \"$2\"", "sh"]).arg(h.repo.join("Cargo.toml")).arg(&h.work);
    if crate::process::succeeds_quietly(&mut check)? {
        return Ok(None);
    }
    let stage = Path::new(STAGE).join(h.version());
    log(format!(
        "{user} cannot read {} (a directory above it is private): the install build is staged in {}",
        h.repo.display(),
        stage.display()
    ));
    let (repo, work) = (stage.join("repo"), stage.join("work"));
    remove_dir_all_if_exists(&stage)?;
    create_dir_all(&work)?;
    copy_of_the_tree(&h.repo, &repo)?;
    let source = format!("netcdf-c-{}", h.version());
    run(cmd("cp", ["-a"]).arg(h.work.join(&source)).arg(work.join(&source)))?;
    let mut readable = cmd("chmod", ["-R", "a+rX", STAGE]);
    run(&mut readable)?;
    Ok(Some(h.with_trees(repo, work)))
}

/// Copies ncfilters' tree at `repo` to `copy` (a new directory) without `target/` and `.git`, and
/// records there the source the module reads from git in `repo` (cmake/ncfilters_provenance.cmake),
/// so that a build of the copy names the same ncfilters build as one of `repo`.
pub fn copy_of_the_tree(repo: &Path, copy: &Path) -> Result {
    create_dir_all(copy)?;
    let tar = "set -o pipefail; tar -C \"$1\" --exclude=./target --exclude=./.git -cf - . | tar -C \"$2\" -xf -";
    run(cmd("bash", ["-c", tar, "bash"]).arg(repo).arg(copy))?;
    let mut provenance = cmd("cmake", [format!("-DNCFILTERS_ROOT={}", repo.display())]);
    provenance.arg("-P").arg(repo.join("cmake/ncfilters_provenance.cmake"));
    let source = output(&mut provenance)?;
    let source = source.trim();
    if source.starts_with("git ") {
        crate::harness::write_file(&copy.join(crate::dist::SOURCE_RECORD), &format!("{source}\n"))?;
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
    Ok(as_user(user))
}

/// A command prefix that runs as `user` (of the unprivileged group).
fn as_user(user: &str) -> Command {
    cmd(
        "setpriv",
        [
            format!("--reuid={user}"),
            format!("--regid={}", UNPRIVILEGED_USER.1),
            "--clear-groups".to_string(),
            "--".to_string(),
        ],
    )
}
