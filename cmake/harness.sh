#!/usr/bin/env bash
# ncfilters harness: builds netcdf-c 4.9.0 twice side by side -- "stock" (its C, as shipped)
# and "ncfilters" (cmake/ncfilters.cmake injected) -- and tests the result.
#
#   bash cmake/harness.sh demo    set up everything, build netcdf-c with ncfilters and compress a
#                                 real dataset with nccopy -F (the README's main job)
#   bash cmake/harness.sh test    every test: Rust, headers, ABI, differential parser, C tests,
#                                 fuzz smoke, netcdf-c's full ctest suite and its extra filter programs
#   bash cmake/harness.sh setup | build | <step>   individual steps (see the case at the end)
#
# Environment: NCFILTERS_WORK (default <repo>/target/harness), NCFILTERS_CACHE (download cache,
# default ~/.cache/ncfilters), NCFILTERS_JOBS (default: number of cores), NCFILTERS_FUZZ_SECONDS.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${NCFILTERS_WORK:-$REPO/target/harness}
CACHE=${NCFILTERS_CACHE:-$HOME/.cache/ncfilters}
JOBS=${NCFILTERS_JOBS:-$(nproc)}
FUZZ_SECONDS=${NCFILTERS_FUZZ_SECONDS:-20}
NETCDF_VERSION=4.9.0
ORIG_TARBALL=netcdf_${NETCDF_VERSION}.orig.tar.gz
export PATH="$HOME/.cargo/bin:$PATH"

APT_PACKAGES=(cmake libhdf5-dev libzstd-dev libbz2-dev libblosc-dev libaec-dev zlib1g-dev libxml2-dev
              libcurl4-openssl-dev m4 pkg-config make gcc g++ file dpkg-dev valgrind)

# netcdf-c's own configuration (reference §2), in Release.
NETCDF_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DENABLE_NETCDF_4=ON -DENABLE_HDF5=ON
  -DENABLE_NCZARR=ON -DENABLE_PLUGINS=ON -DENABLE_FILTER_TESTING=ON -DENABLE_NCZARR_FILTERS=ON
  -DENABLE_NCZARR_FILTERS_TESTING=ON -DPLUGIN_INSTALL_DIR=NO -DENABLE_TESTS=ON -DENABLE_UNIT_TESTS=ON
  -DENABLE_EXAMPLES=ON -DENABLE_DAP=OFF -DENABLE_DAP_REMOTE_TESTS=OFF -DENABLE_BYTERANGE=OFF
  -DENABLE_NCZARR_S3=OFF -DENABLE_NCZARR_S3_TESTS=OFF -DENABLE_HDF4=OFF -DENABLE_PNETCDF=OFF
  -DENABLE_PARALLEL4=OFF -DENABLE_DOXYGEN=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Zip=TRUE)

# Every symbol ncfilters replaces in libnetcdf.so.
REPLACED_SYMBOLS=(nc_def_var_filter nc_inq_var_filter nc_inq_var_filter_ids nc_inq_var_filter_info
  nc_inq_filter_avail nc_def_var_bzip2 nc_inq_var_bzip2 nc_def_var_zstandard nc_inq_var_zstandard
  nc_def_var_blosc nc_inq_var_blosc ncaux_h5filterspec_parse ncaux_h5filterspec_parselist
  ncaux_h5filterspec_parse_parameter ncaux_h5filterspec_free ncaux_h5filterspec_fix8
  NC4_hdf5_def_var_filter NC4_hdf5_inq_var_filter_ids NC4_hdf5_inq_var_filter_info NC4_hdf5_inq_filter_avail
  NC4_hdf5_addfilter NC4_hdf5_filter_remove NC4_hdf5_filter_lookup NC4_hdf5_filter_freelist
  NC4_hdf5_filter_initialize NC4_hdf5_filter_finalize NC4_hdf5_find_missing_filter
  NCZ_filter_initialize NCZ_filter_finalize NCZ_addfilter NCZ_filter_setup NCZ_filter_freelists NCZ_codec_freelist
  NCZ_applyfilterchain NCZ_filter_jsonize NCZ_filter_build NCZ_codec_attr NCZ_def_var_filter NCZ_inq_var_filter_ids
  NCZ_inq_var_filter_info NCZ_inq_filter_avail NCZ_filter_remove)

# The ctest tests that reach filter code (reference §4.4), run under valgrind by test_valgrind.
# ncdump_tst_ncgen4 runs ncgen and ncdump on every reference CDL file: over 15 minutes per build
# under memcheck with child tracing, so it joins only with NCFILTERS_VALGRIND_FULL=1.
VALGRIND_TESTS=(tst_create_files tst_special_atts ncdump_tst_netcdf4 ncdump_tst_nccopy5 ncdump_tst_fileinfo
  ncdump_tst_netcdf4_4 ncdump_tst_nccopy4 ncdump_test_unicode_path ncdump_test_scope
  nc_test_tst_formats nc_test4_tst_filter nc_test4_tst_unknown nc_test4_tst_specific_filters nc_test4_tst_szip
  nc_test4_tst_vars nc_test4_tst_vars2 nc_test4_tst_vars3 nc_test4_tst_vars4 nc_test4_tst_chunks
  nc_test4_tst_interops5 nczarr_test_run_interop nczarr_test_run_nczarr_fill nczarr_test_run_quantize
  nczarr_test_run_nczfilter nczarr_test_run_filter nczarr_test_run_unknown nczarr_test_run_specific_filters)
[ "${NCFILTERS_VALGRIND_FULL:-0}" = 1 ] && VALGRIND_TESTS+=(ncdump_tst_ncgen4)
# Shell utilities the test scripts call; not worth tracing.
VALGRIND_SKIP='*/diff,*/sed,*/cat,*/grep,*/rm,*/cmp,*/mv,*/cp,*/ls,*/mkdir,*/tr,*/sort,*/head,*/tail,*/awk,*/mawk,*/find,*/touch,*/dirname,*/basename,*/wc,*/cut,*/uname,*/od,*/tee,*/xargs,*/env,*/expr,*/rmdir,*/chmod,*/pwd,*/cmake,*/uniq'

log() { printf '\n== %s\n' "$*"; }
die() { printf 'harness: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- setup
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# A deb-src entry for the same mirror and suite as the machine's first deb entry.
ensure_deb_src() {
  local target=/etc/apt/sources.list.d/ncfilters-deb-src.sources uri suite
  [ -f "$target" ] && return 0
  grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
  read -r uri suite < <(
    { awk '/^Types:/{t=($0 ~ /(^|[ :])deb( |$)/)} t&&/^URIs:/{u=$2} t&&/^Suites:/{print u, $2; exit}' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null
      awk '$1=="deb"{ if ($2 ~ /^\[/) print $3, $4; else print $2, $3; exit }' /etc/apt/sources.list 2>/dev/null
    } | head -n1)
  [ -n "${uri:-}" ] || die "no Debian deb entry found to derive a deb-src entry from"
  log "adding deb-src for $uri $suite"
  printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" "$suite" | as_root tee "$target" >/dev/null
  as_root apt-get update -q
}

fetch_netcdf_source() {
  mkdir -p "$CACHE"
  if [ ! -f "$CACHE/$ORIG_TARBALL" ]; then
    ensure_deb_src
    log "apt-get source netcdf (cached in $CACHE)"
    (cd "$CACHE" && apt-get source -q --download-only netcdf 2>&1 | tail -n 3)
  fi
  [ -f "$CACHE/$ORIG_TARBALL" ] || die "apt-get source did not produce $ORIG_TARBALL"
  if [ ! -d "$WORK/netcdf-c-$NETCDF_VERSION" ]; then
    mkdir -p "$WORK"
    tar -xzf "$CACHE/$ORIG_TARBALL" -C "$WORK"
  fi
}

fetch_rust_dependencies() {
  command -v cargo >/dev/null || die "cargo not found (the Rust toolchain is a prerequisite)"
  (cd "$REPO" && cargo fetch --locked -q && cargo fetch --locked -q --manifest-path plugins/Cargo.toml)
}

setup() {
  install_packages
  fetch_netcdf_source
  fetch_rust_dependencies
}

# ---------------------------------------------------------------- builds
# build_netcdf <stock|ncfilters>: a private, writable source copy (netcdf-c's configure
# deletes and rewrites files in its source tree) and a Release build next to it.
build_netcdf() {
  local name=$1 src="$WORK/src-$1" build="$WORK/build-$1" extra=()
  [ "$name" = ncfilters ] && extra=(-DCMAKE_PROJECT_INCLUDE="$REPO/cmake/ncfilters.cmake"
                                    -DNCFILTERS_CARGO_TARGET_DIR="$REPO/target")
  [ -d "$src" ] || cp -a "$WORK/netcdf-c-$NETCDF_VERSION" "$src"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    log "configure netcdf-c ($name)"
    cmake -S "$src" -B "$build" "${NETCDF_FLAGS[@]}" "${extra[@]}" > "$WORK/configure-$name.log" 2>&1 \
      || { tail -n 40 "$WORK/configure-$name.log"; die "configure ($name) failed"; }
  fi
  log "build netcdf-c ($name)"
  local start=$SECONDS
  cmake --build "$build" -j"$JOBS" > "$WORK/build-$name.log" 2>&1 \
    || { grep -E 'error|undefined' "$WORK/build-$name.log" | head -n 40; die "build ($name) failed"; }
  echo "built $name in $((SECONDS - start)) s"
}

build() {
  setup
  build_netcdf stock
  build_netcdf ncfilters
}

stock_lib() { echo "$WORK/build-stock/liblib/libnetcdf.so"; }
ncf_build() { echo "$WORK/build-ncfilters"; }

# ---------------------------------------------------------------- tests
test_rust() {
  log "cargo test (unit, property and C-ABI tests)"
  (cd "$REPO" && cargo test --workspace --release --locked)
}

test_headers() {
  log "include/ headers are what cbindgen generates now"
  (cd "$REPO" && cargo run -q --release --locked -p gen-headers -- --check)
}

test_abi() {
  log "ABI check against netcdf-c $NETCDF_VERSION's headers"
  (cd "$REPO" && cargo build -q --release --locked -p ncfilters &&
   cargo run -q --release --locked -p gen-headers -- abi-check --netcdf-src "$WORK/src-stock" \
     --netcdf-build "$WORK/build-stock" --lib "$REPO/target/release/libncfilters.so" -- $(pkg-config --cflags hdf5))
  log "ABI check on a deliberately broken mirror must fail"
  # Its own target directory: the broken build must never replace the real libncfilters.
  (cd "$REPO" && CARGO_TARGET_DIR="$REPO/target/abi-broken-mirror" cargo run -q --release --locked -p gen-headers \
     --features ncfilters/abi-broken-mirror -- \
     abi-check --netcdf-src "$WORK/src-stock" --netcdf-build "$WORK/build-stock" --expect-failure -- $(pkg-config --cflags hdf5))
}

test_differential() {
  log "differential parser test against the stock libnetcdf.so"
  (cd "$REPO" && NCFILTERS_STOCK_LIBNETCDF="$(stock_lib)" \
     cargo test -q --release --locked --test differential_parser -- --ignored --nocapture)
  log "differential filter test against netcdf-c's C plugins (stock build)"
  (cd "$REPO" && NCFILTERS_STOCK_PLUGINS="$WORK/build-stock/plugins" \
     cargo test -q --release --locked --test differential_filters -- --ignored --nocapture)
}

# tst_unknown and run_unknown both hide lib__nch5unknown.so by moving it out of the shared
# plugins directory; run in parallel they see each other's move. They run alone, after the rest.
PLUGIN_MOVING_TESTS='_unknown$'

# run_netcdf_ctest <build> <log>: netcdf-c's whole suite, the plugin-moving tests serially.
run_netcdf_ctest() {
  local build=$1 log=$2
  : > "$log"
  (cd "$build" && ctest -j"$JOBS" -E "$PLUGIN_MOVING_TESTS" --output-on-failure >> "$log" 2>&1 \
               && ctest -R "$PLUGIN_MOVING_TESTS" --output-on-failure >> "$log" 2>&1) \
    || { grep -E 'Failed|\*\*\*' "$log" | head -n 40; die "ctest failed in $build"; }
  local passed; passed=$(awk '/tests passed, 0 tests failed out of/ { n += $NF } END { print n + 0 }' "$log")
  echo "$build: $passed tests passed, 0 failed"
  [ "$passed" = 221 ] || die "expected 221 ctest tests to pass in $build, counted $passed"
}

# netcdf-c's NCZarr tests diff _Codecs against 4.9.0's literal text, so its suite runs with
# the legacy codec dialect (the build's default, numeric, is what zarr-python reads).
SUITE_DIALECT=legacy

test_netcdf_suite() {
  local build; build=$(ncf_build)
  local -x NCFILTERS_CODEC_DIALECT=$SUITE_DIALECT
  log "netcdf-c's ctest suite on the ncfilters build"
  run_netcdf_ctest "$build" "$WORK/ctest-ncfilters.log"

  log "filter programs CMake builds but never runs (HDF5_PLUGIN_PATH=$build/plugins)"
  local prog
  for prog in nc_test4/tst_filterparser nc_test4/tst_filter_avail nczarr_test/test_filter_avail nc_test4/test_filter_vlen; do
    (cd "$build/$(dirname "$prog")" && HDF5_PLUGIN_PATH="$build/plugins" "./$(basename "$prog")" \
       > "$WORK/$(basename "$prog").log" 2>&1) || { cat "$WORK/$(basename "$prog").log"; die "$prog failed"; }
    echo "PASS $prog"
  done

  log "tst_specific_filters.sh with HDF5_PLUGIN_PATH (bzip2, zstd and blosc must not be skipped)"
  (cd "$build" && HDF5_PLUGIN_PATH="$build/plugins" ctest -V -R '^nc_test4_tst_specific_filters$' \
     > "$WORK/specific-filters.log" 2>&1) || { tail -n 40 "$WORK/specific-filters.log"; die "tst_specific_filters failed"; }
  if grep -q 'not available' "$WORK/specific-filters.log"; then
    grep 'not available' "$WORK/specific-filters.log"; die "tst_specific_filters skipped filters"
  fi
  echo "PASS tst_specific_filters.sh (deflate, szip, bzip2, blosc, zstd)"
}

# in_ncfilters_section <hex address> <"0xstart 0xsize" lines>
in_ncfilters_section() {
  local target=$((16#$1)) start size
  while read -r start size; do
    (( target >= start && target < start + size )) && return 0
  done <<<"$2"
  return 1
}

# Every replaced symbol must be defined by libncfilters.a, be exported by libnetcdf.so, and
# come from libncfilters.a according to the link map; no C object of the replaced code may be linked.
test_symbol_provenance() {
  local build archive map lib sym count=0
  build=$(ncf_build); archive="$REPO/target/release/libncfilters.a"
  map="$build/ncfilters-libnetcdf.map"; lib="$build/liblib/libnetcdf.so"
  log "symbol provenance in $lib"
  [ -f "$map" ] || die "no link map at $map"
  # (Symbol tables are captured first: `nm | grep -q` would fail under pipefail via SIGPIPE.)
  local archive_syms lib_syms ranges addr
  archive_syms=$(nm --defined-only "$archive" 2>/dev/null)
  lib_syms=$(nm -D --defined-only "$lib")
  # "start size" of every input section the link map attributes to libncfilters.a. Symbols are
  # located by address, since LLVM may merge identical functions under one section.
  ranges=$(awk '$1 ~ /^\./ { name = $1 }
                NF >= 3 && /libncfilters\.a\(/ && name ~ /^\.text/ && $(NF-2) ~ /^0x/ && $(NF-2) !~ /^0x0+$/ {
                  print $(NF-2), $(NF-1) }' "$map")
  for sym in "${REPLACED_SYMBOLS[@]}"; do
    grep -qE " T $sym\$" <<<"$archive_syms" || die "$sym is not defined in libncfilters.a"
    addr=$(awk -v s="$sym" '$3 == s && $2 == "T" { print $1 }' <<<"$lib_syms")
    [ -n "$addr" ] || die "$sym is not exported by libnetcdf.so"
    in_ncfilters_section "$addr" "$ranges" || die "$sym (0x$addr) in libnetcdf.so does not come from libncfilters.a (link map)"
    count=$((count + 1))
  done
  # Negative control: a C function of netcdf-c must not be attributed to libncfilters.a.
  addr=$(awk '$3 == "nc_create" { print $1 }' <<<"$lib_syms")
  ! in_ncfilters_section "$addr" "$ranges" || die "the provenance check attributes nc_create to ncfilters"
  if grep -qE '(dfilter|/daux|hdf5filter|zfilter)\.c\.o' "$map"; then die "a replaced C object is linked into libnetcdf.so"; fi
  local trimmed; trimmed=$(find "$build/libdispatch" -name 'daux_nonfilter.c.o' -print -quit)
  [ -n "$trimmed" ] || die "the trimmed daux object is missing"
  if grep -qiE 'filterspec|gettype' <<<"$(nm "$trimmed")"; then die "filter-spec C code left in $trimmed"; fi
  grep -q ' T ncaux_class_alignment$' <<<"$lib_syms" || die "non-filter ncaux_* functions lost"
  # The compiler's dependency files list headers in the order they were first opened. Ours and
  # netcdf-c's copies share include guards, so the one opened first is the one in effect.
  local header users shadowed
  for header in netcdf_filter.h netcdf_filter_build.h netcdf_filter_hdf5_build.h; do
    users=$(grep -rlE --include='*.o.d' "$REPO/(cmake/\.\./)?include/$header" "$build" | wc -l)
    [ "$users" -gt 0 ] || die "no netcdf-c object was compiled against include/$header"
    shadowed=$(find "$build" -name '*.o.d' -print0 | xargs -0 awk -v ours="$REPO/include/$header" \
      -v theirs="$WORK/src-ncfilters/include/$header" '
        FNR == 1 { mine = 0 }
        { gsub("/cmake/[.][.]/", "/") }
        index($0, ours) { mine = 1 }
        index($0, theirs) && !mine { print FILENAME; nextfile }')
    [ -z "$shadowed" ] || { echo "$shadowed" | head -n 5; die "objects compiled with netcdf-c's own $header"; }
    echo "PASS $users netcdf-c objects (library, tests, plugins) compiled against include/$header, none against netcdf-c's"
  done
  echo "PASS $count replaced symbols come from libncfilters.a; dfilter.c, hdf5filter.c, zfilter.c and the C filter-spec parser are not linked"
  # The standard-filter plugins netcdf-c's tests load are ncfilters' Rust ones (see ncfilters.cmake).
  local name plugin
  for name in deflate shuffle fletcher32 szip bzip2 zstd blosc; do
    plugin="$build/plugins/lib__nch5$name.so"
    grep -qa "$name (ncfilters)" "$plugin" || die "$plugin is not ncfilters' Rust plugin"
    nm -D --defined-only "$plugin" | grep -q ' NCZ_get_codec_info$' || die "$plugin exports no NCZ_get_codec_info"
  done
  for name in zhdf5filters zstdfilters; do
    plugin="$build/plugins/lib__nc$name.so"
    grep -qa "rust_panic" "$plugin" || die "$plugin is not ncfilters' Rust codec-defaults library"
  done
  echo "PASS $build/plugins: deflate, shuffle, fletcher32, szip, bzip2, zstd, blosc and both codec-defaults libraries are ncfilters' Rust ones"
  # Startup cost: ncfilters must not make every netCDF program load more shared libraries
  # (libblosc, say, brings snappy and the C++ runtime). Allowed: Rust's unwinder (libgcc_s,
  # for the panic boundary) and the dynamic loader itself, which every process has mapped.
  local needed_stock needed_ours
  needed_stock=$(readelf -d "$(stock_lib)" | awk '/NEEDED/ { print $NF }' | tr -d '[]' | sort)
  needed_ours=$(readelf -d "$lib" | awk '/NEEDED/ { print $NF }' | tr -d '[]' | grep -vxE 'libgcc_s\.so\.1|ld-linux-x86-64\.so\.2' | sort)
  [ "$needed_ours" = "$needed_stock" ] || { diff <(echo "$needed_stock") <(echo "$needed_ours"); die "libnetcdf.so needs other shared libraries than stock"; }
  echo "PASS libnetcdf.so needs stock's $(echo "$needed_ours" | wc -l) shared libraries (plus libgcc_s for unwinding)"
}

# memcheck_group <build> <logdir> <jobs> <flavour> <test>...: ctest memcheck on exactly these tests.
memcheck_group() {
  local build=$1 logs=$2 jobs=$3 flavour=$4; shift 4
  local regex; regex="^($(IFS='|'; echo "$*"))\$"
  (cd "$build" && ctest -T memcheck -j"$jobs" -R "$regex" --overwrite MemoryCheckCommandOptions="--trace-children=yes \
     --trace-children-skip=$VALGRIND_SKIP --leak-check=full --num-callers=30 --log-file=$logs/vg.%p.log" \
     >> "$WORK/valgrind-$flavour.ctest.log" 2>&1) \
    || { tail -n 30 "$WORK/valgrind-$flavour.ctest.log"; die "tests failed under valgrind ($flavour)"; }
}

# valgrind_suite <stock|ncfilters>: the 28 tests under memcheck, every netcdf-c program they run
# traced, one log per process in $WORK/valgrind-<flavour>/.
valgrind_suite() {
  local build="$WORK/build-$1" logs="$WORK/valgrind-$1" regex serial_tests=() other_tests=() t
  regex="^($(IFS='|'; echo "${VALGRIND_TESTS[*]}"))\$"
  [ "$(cd "$build" && ctest -N -R "$regex" | sed -n 's/^Total Tests: //p')" = ${#VALGRIND_TESTS[@]} ] \
    || die "not all ${#VALGRIND_TESTS[@]} valgrind tests exist in $build"
  # The ncdump tests share one working directory and read each other's files (tst_nccopy4 copies
  # every *.nc there while tst_netcdf4 rewrites them), and the *_unknown tests move a shared
  # plugin; slowed by memcheck they race, so run them one at a time and the rest in parallel.
  for t in "${VALGRIND_TESTS[@]}"; do
    case "$t" in ncdump_*|tst_create_files|tst_special_atts|*_unknown) serial_tests+=("$t") ;; *) other_tests+=("$t") ;; esac
  done
  # Some tests read files other tests write (tst_nccopy4 needs tst_fillbug.nc): run the plain suite first.
  run_netcdf_ctest "$build" "$WORK/ctest-$1.log"
  rm -rf "$logs" && mkdir -p "$logs"
  : > "$WORK/valgrind-$1.ctest.log"
  memcheck_group "$build" "$logs" 1 "$1" "${serial_tests[@]}"
  memcheck_group "$build" "$logs" "$JOBS" "$1" "${other_tests[@]}"
  # Keep only the logs of netcdf-c's own programs (the test scripts' bash processes are traced too).
  grep -L "Command: $build/" "$logs"/vg.*.log | xargs -r rm -f
  grep -l "Command: $build/.*\.sh" "$logs"/vg.*.log | xargs -r rm -f
}

# leaks_allocated_by_ncfilters < valgrind logs: the definite-leak records whose allocation was
# made by ncfilters code: the first stack frame after the allocator (valgrind's malloc family and
# Rust's alloc/core/std) is an ncfilters function. A leak made inside a C plugin that the NCZarr
# chain called (its frames are ??? once the plugin is unloaded) is the plugin's, as on stock.
leaks_allocated_by_ncfilters() {
  awk '/definitely lost in loss record/ { rec = 1; text = ""; decided = 0; mine = 0 }
       rec { text = text "\n" $0 }
       rec && !decided && /(at|by) 0x[0-9A-F]+:/ {
         frame = $0; sub(/^==[0-9]+== +(at|by) 0x[0-9A-F]+: /, "", frame)
         if (frame ~ /vgpreload|\(library\/|^(alloc|core|std)::|^__rust|^UnknownInlinedFun \(library/) next
         decided = 1; mine = (frame ~ /ncfilters|\.rs:[0-9]+\)/)
       }
       rec && /^==[0-9]+== *$/ { if (mine) print text; rec = 0 }'
}

count_in_logs() { cat "$1"/vg.*.log 2>/dev/null | grep -cE "$2" || true; }

test_valgrind() {
  local -x NCFILTERS_CODEC_DIALECT=$SUITE_DIALECT
  log "valgrind: the ${#VALGRIND_TESTS[@]} filter-reaching ctest tests, stock and ncfilters builds"
  local start=$SECONDS flavour
  for flavour in stock ncfilters; do valgrind_suite "$flavour"; done
  local ncf="$WORK/valgrind-ncfilters" stock="$WORK/valgrind-stock" invalid ours n_ncf n_stock
  invalid=$(count_in_logs "$ncf" 'Invalid (read|write|free)|Mismatched free')
  [ "$invalid" = 0 ] || { grep -lE 'Invalid (read|write|free)' "$ncf"/vg.*.log | head -n 3; die "valgrind: $invalid invalid accesses (ncfilters build)"; }
  ours=$(cat "$ncf"/vg.*.log | leaks_allocated_by_ncfilters)
  [ -z "$ours" ] || { echo "$ours" | head -n 40; die "valgrind: definite leaks allocated by ncfilters"; }
  n_ncf=$(count_in_logs "$ncf" 'definitely lost in loss record'); n_stock=$(count_in_logs "$stock" 'definitely lost in loss record')
  [ "$n_ncf" -le "$n_stock" ] || die "valgrind: more definite leaks with ncfilters ($n_ncf) than stock ($n_stock)"
  echo "PASS valgrind: $(ls "$ncf" | wc -l) netcdf-c processes traced; 0 invalid accesses;" \
       "definite leak records: ncfilters $n_ncf, stock $n_stock ($(count_in_logs "$stock" 'Invalid (read|write|free)') invalid accesses in stock), none from ncfilters code; $((SECONDS - start)) s"
}

test_c() {
  log "C tests (c_tests/)"
  bash "$REPO/c_tests/run.sh" "$WORK" "$REPO"
}

# Python packages of the interoperability tests, pinned (zarr-python 2 writes Zarr v2 natively).
PYTHON_PACKAGES=(zarr==2.18.7 numcodecs==0.15.1 numpy==2.2.6 pytest==8.3.5 h5py==3.16.0 hdf5plugin==7.1.0)

VENV="$WORK/venv"
python_env() {
  # The stamp records the pinned list installed, so a changed list is installed again.
  local stamp="$VENV/ncfilters-packages"
  if [ ! -x "$VENV/bin/pytest" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${PYTHON_PACKAGES[*]}" ]; then
    log "Python environment for the interoperability tests ($VENV)"
    [ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${PYTHON_PACKAGES[@]}"
    echo "${PYTHON_PACKAGES[*]}" > "$stamp"
  fi
}

# tests/interop/ against the ncfilters build (its plugins on HDF5_PLUGIN_PATH, numeric codec
# dialect): NCZarr with zarr-python, HDF5 files with h5py + hdf5plugin, malformed metadata, bad
# plugins, lazy loading, and the built-in filters with no plugin path.
test_interop() {
  local build; build=$(ncf_build)
  python_env
  log "interoperability (zarr-python, h5py + hdf5plugin), built-in filters, malformed metadata, bad plugins (pytest)"
  (cd "$REPO/tests/interop" && env -u NCFILTERS_CODEC_DIALECT NETCDF_LIB="$build/liblib/libnetcdf.so" \
     HDF5_PLUGIN_PATH="$build/plugins" NCDUMP="$build/ncdump/ncdump" LD_LIBRARY_PATH="$build/liblib" \
     "$VENV/bin/pytest" -q -p no:cacheprovider --basetemp="$WORK/pytest" . > "$WORK/interop.log" 2>&1) \
    || { tail -n 60 "$WORK/interop.log"; die "interoperability tests failed"; }
  tail -n 1 "$WORK/interop.log"
}

test_fuzz() {
  log "fuzz smoke run (${FUZZ_SECONDS}s per target)"
  command -v cargo-fuzz >/dev/null || cargo install -q --locked cargo-fuzz
  local target
  local -a seeds
  for target in $(cd "$REPO/fuzz" && RUSTC_BOOTSTRAP=1 cargo fuzz list); do
    # The corpus libFuzzer grows (fuzz/corpus/<target>) is git-ignored; the committed seeds
    # (fuzz/seeds/<target>, small valid chunks) are read as a second corpus and never written to.
    mkdir -p "$REPO/fuzz/corpus/$target"
    seeds=()
    [ -d "$REPO/fuzz/seeds/$target" ] && seeds=("seeds/$target")
    # RUSTC_BOOTSTRAP: cargo-fuzz needs -Zsanitizer; the machine has only the stable toolchain.
    (cd "$REPO/fuzz" && NCFILTERS_QUIET=1 RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "corpus/$target" "${seeds[@]}" \
       -- -max_total_time="$FUZZ_SECONDS" > "$WORK/fuzz-$target.log" 2>&1) \
      || { tail -n 30 "$WORK/fuzz-$target.log"; die "fuzz target $target failed"; }
    echo "PASS fuzz $target: $(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$WORK/fuzz-$target.log" | tail -n1)s, no crash"
  done
}

run_all_tests() {
  build
  test_rust
  test_headers
  test_abi
  test_differential
  test_symbol_provenance
  test_c
  test_netcdf_suite
  test_interop
  test_valgrind
  test_fuzz
  log "all tests passed"
}

# ---------------------------------------------------------------- the main job
# stars_input: unpacks Debian's r-cran-stars (cached) and sets STARS_INPUT to a real netCDF file of it.
stars_input() {
  (cd "$CACHE" && { ls r-cran-stars_*.deb >/dev/null 2>&1 || apt-get download -q r-cran-stars; })
  dpkg-deb -x "$CACHE"/r-cran-stars_*.deb "$WORK/r-cran-stars"
  STARS_INPUT="$WORK/r-cran-stars/usr/lib/R/site-library/stars/nc/test_stageiv_xyt.nc"
  [ -f "$STARS_INPUT" ] || die "$STARS_INPUT not found in r-cran-stars"
}

# NCZarr engine timings against stock, side by side (BENCHMARKS.md).
bench_nczarr() {
  build
  stars_input
  log "NCZarr startup and copy timings, stock vs ncfilters (tools/bench_nczarr.py)"
  python3 "$REPO/tools/bench_nczarr.py" "$WORK/build-stock" "$(ncf_build)" "$STARS_INPUT" "$WORK/bench-nczarr" \
    --runs "${NCFILTERS_BENCH_RUNS:-20}"
}

# The standard filters against netcdf-c's C plugins (as built, and rebuilt at -O2), side by side,
# on chunks of real data: Debian's r-cran-stars and r-cran-ncmeta, then ferret-datasets' monthly
# Navy winds (real, no fill values) so that 4 MiB chunks need no repeats (BENCHMARKS.md).
bench_filters() {
  build
  stars_input
  python_env
  local deb data="$WORK/bench-data" files=()
  for deb in r-cran-ncmeta ferret-datasets; do
    (cd "$CACHE" && { ls "${deb}"_*.deb >/dev/null 2>&1 || apt-get download -q "$deb"; })
    dpkg-deb -x "$CACHE/${deb}"_*.deb "$data"
  done
  mapfile -t files < <(find "$WORK/r-cran-stars" "$data/usr/lib/R" -name '*.nc' | sort)
  files+=("$data/usr/share/ferret-vis/data/monthly_navy_winds.cdf")
  log "benchmark corpus from ${#files[@]} files"
  rm -rf "$WORK/bench-corpus"
  NETCDF_LIB="$(stock_lib)" "$VENV/bin/python" "$REPO/tools/make_corpus.py" "$WORK/bench-corpus" "${files[@]}"
  log "netcdf-c's real-filter plugins rebuilt at -O2"
  bash "$REPO/tools/build_c_plugins_O2.sh" "$WORK/build-stock" "$WORK/src-stock" "$WORK/plugins-O2"
  log "Rust filters vs C plugins (tools/bench-filters)"
  (cd "$REPO/tools/bench-filters" && cargo build -q --release)
  "$REPO/tools/bench-filters/target/release/bench-filters" --corpus "$WORK/bench-corpus" --c-plugins "$WORK/plugins-O2" \
    --c-plugins-as-built "$WORK/build-stock/plugins" --reps "${NCFILTERS_BENCH_REPS:-9}" --seconds "${NCFILTERS_BENCH_SECONDS:-0.5}"
}

demo() {
  setup
  build_netcdf ncfilters
  local build data out
  build=$(ncf_build); data="$WORK/demo"; mkdir -p "$data"
  stars_input
  local input="$STARS_INPUT"
  # No HDF5_PLUGIN_PATH: the standard filters are built into libnetcdf.
  unset HDF5_PLUGIN_PATH
  export LD_LIBRARY_PATH="$build/liblib"
  local nccopy="$build/ncdump/nccopy" ncdump="$build/ncdump/ncdump"
  log "input: $input (from Debian's r-cran-stars)"
  "$ncdump" -h "$input" | sed -n "1,12p"
  log "nccopy -F with bzip2 (307) and zstd (32015), through netcdf-c built with ncfilters, HDF5_PLUGIN_PATH unset"
  "$nccopy" -k nc4 "$input" "$data/plain.nc"
  "$nccopy" -k nc4 -F '*,307,9' "$input" "$data/bzip2.nc"
  "$nccopy" -k nc4 -F '*,32015,3' "$input" "$data/zstd.nc"
  for out in bzip2 zstd; do
    log "ncdump -hs $out.nc"
    "$ncdump" -hs "$data/$out.nc" | grep -E "_Filter|_Storage|_ChunkSizes" | sed -n "1,8p"
    cmp <("$ncdump" "$input" | sed -n '/^data:/,$p') <("$ncdump" "$data/$out.nc" | sed -n '/^data:/,$p') >/dev/null \
      && echo "values of every variable identical to the input: yes" || die "$out.nc data differs from the input"
  done
  log "nccopy to NCZarr with zstd (32015), HDF5_PLUGIN_PATH unset: the codec as .zarray stores it, readable by zarr-python"
  rm -rf "$data/zstd.zarr"
  "$nccopy" -F '*,32015,3' "$input" "file://$data/zstd.zarr#mode=nczarr,file"
  local zarray; zarray=$(find "$data/zstd.zarr" -name .zarray | sort | tail -n 1)
  grep -o '"compressor": *{[^}]*}' "$zarray" | sed "s|^|$(basename "$(dirname "$zarray")")/.zarray: |"
  cmp <("$ncdump" "$input" | sed -n '/^data:/,$p') <("$ncdump" "file://$data/zstd.zarr#mode=nczarr,file" | sed -n '/^data:/,$p') \
    >/dev/null && echo "values of every variable identical to the input: yes" || die "zstd.zarr data differs from the input"
  log "file sizes (bytes)"
  for out in "$input" "$data/plain.nc" "$data/bzip2.nc" "$data/zstd.nc"; do
    printf '%12d  %s\n' "$(stat -c %s "$out")" "$(basename "$out")"
  done
  printf '%12d  %s\n' "$(find "$data/zstd.zarr" -type f -exec stat -c %s {} + | awk '{ n += $1 } END { print n }')" "zstd.zarr (all files)"
}

case "${1:-}" in
  setup) setup ;;
  build) build ;;
  demo) demo ;;
  bench-nczarr) bench_nczarr ;;
  bench-filters) bench_filters ;;
  test) run_all_tests ;;
  rust|headers|abi|differential|netcdf-suite|symbol-provenance|c|interop|valgrind|fuzz)
    step=${1//-/_}; build; "test_$step" ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
