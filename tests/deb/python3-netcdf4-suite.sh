#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The test suite of the suite's own netcdf4-python source package, run on its installed
# python3-netcdf4 (whatever libnetcdf the root has) with no HDF5_PLUGIN_PATH; run inside a clean
# Debian root by `cargo xtask deb`:
#   python3-netcdf4-suite.sh <the source package's test/ directory>
# pytest's summary ends the output.
set -eu
tests=$1
unset HDF5_PLUGIN_PATH
cd "$tests"
python3 -c 'import netCDF4; print("netCDF4-python", netCDF4.__version__, "on netcdf-c", netCDF4.__netcdf4libversion__)'
# Older releases name their test files tst_*.py. pytest exits 1 when a test fails: the harness
# compares the counts.
python3 -m pytest -q -rfs -p no:cacheprovider -o 'python_files=tst_*.py test_*.py' . || true
