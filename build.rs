//! Compiles the weak-reference shim to netcdf-c internals (src/netcdf_sys/shim.c).
fn main() {
    println!("cargo:rerun-if-changed=src/netcdf_sys/shim.c");
    // The CMake option NCFILTERS_CODEC_DIALECT reaches the crate as this (see codec_json.rs).
    println!("cargo:rerun-if-env-changed=NCFILTERS_DEFAULT_CODEC_DIALECT");
    cc::Build::new()
        .file("src/netcdf_sys/shim.c")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true)
        .compile("ncfilters_shim");
}
