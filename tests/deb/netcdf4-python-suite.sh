#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# netCDF4-python's own test suite, built from its sdist against the root's libnetcdf-dev (nc-config)
# as a user's `pip install` would, with no HDF5_PLUGIN_PATH; run inside a clean Debian root by
# `cargo xtask deb`:
#   netcdf4-python-suite.sh <sdist> <work dir> [<the host's CA bundle>]
# pip fetches the build's and the module's Python dependencies, trusting the host's CA bundle when
# given (the machine's network may need it); pytest's summary ends the output.
set -eu
sdist=$1 dir=$2
[ -n "${3:-}" ] && export PIP_CERT=$3
unset HDF5_PLUGIN_PATH
rm -rf "$dir" && mkdir -p "$dir/src"
python3 -m venv "$dir/venv"
"$dir/venv/bin/pip" install -q --no-cache-dir "$sdist" pytest
tar -xzf "$sdist" -C "$dir/src" --strip-components=1
# From the tests' own directory, `import netCDF4` is the installed module, not the sources.
cd "$dir/src/test"
"$dir/venv/bin/python" -c 'import netCDF4; print("netCDF4-python", netCDF4.__version__, "on netcdf-c", netCDF4.__netcdf4libversion__)'
# pytest exits 1 when a test fails: the harness compares the counts.
"$dir/venv/bin/python" -m pytest -q -rfs -p no:cacheprovider . || true
