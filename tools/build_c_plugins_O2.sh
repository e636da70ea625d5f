#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# build_c_plugins_O2.sh <stock build dir> <netcdf-c source dir> <output dir>
#
# netcdf-c 4.9.0's plugins/CMakeLists.txt empties CMAKE_BUILD_TYPE, so even a Release build
# compiles its plugins at -O0. For a fair benchmark this rebuilds the seven real-filter plugins
# from the same sources with the same defines, includes and link line as CMake generated for the
# stock build, plus -O2 -DNDEBUG.
set -euo pipefail
build=$(cd "$1" && pwd); src=$(cd "$2" && pwd); out=$3
mkdir -p "$out"; out=$(cd "$out" && pwd)
for target in h5shuffle h5fletcher32 h5deflate h5bzip2 h5zstd h5blosc h5szip; do
  dir="$build/plugins/CMakeFiles/$target.dir"
  [ -f "$dir/link.txt" ] || { echo "no $target in $build" >&2; exit 1; }
  flags=$(sed -n 's/^C_DEFINES = //p; s/^C_INCLUDES = //p; s/^C_FLAGS = //p' "$dir/flags.make" | tr '\n' ' ')
  link=$(cat "$dir/link.txt")
  for object in $(grep -oE "CMakeFiles/$target\.dir/[^ ]+\.c\.o" <<<"$link"); do
    name=$(basename "$object" .c.o)
    # shellcheck disable=SC2086 # flags are CMake's, word-split on purpose
    cc $flags -O2 -DNDEBUG -c "$src/plugins/$name.c" -o "$out/$target-$name.o"
    link=${link//$object/$out/$target-$name.o}
  done
  library=$(grep -oE -- '-o [^ ]+' <<<"$link" | cut -d' ' -f2)
  link=${link/-o $library/-o $out/$library}
  (cd "$build/plugins" && eval "$link")
  echo "built $out/$library (-O2)"
done
rm -f "$out"/*.o
