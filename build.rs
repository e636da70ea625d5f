//! Compiles the weak-reference shim to netcdf-c internals (src/netcdf_sys/shim.c).
fn main() {
    println!("cargo:rerun-if-changed=src/netcdf_sys/shim.c");
    cc::Build::new()
        .file("src/netcdf_sys/shim.c")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true)
        .compile("ncfilters_shim");
}
