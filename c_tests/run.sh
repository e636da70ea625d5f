#!/usr/bin/env bash
# C tests, called by cmake/harness.sh as: run.sh <harness work dir> <repo>
#  1. netcdf-c's own nc_test4/tst_filterparser.c, unchanged, against include/ and libncfilters.so;
#  2. filter_api.c against the stock and the ncfilters libnetcdf: identical output required;
#  3. filter_api.c ncfilters-only cases (inputs 4.9.0 mishandles), plain and under valgrind.
set -euo pipefail
WORK=$1 REPO=$2
OUT=$WORK/c_tests
SRC=$WORK/src-stock
rm -rf "$OUT" && mkdir -p "$OUT"
CFLAGS=(-O1 -g -Wall -Werror=implicit-function-declaration)

echo "-- tst_filterparser.c (netcdf-c, unchanged) against include/ and libncfilters.so"
cc "${CFLAGS[@]}" -I"$REPO/include" -I"$WORK/build-stock" -I"$WORK/build-stock/include" -I"$SRC/include" \
   "$SRC/nc_test4/tst_filterparser.c" -L"$REPO/target/release" -lncfilters -Wl,-rpath,"$REPO/target/release" \
   -o "$OUT/tst_filterparser"
deps=$(ldd "$OUT/tst_filterparser")
[[ $deps == *libncfilters.so* && $deps != *libnetcdf* ]] || { echo "$deps"; echo "tst_filterparser must link libncfilters.so only"; exit 1; }
(cd "$OUT" && ./tst_filterparser) | tail -n 2

for flavour in stock ncfilters; do
  build=$WORK/build-$flavour
  includes=(-I"$build/include" -I"$SRC/include")
  [ "$flavour" = ncfilters ] && includes=(-I"$REPO/include" "${includes[@]}")
  cc "${CFLAGS[@]}" "${includes[@]}" "$REPO/c_tests/filter_api.c" -L"$build/liblib" -lnetcdf \
     -Wl,-rpath,"$build/liblib" -o "$OUT/filter_api-$flavour"
  mkdir -p "$OUT/run-$flavour"
  (cd "$OUT/run-$flavour" && HDF5_PLUGIN_PATH="$build/plugins" "$OUT/filter_api-$flavour" > ../filter_api-$flavour.txt) \
    || { cat "$OUT/filter_api-$flavour.txt"; echo "filter_api failed against the $flavour build"; exit 1; }
  echo "-- filter_api against $flavour: $(tail -n 1 "$OUT/filter_api-$flavour.txt")"
done
diff -u "$OUT/filter_api-stock.txt" "$OUT/filter_api-ncfilters.txt" \
  || { echo "filter_api: ncfilters differs from stock netcdf-c"; exit 1; }
echo "-- filter_api: ncfilters output identical to stock ($(wc -l < "$OUT/filter_api-stock.txt") lines)"

build=$WORK/build-ncfilters
(cd "$OUT/run-ncfilters" && HDF5_PLUGIN_PATH="$build/plugins" NCFILTERS_QUIET=1 \
   "$OUT/filter_api-ncfilters" ncfilters-only > ../filter_api-only.txt) \
  || { cat "$OUT/filter_api-only.txt"; exit 1; }
echo "-- filter_api ncfilters-only: $(tail -n 1 "$OUT/filter_api-only.txt")"

echo "-- valgrind (memcheck) on filter_api against the ncfilters build"
for args in "" "ncfilters-only"; do
  (cd "$OUT/run-ncfilters" && HDF5_PLUGIN_PATH="$build/plugins" NCFILTERS_QUIET=1 \
     valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite \
     --log-file="$OUT/valgrind-$args.log" "$OUT/filter_api-ncfilters" $args > /dev/null) \
    || { cat "$OUT/valgrind-$args.log"; echo "valgrind found errors (filter_api $args)"; exit 1; }
  echo "   filter_api $args: no invalid access, no definite leak"
done
