// SPDX-License-Identifier: BSD-3-Clause
//! `interop`: tests/interop/ (pytest) against the ncfilters build, in a virtualenv with pinned
//! packages.

use std::process::Command;

use crate::harness::{fail, log, read_to_string, write_file, Harness, Result};
use crate::process::{cmd, is_executable, run, succeeds_into_log};
use crate::text::{last_lines, print_tail};

/// Python packages of the interoperability tests, pinned (zarr-python 2 writes Zarr v2 natively).
const PYTHON_PACKAGES: [&str; 6] =
    ["zarr==2.18.7", "numcodecs==0.15.1", "numpy==2.2.6", "pytest==8.3.5", "h5py==3.16.0", "hdf5plugin==7.1.0"];

/// The virtualenv with PYTHON_PACKAGES. A stamp file records the pinned list installed, so a
/// changed list is installed again.
pub fn python_env(h: &Harness) -> Result {
    let venv = h.venv();
    let stamp = venv.join("ncfilters-packages");
    let wanted = PYTHON_PACKAGES.join(" ");
    let installed = read_to_string(&stamp).unwrap_or_default();
    if is_executable(&venv.join("bin/pytest")) && installed.trim_end_matches('\n') == wanted {
        return Ok(());
    }
    log(format!("Python environment for the interoperability tests ({})", venv.display()));
    if !is_executable(&venv.join("bin/pip")) {
        let mut create = cmd("python3", ["-m", "venv"]);
        create.arg(&venv);
        run(&mut create)?;
    }
    let mut install = cmd(venv.join("bin/pip"), ["install", "-q", "--disable-pip-version-check"]);
    install.args(PYTHON_PACKAGES);
    run(&mut install)?;
    write_file(&stamp, &format!("{wanted}\n"))
}

/// pytest on `tests` (a file or directory of tests/interop) in the virtualenv, with the ncfilters
/// build (its library, plugins and ncdump) and the stock build in its environment.
pub fn interop_pytest(h: &Harness, tests: &str) -> Result<Command> {
    let build = h.ncfilters_build();
    python_env(h)?;
    let mut pytest = cmd(h.venv().join("bin/pytest"), ["-q", "-p", "no:cacheprovider"]);
    pytest
        .arg(format!("--basetemp={}", h.work.join("pytest").display()))
        .arg(tests)
        .current_dir(h.repo.join("tests/interop"))
        .env_remove("NCFILTERS_CODEC_DIALECT")
        .env("NETCDF_LIB", h.lib_dir("ncfilters").join("libnetcdf.so"))
        .env("HDF5_PLUGIN_PATH", build.join("plugins"))
        .env("NCFILTERS_BUILD_PLUGINS", build.join("plugins"))
        .env("NCDUMP", build.join("ncdump/ncdump"))
        // The stock build and its C plugins, as a second reader (test_threads.py, test_damaged_chunks.py).
        .env("NCFILTERS_STOCK_LIB", h.stock_lib())
        .env("NCFILTERS_STOCK_PLUGINS", h.build_dir("stock").join("plugins"))
        .env("NCFILTERS_STOCK_BUILD", h.build_dir("stock"))
        .env("LD_LIBRARY_PATH", h.lib_dir("ncfilters"));
    Ok(pytest)
}

/// NCZarr with zarr-python, HDF5 files with h5py + hdf5plugin, malformed metadata, bad plugins,
/// damaged chunks (both builds' tallies printed), lazy loading, and the built-in filters with no
/// plugin path; with the ncfilters build's plugins
/// on HDF5_PLUGIN_PATH and its default (numeric) codec dialect.
pub fn test_interop(h: &Harness) -> Result {
    log(
        "interoperability (zarr-python, h5py + hdf5plugin), built-in filters, malformed metadata, bad plugins, damaged chunks (pytest)",
    );
    let log_file = h.work_file("interop.log");
    let damage_report = h.work_file("damaged-chunks.txt");
    let _ = std::fs::remove_file(&damage_report);
    let mut pytest = interop_pytest(h, ".")?;
    // test_damaged_chunks.py's tallies of both builds.
    pytest.env("NCFILTERS_DAMAGE_REPORT", &damage_report);
    if !succeeds_into_log(&mut pytest, &log_file, false)? {
        print_tail(&log_file, 60);
        fail!("interoperability tests failed");
    }
    for line in last_lines(&read_to_string(&log_file)?, 1) {
        println!("{line}");
    }
    print!("{}", read_to_string(&damage_report)?);
    Ok(())
}
