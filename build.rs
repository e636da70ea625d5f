// SPDX-License-Identifier: BSD-3-Clause
//! Passes on the netcdf-c release ncfilters is built into (its struct layouts and behaviour, chosen
//! by ncfilters-logic's build.rs) and compiles the weak-reference shim to netcdf-c internals (src/netcdf_internals/shim.c).

fn main() {
    println!("cargo:rerun-if-changed=src/netcdf_internals/shim.c");
    // A Mach-O image names where each undefined symbol comes from at link time; libncfilters'
    // netcdf-c and HDF5 symbols come from the process (libnetcdf), as on ELF: so for the cdylib,
    // and for the test programs, whose weak references stay NULL where nothing provides them.
    if std::env::var("CARGO_CFG_TARGET_VENDOR").as_deref() == Ok("apple") {
        println!("cargo:rustc-link-arg=-Wl,-undefined,dynamic_lookup");
        // Found through the loader's rpath, as libnetcdf is (rustc writes the build path otherwise).
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libncfilters.dylib");
    }
    // The release's cfgs, as ncfilters-logic's build.rs (the one release table) chose them.
    let release =
        |key: &str| std::env::var(format!("DEP_NCFILTERS_RELEASE_{key}")).expect("ncfilters-logic's links metadata");
    println!("cargo:rerun-if-env-changed=NCFILTERS_NETCDF_VERSION");
    for cfg in release("ALL_CFGS").split(',') {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    for cfg in release("CFGS").split(',').filter(|cfg| !cfg.is_empty()) {
        println!("cargo:rustc-cfg={cfg}");
    }

    // A parallel netcdf-c's MPI_Comm/MPI_Info handles: 8 (OpenMPI: pointers) or 4 (MPICH: ints),
    // measured by cmake/ncfilters.cmake (see netcdf_internals::nc4::MpiHandle).
    println!("cargo:rerun-if-env-changed=NCFILTERS_MPI_HANDLE_SIZE");
    println!("cargo:rustc-check-cfg=cfg(ncfilters_mpi_int_handles)");
    match std::env::var("NCFILTERS_MPI_HANDLE_SIZE").as_deref() {
        Ok("4") => println!("cargo:rustc-cfg=ncfilters_mpi_int_handles"),
        Ok("" | "8") | Err(_) => {}
        Ok(other) => panic!("NCFILTERS_MPI_HANDLE_SIZE={other}: ncfilters mirrors MPI handles of 4 or 8 bytes"),
    }
    cc::Build::new()
        .file("src/netcdf_internals/shim.c")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true)
        .compile("ncfilters_shim");
}
