// SPDX-License-Identifier: BSD-3-Clause
//! The configure flags and environment of the harness's netcdf-c builds besides the test-flag
//! pair and the matrix's configurations: the packager-style install tree (`install`) and the
//! MPI-parallel pair (`parallel`). `netcdf` configures every build from here, below the steps
//! that run them, so no step module and `netcdf` use each other.

use crate::harness::Harness;
use crate::release::BuildSystem;

/// Where the install goes: a prefix under /tmp, as the issue asks, owned by the installing user.
pub const PREFIX: &str = "/tmp/ncfilters-install/prefix";
/// The plugin install directory (4.9.0: `-DPLUGIN_INSTALL_DIR=<directory>`, later releases:
/// `-DNETCDF_WITH_PLUGIN_DIR=<directory>`).
pub const PLUGIN_DIR: &str = "/tmp/ncfilters-install/prefix/lib/hdf5/plugin";

/// The install tree's configuration: the release's test-build flags with tests and examples off,
/// plugins installed into [`PLUGIN_DIR`], a prefix under /tmp, and libzstd and c-blosc hidden
/// from netcdf-c's configure (which then writes `NC_HAS_ZSTD 0`, and from 4.9.3 on
/// `NC_HAS_BLOSC 0`; ncfilters must install 1).
pub fn install_tree_flags(h: &Harness) -> Vec<String> {
    let mut flags: Vec<String> = h
        .release
        .flags
        .iter()
        .filter(|flag| !flag.contains("TESTS") && !flag.contains("TESTING") && !flag.contains("EXAMPLES"))
        .filter(|flag| !flag.contains("PLUGIN_INSTALL"))
        .map(|flag| flag.to_string())
        .collect();
    flags
        .extend(["ENABLE_TESTS", "ENABLE_UNIT_TESTS", "ENABLE_EXAMPLES"].map(|option| h.release.option(option, "OFF")));
    if h.release.build_system == BuildSystem::Enable {
        // 4.9.0 and 4.9.2: -DPLUGIN_INSTALL_DIR=YES|<directory> (the filters document's appendix).
        flags.push(format!("-DPLUGIN_INSTALL_DIR={PLUGIN_DIR}"));
    } else {
        // 4.9.3 on: --plugindir's option pair.
        flags.push("-DNETCDF_PLUGIN_INSTALL=ON".into());
        flags.push(format!("-DNETCDF_WITH_PLUGIN_DIR={PLUGIN_DIR}"));
    }
    flags.push(format!("-DCMAKE_INSTALL_PREFIX={PREFIX}"));
    flags.push("-DCMAKE_DISABLE_FIND_PACKAGE_Zstd=TRUE".into());
    flags.push("-DCMAKE_DISABLE_FIND_PACKAGE_Blosc=TRUE".into());
    flags.push("-DCMAKE_DISABLE_FIND_PACKAGE_Zip=TRUE".into());
    flags.sort();
    flags.dedup();
    flags
}

/// OpenMPI refuses to run as root and to start more ranks than cores (the suite starts 16 on
/// 2 cores) unless told; set for every ctest and mpiexec here, never in netcdf-c's files.
pub const MPI_ENV: [(&str, &str); 3] = [
    ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
    ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
    ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
];

/// Debian's HDF5 built with OpenMPI (libhdf5-openmpi-dev).
const MPI_HDF5_LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu/hdf5/openmpi";
const MPI_HDF5_INCLUDE_DIR: &str = "/usr/include/hdf5/openmpi";
const MPI_HDF5_COMPILER: &str = "/usr/bin/h5pcc.openmpi";

/// The serial builds' flags with parallel I/O on, its tests on, and the MPI HDF5.
pub fn parallel_flags(h: &Harness) -> Vec<String> {
    let mut flags: Vec<String> =
        h.release.flags.iter().map(|flag| flag.replace("PARALLEL4=OFF", "PARALLEL4=ON")).collect();
    flags.push(h.release.option("ENABLE_PARALLEL_TESTS", "ON"));
    if h.release.build_system == BuildSystem::Enable {
        flags.push(format!("-DHDF5_C_LIBRARY={MPI_HDF5_LIB_DIR}/libhdf5.so"));
        flags.push(format!("-DHDF5_HL_LIBRARY={MPI_HDF5_LIB_DIR}/libhdf5_hl.so"));
        flags.push(format!("-DHDF5_INCLUDE_DIR={MPI_HDF5_INCLUDE_DIR}"));
    } else {
        // 4.9.3 on find HDF5 with CMake's FindHDF5, which asks the HDF5 compiler wrapper.
        flags.push("-DHDF5_PREFER_PARALLEL=TRUE".into());
        flags.push(format!("-DHDF5_C_COMPILER_EXECUTABLE={MPI_HDF5_COMPILER}"));
    }
    flags
}
