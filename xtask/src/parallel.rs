// SPDX-License-Identifier: BSD-3-Clause
//! `parallel`: the MPI-parallel build pair (netcdf-c with ENABLE_PARALLEL4 against Debian's OpenMPI
//! HDF5, stock and with ncfilters): netcdf-c's whole suite on both (run_par_test.sh
//! included), the ABI check of the parallel layouts, and ncfilters' own MPI filter test
//! (c_tests/mpi_filters.c, read back serially and with h5py).

use crate::build_flags::MPI_ENV;
use crate::harness::{fail, log, Harness, Result};
use crate::netcdf::{build_netcdf, run_suite_pair};
use crate::process::{cmd, output, run, succeeds_into_log};
use crate::text::print_tail;

pub fn test_parallel(h: &Harness) -> Result {
    crate::setup::setup(h)?;
    build_netcdf(h, "stock-parallel")?;
    build_netcdf(h, "ncfilters-parallel")?;
    // Stock fails the release's known failures; ncfilters those of them outside its code, and
    // passes the others.
    run_suite_pair(
        h,
        "stock-parallel",
        "ncfilters-parallel",
        h.release.parallel_ctest_expected,
        h.release.parallel_stock_failures,
    )?;
    crate::rust_checks::test_abi_parallel(h, &h.work.join("src-stock-parallel"), &h.build_dir("stock-parallel"))?;
    crate::rust_checks::test_parallel_rules(h)?;
    mpi_filter_test(h)
}

/// c_tests/mpi_filters.c on 4 ranks against the ncfilters parallel build, then the file read
/// back serially (the same program, one rank) and with h5py + hdf5plugin.
fn mpi_filter_test(h: &Harness) -> Result {
    let build = h.build_dir("ncfilters-parallel");
    let dir = h.work.join("mpi-filters");
    crate::harness::remove_dir_all_if_exists(&dir)?;
    crate::harness::create_dir_all(&dir)?;
    log("ncfilters' MPI filter test: 4 ranks write shuffle+zstd, bzip2 and deflate+fletcher32 variables");
    let program = dir.join("mpi_filters");
    let mut compile = cmd("mpicc", ["-std=c99", "-O1", "-Wall", "-Werror"]);
    compile
        .arg(format!("-I{}", h.repo.join("include").display()))
        .arg(format!("-I{}", build.join("include").display()))
        .arg(format!("-I{}", h.work.join("src-ncfilters-parallel/include").display()))
        .arg(h.repo.join("c_tests/mpi_filters.c"))
        .arg("-o")
        .arg(&program)
        .arg(format!("-L{}", h.lib_dir("ncfilters-parallel").display()))
        .arg("-lnetcdf")
        .arg(format!("-Wl,-rpath,{}", h.lib_dir("ncfilters-parallel").display()));
    run(&mut compile)?;
    let file = dir.join("mpi_filters.nc");
    let log_file = h.work_file("mpi-filters.log");
    // A library every rank's plugin discovery skips: one report for the job, not one per rank.
    let plugins = dir.join("plugins");
    crate::harness::create_dir_all(&plugins)?;
    crate::harness::write_file(&plugins.join("libbroken.so"), "not a shared library\n")?;
    let mut write = cmd("mpiexec", ["-n", "4"]);
    write.arg(&program).arg("write").arg(&file).envs(MPI_ENV).env("HDF5_PLUGIN_PATH", &plugins);
    let mut read = cmd(&program, ["read"]);
    read.arg(&file).env_remove("HDF5_PLUGIN_PATH");
    if !succeeds_into_log(&mut write, &log_file, false)? || !succeeds_into_log(&mut read, &log_file, true)? {
        print_tail(&log_file, 40);
        fail!("the MPI filter test failed");
    }
    let skips =
        crate::text::count_matching_lines(&crate::harness::read_to_string(&log_file)?, &["libbroken.so skipped"]);
    if skips != 1 {
        print_tail(&log_file, 40);
        fail!("4 ranks reported the skipped plugin {skips} times, not once (rank 0)");
    }
    crate::interop::python_env(h)?;
    let mut h5py = cmd(h.venv().join("bin/python"), [h.repo.join("c_tests/mpi_filters_check.py")]);
    h5py.arg(&file).env_remove("HDF5_PLUGIN_PATH");
    let checked = output(&mut h5py)?;
    if !checked.contains("h5py: all values identical") {
        fail!("h5py did not confirm the MPI-written values:\n{checked}");
    }
    println!("PASS mpi_filters: 4 ranks wrote, one rank and h5py read back identical values; one skip report");
    Ok(())
}
