#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C tests, called by `cargo xtask c` as: run.sh <harness work dir> <repo> [<cargo target dir>]
# (the work dir and ncfilters' cargo target dir of one netcdf-c release: 4.9.0, 4.9.2, 4.9.3, 4.10.0 or 4.10.1)
#  1. netcdf-c's own nc_test4/tst_filterparser.c, unchanged, against include/ and libncfilters.so;
#  2. filter_api.c against the stock and the ncfilters libnetcdf: identical output required;
#  3. filter_api.c ncfilters-only cases (inputs 4.9.0 mishandles), plain and under valgrind;
#  4. report_api.c: ncfilters' own API (include/ncfilters.h) against the ncfilters libnetcdf, plain
#     and under valgrind;
#  5. shim_stress.c: shim.c's lookup (plugins reaching an RTLD_LOCAL libnetcdf/HDF5) against
#     concurrent dlopen/dlclose, directly and through the plugins; a deadlock fails it;
#  6. plugin_unload.c: the zstd, deflate and bzip2 plugins compress a 4 MiB chunk on worker threads, and
#     dlclose unmaps them with no thread left behind;
#  7. filter_contract.c: every filter plugin library through H5Z_func_t as HDF5 2.2 calls it (decode
#     into a block pre-sized at the chunk's size, exact sizes, failure leaves the block), plain and
#     under valgrind; broken_filter.c, which reads *buf_size instead of nbytes, must fail it.
set -euo pipefail
WORK=$1 REPO=$2 TARGET=${3:-$2/target}
OUT=$WORK/c_tests
SRC=$WORK/src-stock
# Where a build puts libnetcdf.so: liblib/ in 4.9.0 and 4.9.2, the build directory from 4.9.3 on.
libdir() { if [ -d "$WORK/build-$1/liblib" ] && ls "$WORK/build-$1/liblib"/libnetcdf.so* >/dev/null 2>&1; then echo "$WORK/build-$1/liblib"; else echo "$WORK/build-$1"; fi; }
rm -rf "$OUT" && mkdir -p "$OUT"
CFLAGS=(-O1 -g -Wall -Werror=implicit-function-declaration)

echo "-- tst_filterparser.c (netcdf-c, unchanged) against include/ and libncfilters.so"
cc "${CFLAGS[@]}" -I"$REPO/include" -I"$WORK/build-stock" -I"$WORK/build-stock/include" -I"$SRC/include" \
   "$SRC/nc_test4/tst_filterparser.c" -L"$TARGET/release" -lncfilters -Wl,-rpath,"$TARGET/release" \
   -o "$OUT/tst_filterparser"
deps=$(ldd "$OUT/tst_filterparser")
[[ $deps == *libncfilters.so* && $deps != *libnetcdf* ]] || { echo "$deps"; echo "tst_filterparser must link libncfilters.so only"; exit 1; }
(cd "$OUT" && ./tst_filterparser) | tail -n 2

for flavour in stock ncfilters; do
  build=$WORK/build-$flavour
  includes=(-I"$build/include" -I"$SRC/include")
  [ "$flavour" = ncfilters ] && includes=(-I"$REPO/include" "${includes[@]}")
  cc "${CFLAGS[@]}" "${includes[@]}" "$REPO/c_tests/filter_api.c" -L"$(libdir $flavour)" -lnetcdf \
     -Wl,-rpath,"$(libdir $flavour)" -o "$OUT/filter_api-$flavour"
  mkdir -p "$OUT/run-$flavour"
  (cd "$OUT/run-$flavour" && HDF5_PLUGIN_PATH="$build/plugins" "$OUT/filter_api-$flavour" > ../filter_api-$flavour.txt) \
    || { cat "$OUT/filter_api-$flavour.txt"; echo "filter_api failed against the $flavour build"; exit 1; }
  echo "-- filter_api against $flavour: $(tail -n 1 "$OUT/filter_api-$flavour.txt")"
done
diff -u "$OUT/filter_api-stock.txt" "$OUT/filter_api-ncfilters.txt" \
  || { echo "filter_api: ncfilters differs from stock netcdf-c"; exit 1; }
echo "-- filter_api: ncfilters output identical to stock ($(wc -l < "$OUT/filter_api-stock.txt") lines)"

echo "-- files written by each build, read by each build (ncdump -hs and all values)"
for writer in stock ncfilters; do
  for reader in stock ncfilters; do
    dump=$WORK/build-$reader/ncdump/ncdump
    file=$OUT/run-$writer/tmp_c_filter_api.nc
    HDF5_PLUGIN_PATH="$WORK/build-$reader/plugins" "$dump" -hs "$file" > "$OUT/hs-$writer-by-$reader.txt"
    HDF5_PLUGIN_PATH="$WORK/build-$reader/plugins" "$dump" "$file" > "$OUT/data-$writer-by-$reader.txt"
  done
done
for kind in hs data; do
  for pair in stock-by-ncfilters ncfilters-by-stock ncfilters-by-ncfilters; do
    diff -u "$OUT/$kind-stock-by-stock.txt" "$OUT/$kind-$pair.txt" \
      || { echo "ncdump ${kind} of the file written ${pair/-by-/ and read by } differs from stock's"; exit 1; }
  done
done
grep -c '_Filter\|_DeflateLevel\|_Shuffle\|_Fletcher32' "$OUT/hs-stock-by-stock.txt" | xargs echo "   identical in all 4 combinations; filter attributes shown:"

build=$WORK/build-ncfilters
(cd "$OUT/run-ncfilters" && HDF5_PLUGIN_PATH="$build/plugins" NCFILTERS_QUIET=1 \
   "$OUT/filter_api-ncfilters" ncfilters-only > ../filter_api-only.txt) \
  || { cat "$OUT/filter_api-only.txt"; exit 1; }
echo "-- filter_api ncfilters-only: $(tail -n 1 "$OUT/filter_api-only.txt")"

echo "-- valgrind (memcheck) on filter_api, stock and ncfilters builds"
# Required: no invalid read or write, no definite leak allocated by ncfilters code, and no more
# definite leaks than the stock build (netcdf-c's C plugins leak on their own, e.g. blosc).
definite() { grep -c 'definitely lost in loss record' "$1" || true; }
# Which leaks are ncfilters' is decided by the xtask's classifier, the rule of its valgrind step
# too (first frame after the allocator); it prints those records and fails if there are any.
# `cargo xtask c` passes its own path in NCFILTERS_XTASK.
classify_leaks() {
  if [ -n "${NCFILTERS_XTASK:-}" ]; then "$NCFILTERS_XTASK" classify-leaks "$@"
  else (cd "$REPO" && cargo xtask classify-leaks "$@"); fi
}
for args in "" "ncfilters-only"; do
  for flavour in stock ncfilters; do
    [ "$flavour" = stock ] && [ -n "$args" ] && continue
    log=$OUT/valgrind-$flavour${args:+-$args}.log
    (cd "$OUT/run-$flavour" && HDF5_PLUGIN_PATH="$WORK/build-$flavour/plugins" NCFILTERS_QUIET=1 \
       valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=none \
       --log-file="$log" "$OUT/filter_api-$flavour" $args > /dev/null) \
      || { cat "$log"; echo "valgrind found invalid accesses (filter_api $args, $flavour)"; exit 1; }
  done
  log=$OUT/valgrind-ncfilters${args:+-$args}.log
  classify_leaks "$log" || { echo "definite leak allocated by ncfilters (filter_api $args)"; exit 1; }
  if [ -z "$args" ]; then
    n_ncf=$(definite "$log"); n_stock=$(definite "$OUT/valgrind-stock.log")
    [ "$n_ncf" -le "$n_stock" ] || { cat "$log"; echo "more definite leaks than stock ($n_ncf > $n_stock)"; exit 1; }
    echo "   filter_api: no invalid access; definite leaks: ncfilters $n_ncf, stock $n_stock, none from ncfilters code"
  else
    echo "   filter_api $args: no invalid access; definite leaks: $(definite "$log"), none from ncfilters code"
  fi
done

echo "-- report_api: ncfilters' own API (include/ncfilters.h) through libnetcdf, plain and under valgrind"
build=$WORK/build-ncfilters
cc "${CFLAGS[@]}" -I"$REPO/include" -I"$build/include" -I"$SRC/include" "$REPO/c_tests/report_api.c" \
   -L"$(libdir ncfilters)" -lnetcdf -Wl,-rpath,"$(libdir ncfilters)" -o "$OUT/report_api"
HDF5_PLUGIN_PATH="$build/plugins" NCFILTERS_QUIET=1 "$OUT/report_api" > "$OUT/report_api.txt" \
  || { cat "$OUT/report_api.txt"; echo "report_api failed"; exit 1; }
log=$OUT/valgrind-report_api.log
HDF5_PLUGIN_PATH="$build/plugins" NCFILTERS_QUIET=1 valgrind -q --error-exitcode=97 --leak-check=full \
   --errors-for-leak-kinds=none --log-file="$log" "$OUT/report_api" > /dev/null \
  || { cat "$log"; echo "valgrind found invalid accesses (report_api)"; exit 1; }
classify_leaks "$log" || { echo "definite leak allocated by ncfilters (report_api)"; exit 1; }
echo "   $(tail -n 1 "$OUT/report_api.txt"); under valgrind no invalid access and no leak from ncfilters code"

echo "-- shim_stress: the shim's lookup against concurrent dlopen/dlclose (a hang fails)"
# Its libraries come from the same file (-DLIBRARY): renamed HDF5/netCDF as wheels ship them, a
# decoy, and 8 distinct ones to load and unload. STRESS seconds per variant, bounded by timeout.
STRESS=${NCFILTERS_SHIM_STRESS_SECONDS:-10}
build=$WORK/build-ncfilters stress=$OUT/shim_stress
mkdir -p "$stress"
library() { cc "${CFLAGS[@]}" -fPIC -shared "${@:2}" "$REPO/c_tests/shim_stress.c" -o "$stress/$1"; }
library libhdf5-0a1b2c3d.so -DLIBRARY=1
library libnetcdf-4e5f6a7b.so -DLIBRARY=2
library libdecoy.so -DLIBRARY=3
for i in 0 1 2 3 4 5 6 7; do library libshim_stress_loadee$i.so -DLIBRARY=4 -DLOADEE=$i; done
cc "${CFLAGS[@]}" -pthread "$REPO/c_tests/shim_stress.c" "$REPO/plugins/common/src/shim.c" -o "$stress/shim_stress" -ldl
lines=()
for variant in direct netcdf; do
  args=("$stress" "$STRESS")
  [ $variant = netcdf ] && args=("$(libdir ncfilters)/libnetcdf.so" "${args[@]}")
  line=$(HDF5_PLUGIN_PATH="$build/plugins" timeout -s KILL $((STRESS + 60)) "$stress/shim_stress" $variant "${args[@]}") \
    || { echo "shim_stress $variant failed or hung (exit $?)"; exit 1; }
  lines+=("$line")
done
echo "PASS shim_stress, no hang: ${lines[0]}; ${lines[1]}"

echo "-- plugin_unload: plugins with worker threads unload cleanly (dlopen, 4 MiB chunk, dlclose; a hang fails)"
cc "${CFLAGS[@]}" -pthread -I"$REPO/c_tests" "$REPO/c_tests/plugin_unload.c" -o "$OUT/plugin_unload" -ldl
for threads in "" 1; do
  for plugin in "lib__nch5zstd.so 3" "lib__nch5deflate.so 1" "lib__nch5bzip2.so 9"; do
    set -- $plugin
    NCFILTERS_THREADS=$threads timeout -s KILL 120 "$OUT/plugin_unload" "$WORK/build-ncfilters/plugins/$1" "$2" 4 \
      || { echo "plugin_unload $1 (NCFILTERS_THREADS=${threads:-unset}) failed (exit $?)"; exit 1; }
  done
done

echo "-- filter_contract: every plugin library's H5Z_func_t as HDF5 2.2 calls it, plain and under valgrind"
cc "${CFLAGS[@]}" -I"$REPO/c_tests" "$REPO/c_tests/filter_contract.c" -o "$OUT/filter_contract" -ldl
cc "${CFLAGS[@]}" -fPIC -shared -I"$REPO/c_tests" "$REPO/c_tests/broken_filter.c" -o "$OUT/libbroken_zstd.so" -lzstd
# The filter plugins of the table of standard filters (the codec-defaults libraries have no filter).
read -r -a stems < <(sed -n 's/^set(NCFILTERS_RUST_PLUGIN_STEMS \(.*\))$/\1/p' "$REPO/cmake/ncfilters_plugins.cmake")
plugins=()
for stem in "${stems[@]}"; do [[ $stem == h5* ]] && plugins+=("$WORK/build-ncfilters/plugins/lib__nc$stem.so"); done
[ ${#plugins[@]} -eq 7 ] || { echo "expected the 7 filter plugin libraries, found ${#plugins[@]}"; exit 1; }
"$OUT/filter_contract" "${plugins[@]}" > "$OUT/filter_contract.txt" \
  || { cat "$OUT/filter_contract.txt"; echo "a plugin library broke the filter contract"; exit 1; }
sed 's/^/   /' "$OUT/filter_contract.txt"
# The harness can fail: a filter that reads *buf_size instead of nbytes (4.9.x's C zstd plugin).
if "$OUT/filter_contract" "$OUT/libbroken_zstd.so" > "$OUT/filter_contract-broken.txt"; then
  cat "$OUT/filter_contract-broken.txt"; echo "filter_contract passed a filter that reads *buf_size"; exit 1
fi
grep -q "pre-sized block returned 0" "$OUT/filter_contract-broken.txt" \
  || { cat "$OUT/filter_contract-broken.txt"; echo "filter_contract failed the broken filter for another reason"; exit 1; }
echo "   the deliberately broken filter (decodes *buf_size bytes, not nbytes) fails it, as it must"
log=$OUT/valgrind-filter_contract.log
valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=none --log-file="$log" \
   "$OUT/filter_contract" "${plugins[@]}" > /dev/null \
  || { cat "$log"; echo "valgrind found invalid accesses (filter_contract)"; exit 1; }
classify_leaks "$log" || { echo "definite leak allocated by ncfilters code (filter_contract)"; exit 1; }
echo "   under valgrind: nothing read past nbytes, no invalid access, no definite leak from ncfilters code"
