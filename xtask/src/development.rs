// SPDX-License-Identifier: BSD-3-Clause
//! The next netcdf-c release before it ships: the snapshot of netcdf-c's main branch
//! (`release::DEVELOPMENT_SNAPSHOT`, which calls itself 4.10.2). Without `NCFILTERS_NETCDF_LIKE`
//! the module refuses it, naming the option; with `-DNCFILTERS_NETCDF_LIKE=4.10.1` it builds once
//! the layout check passes, and the whole suite passes on it as on stock.

use crate::harness::{log, Harness, Result};
use crate::netcdf::{build_netcdf, configure_must_stop, run_suite_pair};
use crate::release::DEVELOPMENT_SNAPSHOT;

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
    let source = h.work.join(format!("netcdf-c-{}", h.version()));
    let line = configure_must_stop(h, &source, "refused", "-DNCFILTERS_NETCDF_LIKE=<release>", &[])?;
    println!("configure refused it, naming the option: {line}");
    Ok(())
}
