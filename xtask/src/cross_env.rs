// SPDX-License-Identifier: BSD-3-Clause
//! cargo's environment for building with a C cross compiler: what the Linux targets (`cross`),
//! Miri's s390x C and Windows (`windows`) share, below all three.

/// The environment that has cargo compile the crates' C (`cc`'s `CC_<triple>`, `AR_<triple>`) and
/// link for `triple` with the cross compiler of GNU triplet `gnu`.
pub fn cross_compiler_env(triple: &str, gnu: &str) -> [(String, String); 3] {
    let env_triple = triple.replace('-', "_");
    [
        (format!("CC_{env_triple}"), format!("{gnu}-gcc")),
        (format!("AR_{env_triple}"), format!("{gnu}-ar")),
        (cargo_target_variable(triple, "LINKER"), format!("{gnu}-gcc")),
    ]
}

/// cargo's per-target setting `key` as an environment variable: `CARGO_TARGET_<TRIPLE>_<KEY>`.
pub fn cargo_target_variable(triple: &str, key: &str) -> String {
    format!("CARGO_TARGET_{}_{key}", triple.replace('-', "_").to_uppercase())
}
