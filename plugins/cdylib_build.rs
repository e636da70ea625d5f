// SPDX-License-Identifier: BSD-3-Clause
//! The plugin libraries' build script, for Mach-O:
//! - A dylib must say at link time where each undefined symbol comes from (two-level namespace); a
//!   plugin's come from the libhdf5 and libnetcdf of the process that loads it, so they are looked
//!   up when it is loaded, as ELF does by default. So too for its test programs.
//! - Its install name is `@rpath/lib<name>.dylib`, as netcdf-c's own plugins' are, instead of the
//!   path cargo wrote it to (rustc adds `@rpath/` only with `-C rpath`).
use std::path::Path;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_VENDOR").as_deref() == Ok("apple") {
        println!("cargo:rustc-link-arg=-Wl,-undefined,dynamic_lookup");
        let manifest = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("Cargo.toml");
        println!("cargo:rerun-if-changed={}", manifest.display());
        let text = std::fs::read_to_string(&manifest).expect("the plugin's Cargo.toml reads");
        let library = library_name(&text).expect("the plugin's Cargo.toml names its [lib]");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/lib{library}.dylib");
    }
}

/// The `name` of the manifest's `[lib]` section.
fn library_name(manifest: &str) -> Option<&str> {
    let section = manifest.split("\n[lib]\n").nth(1)?;
    let section = section.split("\n[").next()?;
    section.lines().find_map(|line| line.strip_prefix("name = \"")?.strip_suffix('"'))
}
