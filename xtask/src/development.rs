// SPDX-License-Identifier: BSD-3-Clause
//! The next netcdf-c release before it ships: the snapshot of netcdf-c's main branch
//! (`release::DEVELOPMENT_SNAPSHOT`, which calls itself 4.10.2). Without `NCFILTERS_NETCDF_LIKE`
//! the module refuses it, naming the option; with `-DNCFILTERS_NETCDF_LIKE=4.10.1` it builds once
//! the layout check passes, and the whole suite passes on it as on stock.

use crate::harness::{fail, log, read_to_string, remove_dir_all_if_exists, Harness, Result};
use crate::netcdf::{build_netcdf, ncfilters_module_flags, run_suite_pair};
use crate::process::{cmd, succeeds_into_log};
use crate::release::DEVELOPMENT_SNAPSHOT;
use crate::text::print_tail;

pub fn test_development(h: &Harness) -> Result {
    let h = h.for_release(&DEVELOPMENT_SNAPSHOT);
    crate::setup::fetch_netcdf_source(&h)?;
    refused_without_the_option(&h)?;
    build_netcdf(&h, "stock")?;
    build_netcdf(&h, "ncfilters")?;
    run_suite_pair(&h, "stock", "ncfilters", h.release.ctest_expected, &[])
}

/// Configure stops at netcdf-c's project() call, before it writes into the source tree.
fn refused_without_the_option(h: &Harness) -> Result {
    log(format!("netcdf-c {} with ncfilters and no NCFILTERS_NETCDF_LIKE must stop configure", h.version()));
    let build = h.build_dir("refused");
    remove_dir_all_if_exists(&build)?;
    let mut configure = cmd("cmake", ["-S"]);
    configure
        .arg(h.work.join(format!("netcdf-c-{}", h.version())))
        .arg("-B")
        .arg(&build)
        .args(h.release.flags)
        .args(ncfilters_module_flags(h, &h.cargo_target()));
    let log_file = h.work_file("configure-refused.log");
    if succeeds_into_log(&mut configure, &log_file, false)? {
        fail!("configure accepted netcdf-c {} without NCFILTERS_NETCDF_LIKE", h.version());
    }
    let refused = read_to_string(&log_file)?;
    if !refused.contains("-DNCFILTERS_NETCDF_LIKE=<release>") {
        print_tail(&log_file, 20);
        fail!("configure refused netcdf-c {} without naming NCFILTERS_NETCDF_LIKE", h.version());
    }
    println!("configure refused it and named the option");
    remove_dir_all_if_exists(&build)
}
