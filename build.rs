//! Compiles the weak-reference shim to netcdf-c internals (src/netcdf_sys/shim.c).
fn main() {
    println!("cargo:rerun-if-changed=src/netcdf_sys/shim.c");
    // The CMake option NCFILTERS_CODEC_DIALECT reaches the crate as this (see codec_json.rs).
    println!("cargo:rerun-if-env-changed=NCFILTERS_DEFAULT_CODEC_DIALECT");
    // A parallel netcdf-c's MPI_Comm/MPI_Info handles: 8 (OpenMPI: pointers) or 4 (MPICH: ints),
    // measured by cmake/ncfilters.cmake (see netcdf_sys::nc4::MpiHandle).
    println!("cargo:rerun-if-env-changed=NCFILTERS_MPI_HANDLE_SIZE");
    match std::env::var("NCFILTERS_MPI_HANDLE_SIZE").as_deref() {
        Ok("4") => println!("cargo:rustc-cfg=ncfilters_mpi_int_handles"),
        Ok("" | "8") | Err(_) => {}
        Ok(other) => panic!("NCFILTERS_MPI_HANDLE_SIZE={other}: ncfilters mirrors MPI handles of 4 or 8 bytes"),
    }
    cc::Build::new()
        .file("src/netcdf_sys/shim.c")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true)
        .compile("ncfilters_shim");
}
