#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# GDAL reads a netCDF-4 variable compressed with each standard filter, with no HDF5_PLUGIN_PATH,
# run inside a clean Debian root by `cargo xtask deb`:
#   gdal.sh <label> <files dir>
# The files (a topography grid, plain and with deflate, zstd, bzip2 and blosc) are made in the dir
# when it has none, which needs a library that writes all four. Prints PASS/FAIL per filter and
# `<label>: N of M succeeded`; exits 0 (the harness compares counts).
set -u
source "$(dirname "$0")/topography.sh"
label=$1 dir=$2
unset HDF5_PLUGIN_PATH
export GDAL_PAM_ENABLED=NO
mkdir -p "$dir" && cd "$dir" || exit 2
filters="deflate:-d1 zstd:-F*,32015,3 bzip2:-F*,307,9 blosc:-F*,32001,0,0,0,0,5,1,1"
if [ ! -f plain.nc ]; then
  topography plain.nc || { echo "the topography grid could not be written"; exit 2; }
  for entry in $filters; do
    nccopy "${entry#*:}" plain.nc "${entry%%:*}.nc" || { echo "nccopy ${entry#*:} failed"; exit 2; }
  done
fi
stats() { gdalinfo -stats "NETCDF:\"$1\":topo" 2>&1 | grep -E '^ +STATISTICS_(MINIMUM|MAXIMUM|MEAN|STDDEV)='; }
want=$(stats plain.nc)
[ -n "$want" ] || { echo "gdalinfo gives no statistics for the plain file"; exit 2; }
passed=0 total=0
for entry in $filters; do
  name=${entry%%:*}
  total=$((total + 1))
  got=$(stats "$name.nc")
  if [ "$got" = "$want" ]; then
    echo "PASS gdalinfo -stats $name"
    passed=$((passed + 1))
  else
    echo "FAIL gdalinfo -stats $name: $(gdalinfo -stats "NETCDF:\"$name.nc\":topo" 2>&1 | grep -m1 -E 'ERROR|Warning' | cut -c1-160)"
  fi
done
echo "$label: $passed of $total succeeded"
