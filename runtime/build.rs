// SPDX-License-Identifier: BSD-3-Clause
//! Whether zstd runs on the system's libzstd. The release's facts are ncfilters-logic's constants.

fn main() {
    // zstd-sys links the system's libzstd (set by cmake/ncfilters.cmake for NCFILTERS_SYSTEM_LIBS
    // and NCFILTERS_SYSTEM_ZSTD), which may lack the thread-pool functions (zstd_context.rs).
    // Feature system-zstd says so where zstd-sys always links it (Debian's crates).
    println!("cargo:rerun-if-env-changed=ZSTD_SYS_USE_PKG_CONFIG");
    println!("cargo:rustc-check-cfg=cfg(ncfilters_system_zstd)");
    let pkg_config = std::env::var_os("ZSTD_SYS_USE_PKG_CONFIG").is_some_and(|value| !value.is_empty());
    if pkg_config || std::env::var_os("CARGO_FEATURE_SYSTEM_ZSTD").is_some() {
        println!("cargo:rustc-cfg=ncfilters_system_zstd");
    }
}
