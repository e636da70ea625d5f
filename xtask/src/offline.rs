// SPDX-License-Identifier: BSD-3-Clause
//! `offline`: a packager's build of the newest release. netcdf-c 4.10.1 is built with the module of
//! the release tarball (`dist`), as the distribution build on the system's zlib, libbz2 and
//! libzstd (docs/packaging.md), with the network cut (`unshare --net`), HOME an empty directory (as
//! debhelper makes it) and no cargo home but the one the module makes in the build tree; then its
//! whole suite runs, which must pass as stock's does (the release's count, none failed).

use std::path::PathBuf;

use crate::harness::{fail, log, Failure, Harness, Result};
use crate::process::{cmd, run};

/// The flavour, and so the build directory's name, of the build from the tarball.
const FLAVOUR: &str = crate::netcdf::OFFLINE_FLAVOUR;

/// Where the parent tells the child (`offline-build`, in the network namespace) the tarball's tree.
const TREE_VARIABLE: &str = "NCFILTERS_OFFLINE_TREE";
const SOURCE_VARIABLE: &str = "NCFILTERS_OFFLINE_SOURCE";

pub fn test_offline(h: &Harness) -> Result {
    let h = h.for_release(crate::release::newest());
    crate::setup::setup(&h)?;
    let tarball = crate::dist::make_tarball(&h)?;
    let tree = h.work.join("offline");
    crate::harness::remove_dir_all_if_exists(&tree)?;
    crate::harness::create_dir_all(&tree.join("home"))?;
    run(cmd("tar", ["-xJf"]).arg(&tarball).arg("-C").arg(&tree))?;
    let source = tree.join(format!("ncfilters-{}", crate::licences::workspace_version(&h.repo)?));
    // netcdf-c's configure rewrites files of its source tree: a copy of its own.
    run(cmd("cp", ["-a"])
        .arg(h.work.join(format!("netcdf-c-{}", h.version())))
        .arg(tree.join(format!("src-{FLAVOUR}"))))?;
    log(format!("netcdf-c {} with ncfilters from {}, offline", h.version(), tarball.display()));
    let exe = std::env::current_exe().map_err(|e| Failure(format!("cannot find xtask's own program: {e}")))?;
    let mut child = cmd("unshare", ["--net", "--"]);
    child
        .arg(exe)
        .arg("offline-build")
        .env(TREE_VARIABLE, &tree)
        .env(SOURCE_VARIABLE, &source)
        .env("NCFILTERS_NETCDF_VERSION", h.version())
        .env("HOME", tree.join("home"))
        .env("RUSTUP_HOME", crate::harness::rustup_home())
        .env_remove("CARGO_HOME");
    run(&mut child)
}

/// In the network namespace: configure, build and the suite, from the tarball's tree.
pub fn build_offline() -> Result {
    let tree = std::env::var_os(TREE_VARIABLE).map(PathBuf::from);
    let source = std::env::var_os(SOURCE_VARIABLE).map(PathBuf::from);
    let (Some(tree), Some(source)) = (tree, source) else {
        fail!("offline-build is the network-less half of `cargo xtask offline`, not a step of its own");
    };
    let interfaces = crate::harness::read_to_string(std::path::Path::new("/proc/net/dev"))?;
    let reachable: Vec<&str> = interfaces
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name.trim())
        .filter(|n| *n != "lo")
        .collect();
    if !reachable.is_empty() {
        fail!("offline-build has network interfaces {reachable:?}: it must run in a namespace without them");
    }
    let h = Harness::from_env()?.with_trees(source, tree);
    crate::netcdf::build_netcdf(&h, FLAVOUR)?;
    crate::netcdf::check_system_libs(&h, FLAVOUR)?;
    crate::netcdf::run_netcdf_ctest(&h, FLAVOUR)?;
    println!(
        "PASS netcdf-c {} from the ncfilters release tarball, built with no network, an empty HOME and cargo home: \
         its suite passes ({} tests, as stock's)",
        h.version(),
        h.release.ctest_expected
    );
    Ok(())
}
