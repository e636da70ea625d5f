// SPDX-License-Identifier: BSD-3-Clause
//! The plugin libraries' build script. A Mach-O dylib must say at link time where each undefined
//! symbol comes from (two-level namespace); a plugin's come from the libhdf5 and libnetcdf of the
//! process that loads it, so they are looked up when it is loaded, as ELF does by default. So
//! too for its test programs.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_VENDOR").as_deref() == Ok("apple") {
        println!("cargo:rustc-link-arg=-Wl,-undefined,dynamic_lookup");
    }
}
