// SPDX-License-Identifier: BSD-3-Clause
//! The release's cfgs, as ncfilters-logic's build.rs (the one release table) chose them, for this
//! crate and, through its `links` metadata (`DEP_NCFILTERS_RELEASE_*`), for the crates above.

fn main() {
    let table = |key: &str| {
        std::env::var(format!("DEP_NCFILTERS_RELEASE_TABLE_{key}")).expect("ncfilters-logic's links metadata")
    };
    println!("cargo:rerun-if-env-changed=NCFILTERS_NETCDF_VERSION");
    let (active, all) = (table("CFGS"), table("ALL_CFGS"));
    for cfg in all.split(',') {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    for cfg in active.split(',').filter(|cfg| !cfg.is_empty()) {
        println!("cargo:rustc-cfg={cfg}");
    }
    println!("cargo:cfgs={active}");
    println!("cargo:all_cfgs={all}");

    // zstd-sys links the system's libzstd (set by cmake/ncfilters.cmake for NCFILTERS_SYSTEM_LIBS
    // and NCFILTERS_SYSTEM_ZSTD), which may lack the thread-pool functions (zstd_context.rs).
    println!("cargo:rerun-if-env-changed=ZSTD_SYS_USE_PKG_CONFIG");
    println!("cargo:rustc-check-cfg=cfg(ncfilters_system_zstd)");
    if std::env::var_os("ZSTD_SYS_USE_PKG_CONFIG").is_some_and(|value| !value.is_empty()) {
        println!("cargo:rustc-cfg=ncfilters_system_zstd");
    }
}
