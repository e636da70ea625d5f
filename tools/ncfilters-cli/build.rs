// SPDX-License-Identifier: BSD-3-Clause
//! Links the `ncfilters` binary against an installed libnetcdf built with ncfilters.
//!
//! - `NCFILTERS_LIBNETCDF_DIR=<dir>`: the directory of `libnetcdf.so`; adds it to the link search
//!   path and links `-lnetcdf`. Without it nothing is linked: `cargo check`, `clippy` and the library's
//!   tests still work, only linking the binary fails (undefined `ncfilters_report`, …).
//! - `NCFILTERS_CLI_RPATH=<value>`: adds `-Wl,-rpath,<value>` to the binary (the CMake module passes
//!   `$ORIGIN/../lib` for installs, `@loader_path/../lib` on macOS; the linker receives it literally,
//!   no shell involved).

use std::env;

fn main() {
    println!("cargo:rerun-if-env-changed=NCFILTERS_LIBNETCDF_DIR");
    println!("cargo:rerun-if-env-changed=NCFILTERS_CLI_RPATH");
    if let Some(dir) = env::var_os("NCFILTERS_LIBNETCDF_DIR").filter(|dir| !dir.is_empty()) {
        let dir = dir.to_str().expect("NCFILTERS_LIBNETCDF_DIR must be valid UTF-8");
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=netcdf");
    }
    if let Some(rpath) = env::var_os("NCFILTERS_CLI_RPATH").filter(|rpath| !rpath.is_empty()) {
        let rpath = rpath.to_str().expect("NCFILTERS_CLI_RPATH must be valid UTF-8");
        println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{rpath}");
    }
}
