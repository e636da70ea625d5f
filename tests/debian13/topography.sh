#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by clients.sh and gdal.sh: `topography <file>` writes a global 0.5-degree float grid
# `topo(lat, lon)` as netCDF-4: CDO's built-in topography where CDO is installed, else (Debian builds
# no cdo for i386) a grid of the same shape and type from ncgen, smooth with small-scale noise.
topography() {
  if command -v cdo > /dev/null; then
    env -u LD_LIBRARY_PATH cdo -s -f nc4 topo "$1"
    return
  fi
  awk 'BEGIN {
    print "netcdf topography {\ndimensions:\n  lat = 360 ;\n  lon = 720 ;\nvariables:\n  float topo(lat, lon) ;\n    topo:units = \"m\" ;\ndata:\n  topo ="
    for (lat = 0; lat < 360; lat++)
      for (lon = 0; lon < 720; lon++) {
        i = lat * 720 + lon
        printf "%s%.1f", (i ? ", " : ""), 4000 * sin(lat * 0.05) * cos(lon * 0.03) + (i * 7919) % 200
      }
    print " ;\n}"
  }' > "$1.cdl" && env -u LD_LIBRARY_PATH ncgen -k netCDF-4 -o "$1" "$1.cdl" && rm -f "$1.cdl"
}
