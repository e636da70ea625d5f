#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian 13's own programs (NCO, CDO) compress and check a real grid with no HDF5_PLUGIN_PATH, run
# inside the Debian 13 root by `cargo xtask debian13` (and in `deb`'s clean roots; without CDO, which
# Debian builds for no 32-bit architecture, NCO's cases only):
#   clients.sh <label> <work dir> [<directory of a libnetcdf.so.22 to use instead of Debian's>]
# Prints PASS/FAIL per case and `<label>: N of M succeeded`; exits 0 (the harness compares counts).
set -u
label=$1 work=$2 lib=${3:-}
unset HDF5_PLUGIN_PATH
[ -n "$lib" ] && export LD_LIBRARY_PATH=$lib
source "$(dirname "$0")/topography.sh"
dir=$work/clients-${label// /-}
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 2
# A global topography (0.5 degree, float), written uncompressed by Debian's library.
topography in.nc || { echo "the topography grid could not be written"; exit 2; }
values() { ncdump -v topo "$1" | sed -n '/^data:/,$p'; }
passed=0 total=0
# case <name> <what the output's header must show> <command writing out.nc...>
case_() {
  local name=$1 shows=$2; shift 2
  total=$((total + 1))
  rm -f out.nc
  if ! "$@" > case.log 2>&1; then echo "FAIL $name: $(tail -n 1 case.log | cut -c1-160)"; return; fi
  local header; header=$(ncdump -hs out.nc 2>&1)
  local want
  for want in $shows; do
    grep -q -- "$want" <<< "$header" || { echo "FAIL $name: the output has no $want (filter not applied)"; return; }
  done
  if [ "$(values in.nc)" != "$(values out.nc)" ]; then echo "FAIL $name: values differ"; return; fi
  if [ "${name#cdo}" != "$name" ] && cdo diffn in.nc out.nc 2>&1 | grep -Eq '[1-9][0-9]* of [0-9]+ records? differ'; then
    echo "FAIL $name: cdo diffn finds differences"; return
  fi
  echo "PASS $name"
  passed=$((passed + 1))
}
case_ "ncks --cmp=zst" "_Filter.*32015" ncks -O -7 --cmp=zst in.nc out.nc
case_ "ncks --cmp=shf|zst" "_Shuffle _Filter.*32015" ncks -O -7 "--cmp=shf|zst" in.nc out.nc
case_ "ncks --cmp=bz2" "_Filter.*307" ncks -O -7 --cmp=bz2 in.nc out.nc
case_ "ncks --cmp=shf|dfl" "_Shuffle _DeflateLevel" ncks -O -7 "--cmp=shf|dfl" in.nc out.nc
case_ "ncks --cmp=bz2|shf" "_Shuffle _Filter.*307" ncks -O -7 "--cmp=bz2|shf" in.nc out.nc
if command -v cdo > /dev/null; then
  case_ "cdo -z zip_5" "_DeflateLevel" cdo -s -f nc4 -z zip_5 copy in.nc out.nc
  case_ "cdo -z zstd" "_Filter.*32015" cdo -s -f nc4 -z zstd copy in.nc out.nc
fi
echo "$label: $passed of $total succeeded"
