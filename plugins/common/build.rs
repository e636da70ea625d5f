// SPDX-License-Identifier: BSD-3-Clause
//! Compiles the forwarders to HDF5 and netcdf-c's public API (src/shim.c).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    // Its test programs on Mach-O: the shim's weak references to HDF5 and netcdf-c are looked up
    // when they run (NULL where nothing provides them), as on ELF.
    if std::env::var("CARGO_CFG_TARGET_VENDOR").as_deref() == Ok("apple") {
        println!("cargo:rustc-link-arg=-Wl,-undefined,dynamic_lookup");
    }
    cc::Build::new()
        .file("src/shim.c")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true)
        .compile("ncfilters_plugin_shim");
}
