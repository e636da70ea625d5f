// SPDX-License-Identifier: BSD-3-Clause
//! Building from Debian's own crates (`/usr/share/cargo/registry`), as Debian's Rust team does:
//! the packages that hold them and the cargo configuration that points cargo at them. Used by
//! `debian13` (the shipped crates and their tests) and `deb` (Debian's netcdf package).

/// The `librust-*-dev` packages the shipped crates build from, named by the features they need,
/// as a package's Build-Depends names them.
pub const SHIPPED: [&str; 11] = [
    "librust-bzip2-dev",
    "librust-cc-dev",
    "librust-clap+derive-dev",
    "librust-clap+string-dev",
    "librust-flate2+zlib-dev",
    "librust-libc-dev",
    "librust-libloading-dev",
    "librust-libz-sys-dev",
    "librust-serde+derive-dev",
    "librust-serde-json+preserve-order-dev",
    "librust-zstd-dev",
];

/// ... and those their tests need besides.
pub const TESTS: [&str; 4] =
    ["librust-proc-macro2-dev", "librust-proptest-dev", "librust-syn+full-dev", "librust-syn+visit-dev"];

/// The system libraries the distribution build links, and pkg-config, which finds libzstd.
pub const SYSTEM_LIBRARIES: [&str; 4] = ["libbz2-dev", "libzstd-dev", "zlib1g-dev", "pkg-config"];

/// The cargo configuration of a build from Debian's crates, as dh-cargo writes it: crates.io
/// replaced by Debian's registry, Debian's rustc, no network.
pub const CARGO_CONFIG: &str = "[source.crates-io]\nreplace-with = \"debian\"\n\
    [source.debian]\ndirectory = \"/usr/share/cargo/registry\"\n\
    [build]\nrustc = \"/usr/bin/rustc\"\n[net]\noffline = true\n";

/// Shell commands that make the ncfilters tree `dir` build from Debian's crates: no `vendor/`, its
/// cargo configuration or `Cargo.lock`, and packaging/debian-crates.patch applied.
pub fn prepare_tree(dir: &str) -> String {
    format!(
        "rm -rf {dir}/vendor {dir}/.cargo {dir}/Cargo.lock; patch -d {dir} -p1 < {dir}/{}",
        crate::licences::DEBIAN_CRATES_PATCH
    )
}

/// Shell commands that make `cargo_home` a cargo home with [`CARGO_CONFIG`].
pub fn write_cargo_home(cargo_home: &str) -> String {
    format!("mkdir -p {cargo_home}; printf '{CARGO_CONFIG}' > {cargo_home}/config.toml")
}
