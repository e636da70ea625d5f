// SPDX-License-Identifier: BSD-3-Clause
//! Compiles the forwarders to HDF5 and netcdf-c's public API (src/shim.c).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    cc::Build::new()
        .file("src/shim.c")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true)
        .compile("ncfilters_plugin_shim");
}
