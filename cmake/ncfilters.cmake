# SPDX-License-Identifier: BSD-3-Clause
# ncfilters.cmake -- build netcdf-c (a release in NCFILTERS_KNOWN_RELEASES below) with its filter
# internals provided by ncfilters.
#
# Load it into an unmodified netcdf-c source tree:
#   cmake -S netcdf-c-4.10.1 -B build -DCMAKE_PROJECT_INCLUDE=/path/to/ncfilters/cmake/ncfilters.cmake ...
#
# CMake runs this file at the end of netcdf-c's project() call. It then:
#   * puts ncfilters' include/ ahead of netcdf-c's own, and force-includes cmake/ncfilters_prelude.h,
#     so the library, tests and plugins compile against the cbindgen-generated netcdf_filter*.h;
#   * at the end of the top-level CMakeLists.txt (cmake_language(DEFER)), removes
#     libdispatch/dfilter.c from the `dispatch` object library, replaces daux.c with a copy
#     that lacks the ncaux_h5filterspec_* code, removes libhdf5/hdf5filter.c from `netcdfhdf5`
#     and libnczarr/zfilter.c from `nczarr`, compiles zsync.c, zxcache.c and ncdump.c from copies
#     with small fixes (see ncfilters_nczarr_fixes, ncfilters_ncdump_fixes), builds ncfilters with cargo (release) and
#     links libncfilters.a whole-archive into libnetcdf.so (into libnetcdf.a, for a static build);
#   * adapts to netcdf-c's configuration: with plugins off there are none to replace, and with NCZarr
#     filters off ncfilters brings them (ncfilters_nczarr_filters).
#
# Options:
#   NCFILTERS_CARGO             cargo executable (default: found on PATH or in ~/.cargo/bin)
#   NCFILTERS_CARGO_TARGET_DIR  cargo's target directory (default: <build>/ncfilters-cargo)
#   NCFILTERS_PLUGINS           ON (default): the deflate, shuffle, fletcher32, szip, bzip2, zstd
#                               and blosc plugins and the two codec-defaults libraries in
#                               <build>/plugins are ncfilters' Rust ones (plugins/), built with
#                               cargo and copied over netcdf-c's C plugin targets (where
#                               netcdf-c builds plugins: not with plugins off, nor static).
#   NCFILTERS_CODEC_DIALECT     codec JSON written to NCZarr metadata: numeric (default; what
#                               zarr-python reads) or legacy (netcdf-c 4.9.0's text). The
#                               environment variable of the same name overrides it at run time.
#   NCFILTERS_CLI               ON (default): build and install the `ncfilters` command
#                               (tools/ncfilters-cli), linked against this build's libnetcdf.
#   NCFILTERS_CARGO_HOME        where cargo keeps its state (CARGO_HOME). Default: with vendor/
#                               (the release tarball), <build>/ncfilters-cargo-home, so that the
#                               build never reads HOME (debhelper replaces it); from a clone,
#                               cargo's own default.
#   NCFILTERS_CARGO_ARGS        more arguments for every cargo build (a list).
#   NCFILTERS_SYSTEM_ZSTD       OFF (default): zstd from the libzstd source bundled in the zstd-sys
#                               crate; ON: link the system's libzstd (libzstd-dev, libzstd-devel;
#                               found with pkg-config, or by CMake where there is none).
#   NCFILTERS_SYSTEM_LIBS       OFF (default): deflate on zlib-rs and bzip2 on libbz2-rs (Rust);
#                               ON, the distribution build: deflate, bzip2 and zstd on the
#                               system's zlib, libbz2 and libzstd (found by CMake; it implies
#                               NCFILTERS_SYSTEM_ZSTD). With Debian's crates, apply
#                               packaging/debian-crates.patch first (docs/packaging.md).
#   NCFILTERS_RUST_TARGET       when cross-compiling (a CMake toolchain file), Rust's target
#                               triple; default: CMAKE_C_COMPILER_TARGET's, else on Apple the one
#                               CMAKE_OSX_ARCHITECTURES names, else the C compiler's
#                               (-dumpmachine), e.g. aarch64-linux-gnu gives
#                               aarch64-unknown-linux-gnu. A universal (two-architecture) Mac
#                               build is refused at configure time. The layout
#                               check then runs a program of that target through
#                               CMAKE_CROSSCOMPILING_EMULATOR, or without one only compiles it.
#   NCFILTERS_NETCDF_LIKE       empty (default); for a netcdf-c version ncfilters does not know (a
#                               point release, a snapshot of main), the known release whose
#                               behaviour to build it with, e.g. 4.10.1 (docs/packaging.md).
#
# The release tarball (`cargo xtask dist`) carries the crates it needs in vendor/: cargo then runs
# with --offline --frozen and never reaches for the network. From a clone it runs with --locked.
#
# `cmake --install` installs what netcdf-c installs, with ncfilters' headers, truthful metadata
# (netcdf_meta.h, nc-config, libnetcdf.settings), the Rust plugins and the `ncfilters` command:
# see cmake/ncfilters_install.cmake.

if(CMAKE_VERSION VERSION_LESS 3.24) # $<LINK_LIBRARY:WHOLE_ARCHIVE,...>
  message(FATAL_ERROR "ncfilters needs CMake >= 3.24")
endif()

get_filename_component(NCFILTERS_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

find_program(NCFILTERS_CARGO cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin" REQUIRED)
set(NCFILTERS_CARGO_HOME "" CACHE PATH "CARGO_HOME for ncfilters' cargo builds (default: see ncfilters.cmake)")
set(NCFILTERS_CARGO_ARGS "" CACHE STRING "More arguments for ncfilters' cargo builds (a list)")
option(NCFILTERS_SYSTEM_ZSTD "Link the system's libzstd instead of compiling the one bundled in zstd-sys" OFF)
option(NCFILTERS_SYSTEM_LIBS "The distribution build: deflate, bzip2 and zstd on the system's zlib, libbz2 and libzstd" OFF)
set(NCFILTERS_RUST_TARGET "" CACHE STRING "Rust's target triple for a cross build (default: CMAKE_C_COMPILER_TARGET, a single CMAKE_OSX_ARCHITECTURES, or the C compiler's -dumpmachine)")
include("${CMAKE_CURRENT_LIST_DIR}/ncfilters_rust_target.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/ncfilters_platform.cmake")
ncfilters_platform(NCFILTERS_PLATFORM)

# NCFILTERS_BUILD, e.g. "0.3.0 (git 1a2b3c4d5e6f)", goes into libnetcdf.settings, nc-config --all and
# the report (logic/build.rs reads NCFILTERS_BUILD_SOURCE).
include("${CMAKE_CURRENT_LIST_DIR}/ncfilters_provenance.cmake")
ncfilters_provenance()
message(STATUS "ncfilters: ${NCFILTERS_BUILD}")

# How every cargo build runs: NCFILTERS_CARGO_COMMON_ENV (environment) and NCFILTERS_CARGO_FLAGS.
function(ncfilters_cargo_settings)
  set(env "NCFILTERS_BUILD_SOURCE=${NCFILTERS_BUILD_SOURCE}")
  set(flags)
  set(target_flags)
  ncfilters_rust_target(triple compiler_target)
  if(NOT triple STREQUAL "")
    # netcdf-c is built for another machine (Debian's and conda-forge's cross builds; a Mac's
    # other architecture): cargo builds for the same target, compiles C and links with the same
    # compiler.
    string(REPLACE "-" "_" triple_underscored "${triple}")
    string(TOUPPER "${triple_underscored}" triple_upper)
    set(target_flags --target "${triple}") # for builds, not for `cargo metadata`
    list(APPEND env "CARGO_TARGET_${triple_upper}_LINKER=${CMAKE_C_COMPILER}"
                    "CC_${triple_underscored}=${CMAKE_C_COMPILER}" "AR_${triple_underscored}=${CMAKE_AR}"
                    "PKG_CONFIG_ALLOW_CROSS=1")
    if(PKG_CONFIG_EXECUTABLE)
      list(APPEND env "PKG_CONFIG_${triple_underscored}=${PKG_CONFIG_EXECUTABLE}")
    endif()
    if(compiler_target)
      # The compiler's target comes from CMake, not its name: rustc's links say it too (cc-rs
      # tells clang the target of each compile itself).
      list(APPEND env "CARGO_TARGET_${triple_upper}_RUSTFLAGS=-Clink-arg=${compiler_target}")
    endif()
    if(CMAKE_CROSSCOMPILING_EMULATOR)
      list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " runner)
      list(APPEND env "CARGO_TARGET_${triple_upper}_RUNNER=${runner}")
    endif()
    set(NCFILTERS_CARGO_OUTPUT "${triple}/" PARENT_SCOPE)
    set(NCFILTERS_CROSS_TARGET "${triple}" PARENT_SCOPE)
  else()
    # The C code the crates compile (the shims, the bundled libzstd) with netcdf-c's C compiler.
    # Set here, as configure's environment differs from the build's (CMake has CC set while it
    # configures): with CC unpinned cargo would compile those crates again at build time.
    list(APPEND env "CC=${CMAKE_C_COMPILER}")
    set(NCFILTERS_CARGO_OUTPUT "" PARENT_SCOPE)
    set(NCFILTERS_CROSS_TARGET "" PARENT_SCOPE)
  endif()
  # The oldest macOS netcdf-c is built for, for rustc and the crates' C too: without it they take
  # the build environment's MACOSX_DEPLOYMENT_TARGET or their own default, and ld64 warns at each
  # object built for a newer macOS than libnetcdf.
  if(APPLE AND CMAKE_OSX_DEPLOYMENT_TARGET)
    list(APPEND env "MACOSX_DEPLOYMENT_TARGET=${CMAKE_OSX_DEPLOYMENT_TARGET}")
  endif()
  # The SDK CMake gives as -isysroot, for rustc's links and the crates' C: without it they ask
  # xcrun, which a cross build lacks, and a Mac may answer with another SDK.
  if(APPLE AND IS_DIRECTORY "${CMAKE_OSX_SYSROOT}")
    list(APPEND env "SDKROOT=${CMAKE_OSX_SYSROOT}")
  endif()
  set(cargo_home "${NCFILTERS_CARGO_HOME}")
  if(IS_DIRECTORY "${NCFILTERS_ROOT}/vendor")
    # The release tarball: its crates, never the network. Its .cargo/config.toml points cargo at
    # vendor/ (every cargo command here runs in NCFILTERS_ROOT, where cargo reads it).
    if(NOT EXISTS "${NCFILTERS_ROOT}/.cargo/config.toml")
      message(FATAL_ERROR "ncfilters: ${NCFILTERS_ROOT}/vendor without .cargo/config.toml: an incomplete release tarball")
    endif()
    list(APPEND flags --offline --frozen)
    set(resolve) # metadata resolves every crate: one missing from vendor/ fails configure
    if(cargo_home STREQUAL "")
      set(cargo_home "${CMAKE_BINARY_DIR}/ncfilters-cargo-home")
    endif()
    set(mode "offline, from ${NCFILTERS_ROOT}/vendor")
  elseif(EXISTS "${NCFILTERS_ROOT}/Cargo.lock")
    list(APPEND flags --locked)
    set(resolve --no-deps)
    set(mode "crates from the registry (no vendor/: a clone, not the release tarball)")
  else()
    # Neither vendor/ nor Cargo.lock: a distribution's build from its own crates (Debian removes
    # the lock, and CARGO_HOME's source replacement names its registry): cargo resolves them from
    # what that registry has, and writes the lock.
    set(resolve) # metadata resolves every crate: one the registry lacks fails configure
    set(mode "crates cargo resolves (no vendor/, no Cargo.lock: a distribution's own)")
  endif()
  if(NOT cargo_home STREQUAL "")
    file(MAKE_DIRECTORY "${cargo_home}")
    list(APPEND env "CARGO_HOME=${cargo_home}")
    string(APPEND mode "; CARGO_HOME ${cargo_home}")
  endif()
  # rustup's cargo finds its toolchain through RUSTUP_HOME, by default under HOME: keep the one of
  # configure time, for a build step whose HOME differs.
  get_filename_component(cargo_dir "${NCFILTERS_CARGO}" DIRECTORY)
  if(EXISTS "${cargo_dir}/rustup")
    if(DEFINED ENV{RUSTUP_HOME})
      list(APPEND env "RUSTUP_HOME=$ENV{RUSTUP_HOME}")
    elseif(IS_DIRECTORY "$ENV{HOME}/.rustup")
      list(APPEND env "RUSTUP_HOME=$ENV{HOME}/.rustup")
    endif()
  endif()
  if(NCFILTERS_SYSTEM_LIBS)
    # The distribution build: the crates' system backends, and every library found here, by CMake
    # as netcdf-c finds its own, so that no build script falls back to a bundled copy.
    list(APPEND flags --features=ncfilters-core/system-libs)
    set(NCFILTERS_SYSTEM_ZSTD ON)
    set(system_libraries "z:z:zlib" "bzip2:bz2:libbz2")
    set(link_libraries z bz2)
    string(APPEND mode "; the system's zlib, libbz2 and libzstd")
  else()
    set(system_libraries)
    set(link_libraries)
  endif()
  if(NCFILTERS_SYSTEM_ZSTD)
    list(APPEND link_libraries zstd)
    find_program(NCFILTERS_PKG_CONFIG NAMES pkg-config pkgconf DOC "pkg-config, which finds the system's libzstd")
    if(NCFILTERS_PKG_CONFIG OR DEFINED ENV{PKG_CONFIG})
      # zstd-sys' build script then links the libzstd pkg-config finds, and compiles none.
      list(APPEND env "ZSTD_SYS_USE_PKG_CONFIG=1")
      if(NOT NCFILTERS_SYSTEM_LIBS)
        string(APPEND mode "; the system's libzstd")
      endif()
    else()
      # No pkg-config (Debian 12's netcdf does not build-depend on it): CMake finds libzstd, and
      # cargo's override of zstd-sys' build script (its `links = "zstd"`) links it.
      list(APPEND system_libraries "zstd:zstd:libzstd")
      string(APPEND mode "; the system's libzstd (no pkg-config)")
    endif()
  endif()
  if(system_libraries)
    # cargo's override of a -sys crate's build script (by its `links` key): link this library.
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} "${NCFILTERS_CARGO}" -vV
                    OUTPUT_VARIABLE cargo_version RESULT_VARIABLE failed)
    if(failed OR NOT cargo_version MATCHES "\nhost: ([^\n]+)")
      message(FATAL_ERROR "ncfilters: `${NCFILTERS_CARGO} -vV` names no host target:\n${cargo_version}")
    endif()
    set(rust_target "${CMAKE_MATCH_1}")
    if(target_flags)
      set(rust_target "${triple}")
    endif()
    set(overrides "")
    foreach(entry IN LISTS system_libraries)
      string(REPLACE ":" ";" entry "${entry}")
      list(GET entry 0 links)
      list(GET entry 1 library)
      list(GET entry 2 package)
      string(TOUPPER "NCFILTERS_${library}_LIBRARY" variable)
      find_library(${variable} ${library} DOC "the system's ${package} (NCFILTERS_SYSTEM_LIBS, NCFILTERS_SYSTEM_ZSTD)")
      if(NOT ${variable})
        message(FATAL_ERROR "ncfilters: the system's ${package} was not found: install its development package "
                            "(${package}-dev, ${package}-devel), or set ${variable} to the library")
      endif()
      get_filename_component(directory "${${variable}}" DIRECTORY)
      string(APPEND overrides "[target.${rust_target}.${links}]\nrustc-link-search = [\"${directory}\"]\nrustc-link-lib = [\"${library}\"]\n")
      string(APPEND mode "; ${${variable}}")
    endforeach()
    set(overrides_file "${CMAKE_BINARY_DIR}/ncfilters-system-libraries.toml")
    file(WRITE "${overrides_file}" "${overrides}")
    list(APPEND flags --config "${overrides_file}")
  endif()
  list(APPEND flags ${NCFILTERS_CARGO_ARGS})
  # A cargo that cannot run, or a vendor/ that lacks a crate, fails here, at configure time.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} "${NCFILTERS_CARGO}" metadata --format-version 1 ${resolve} ${flags}
                          --manifest-path "${NCFILTERS_ROOT}/Cargo.toml"
                  WORKING_DIRECTORY "${NCFILTERS_ROOT}" RESULT_VARIABLE failed OUTPUT_QUIET ERROR_VARIABLE error)
  if(failed)
    message(FATAL_ERROR "ncfilters: ${NCFILTERS_CARGO} cannot read ncfilters' workspace (${mode}):\n${error}")
  endif()
  if(target_flags)
    string(APPEND mode "; for ${triple}")
  endif()
  message(STATUS "ncfilters: cargo ${NCFILTERS_CARGO}: ${mode}")
  # libnetcdf links them itself: whole-archive, the staticlib's calls into them must resolve there.
  set(NCFILTERS_SYSTEM_LINK_LIBS ${link_libraries} PARENT_SCOPE)
  set(NCFILTERS_CARGO_COMMON_ENV ${env} PARENT_SCOPE)
  set(NCFILTERS_CARGO_FLAGS ${flags} ${target_flags} PARENT_SCOPE)
endfunction()
ncfilters_cargo_settings()
set(NCFILTERS_CARGO_TARGET_DIR "${CMAKE_BINARY_DIR}/ncfilters-cargo" CACHE PATH "cargo target directory for ncfilters")
# rustc names a staticlib as the platform does: libncfilters.a, ncfilters.lib with MSVC.
set(NCFILTERS_STATICLIB
    "${NCFILTERS_CARGO_TARGET_DIR}/${NCFILTERS_CARGO_OUTPUT}release/${CMAKE_STATIC_LIBRARY_PREFIX}ncfilters${CMAKE_STATIC_LIBRARY_SUFFIX}")
option(NCFILTERS_PLUGINS "Replace netcdf-c's standard filter plugins and codec-defaults libraries with ncfilters' Rust ones" ON)
set(NCFILTERS_CODEC_DIALECT "numeric" CACHE STRING "NCZarr codec JSON dialect written by default: numeric or legacy")
set_property(CACHE NCFILTERS_CODEC_DIALECT PROPERTY STRINGS numeric legacy)
option(NCFILTERS_CLI "Build and install the ncfilters command" ON)
if(NOT NCFILTERS_CODEC_DIALECT MATCHES "^(numeric|legacy)$")
  message(FATAL_ERROR "ncfilters: NCFILTERS_CODEC_DIALECT must be numeric or legacy, not '${NCFILTERS_CODEC_DIALECT}'")
endif()
# What rustc's `--print native-static-libs` lists for the staticlib; whole-archive pulls in all of
# std, so all of these must resolve under -Wl,--no-undefined. Before them, the system's
# compression libraries of NCFILTERS_SYSTEM_LIBS or _ZSTD.
ncfilters_native_libs_of(${NCFILTERS_PLATFORM} ncfilters_std_libs)
set(NCFILTERS_NATIVE_LIBS ${NCFILTERS_SYSTEM_LINK_LIBS} ${ncfilters_std_libs})

# Install rules run in the order they are declared, subdirectories' included (netcdf-c 4.9.0's
# minimum CMake leaves this OLD: its subdirectories' rules would run after ncfilters'), so that
# ncfilters' rules, declared last, overwrite the files of netcdf-c's they replace.
cmake_policy(SET CMP0082 NEW)

# netcdf-c 4.9.0 takes a -DPLUGIN_INSTALL_DIR=<directory> from PLUGIN_PATH, which it sets only for
# PLUGIN_INSTALL_DIR=YES (otherwise its configure fails): give it the directory.
if(DEFINED PLUGIN_INSTALL_DIR AND NOT PLUGIN_INSTALL_DIR MATCHES "^([Nn][Oo]|[Yy][Ee][Ss])$" AND NOT DEFINED PLUGIN_PATH)
  set(PLUGIN_PATH "${PLUGIN_INSTALL_DIR}")
endif()

# The netcdf-c release being built, from its own version: 4.9.3 and later name it in project(),
# 4.9.0 and 4.9.2 in SET(NC_VERSION_MAJOR|MINOR|PATCH …) after it. ncfilters mirrors each release's internal
# structs and behaviour, so a release it does not know is an error, never a guess, unless the
# packager names the known release it behaves like (NCFILTERS_NETCDF_LIKE): a point release, or a
# snapshot of netcdf-c's main branch, is then built with that release's behaviour, and configure
# stops unless every mirrored struct of that release matches this tree (ncfilters_layout_check).
# The same list as logic/build.rs's and xtask/src/release.rs's (checked by xtask's tests).
set(NCFILTERS_KNOWN_RELEASES 4.9.0 4.9.2 4.9.3 4.10.0 4.10.1)
set(NCFILTERS_NETCDF_LIKE "" CACHE STRING
    "Build a netcdf-c release ncfilters does not know with the behaviour of this known one (its struct layouts are checked)")
function(ncfilters_detect_release)
  set(version "${PROJECT_VERSION}")
  if(version STREQUAL "")
    file(STRINGS "${CMAKE_SOURCE_DIR}/CMakeLists.txt" lines REGEX "^[Ss][Ee][Tt]\\(NC_VERSION_(MAJOR|MINOR|PATCH) [0-9]+\\)")
    foreach(part MAJOR MINOR PATCH)
      set(${part} "")
      foreach(line IN LISTS lines)
        if(line MATCHES "NC_VERSION_${part} ([0-9]+)")
          set(${part} "${CMAKE_MATCH_1}")
        endif()
      endforeach()
    endforeach()
    if(NOT MAJOR STREQUAL "" AND NOT MINOR STREQUAL "" AND NOT PATCH STREQUAL "")
      set(version "${MAJOR}.${MINOR}.${PATCH}")
    endif()
  endif()
  string(REPLACE ";" ", " known "${NCFILTERS_KNOWN_RELEASES}")
  set(like "${NCFILTERS_NETCDF_LIKE}")
  if(NOT like STREQUAL "" AND NOT like IN_LIST NCFILTERS_KNOWN_RELEASES)
    message(FATAL_ERROR "ncfilters: NCFILTERS_NETCDF_LIKE is '${like}'; it names one of the releases ncfilters knows: ${known}")
  endif()
  if(version IN_LIST NCFILTERS_KNOWN_RELEASES)
    if(NOT like STREQUAL "" AND NOT like STREQUAL version)
      message(STATUS "ncfilters: NCFILTERS_NETCDF_LIKE=${like} is not used: ncfilters knows this release, ${version}")
    endif()
    set(as "${version}")
  elseif(like STREQUAL "")
    message(FATAL_ERROR "ncfilters: this is netcdf-c '${version}' (from ${CMAKE_SOURCE_DIR}/CMakeLists.txt); "
                        "ncfilters knows netcdf-c ${known}. To build this one with the behaviour of one of "
                        "those, configure with -DNCFILTERS_NETCDF_LIKE=<release>: ncfilters then checks its "
                        "struct layouts against this tree and stops here if they differ.")
  else()
    message(STATUS "ncfilters: netcdf-c ${version} is not a release ncfilters knows; built with ${like}'s "
                   "behaviour (NCFILTERS_NETCDF_LIKE), if its struct layouts match")
    set(as "${like}")
  endif()
  # NCFILTERS_NETCDF_VERSION: the release whose structs and behaviour ncfilters is built with;
  # NCFILTERS_NETCDF_TREE_VERSION: the tree's own.
  set(NCFILTERS_NETCDF_VERSION "${as}" PARENT_SCOPE)
  set(NCFILTERS_NETCDF_TREE_VERSION "${version}" PARENT_SCOPE)
endfunction()
ncfilters_detect_release()
message(STATUS "ncfilters: netcdf-c ${NCFILTERS_NETCDF_TREE_VERSION}")
# What differs between the releases' build systems and sources, each fact with the first release
# that has it (as logic/build.rs's RELEASE_CFGS); each sets NCFILTERS_<fact> ON or OFF:
#   PLUGIN_PATH_RELEASE  its own plugin-path code (dplugins.c, hdf5plugins.c, zplugins.c and
#                        daux.c's ncaux_plugin_path_*), which ncfilters replaces;
#   NETCDF_OPTIONS       options and config.h macros named NETCDF_ENABLE_* (ENABLE_* before), the
#                        NCZarr sources reindented, zfilter.c a source only with NCZarr filters on;
#   PARALLEL_LAYOUT      NC_FILE_INFO_T's MPI fields guarded by USE_PARALLEL (USE_PARALLEL4 before).
set(NCFILTERS_RELEASE_FACTS PLUGIN_PATH_RELEASE 4.9.3 NETCDF_OPTIONS 4.9.3 PARALLEL_LAYOUT 4.9.2)
function(ncfilters_release_facts)
  set(facts ${NCFILTERS_RELEASE_FACTS})
  while(facts)
    list(POP_FRONT facts fact since)
    if(NCFILTERS_NETCDF_VERSION VERSION_GREATER_EQUAL since)
      set(NCFILTERS_${fact} ON PARENT_SCOPE)
    else()
      set(NCFILTERS_${fact} OFF PARENT_SCOPE)
    endif()
  endwhile()
endfunction()
ncfilters_release_facts()

include_directories(BEFORE "${NCFILTERS_ROOT}/include")
# netcdf-c's own headers quote-include their neighbouring netcdf_filter.h; see the prelude.
add_compile_options("$<$<COMPILE_LANGUAGE:C>:SHELL:-include \"${NCFILTERS_ROOT}/cmake/ncfilters_prelude.h\">")
message(STATUS "ncfilters: ${NCFILTERS_ROOT} (headers from ${NCFILTERS_ROOT}/include)")

# Remove the named sources from a target; fail loudly if any is not there, so a
# netcdf-c layout change cannot silently leave the C implementation in place.
function(ncfilters_remove_sources target)
  get_target_property(sources ${target} SOURCES)
  foreach(name IN LISTS ARGN)
    list(FIND sources "${name}" index)
    if(index EQUAL -1)
      message(FATAL_ERROR "ncfilters: ${name} is not a source of target ${target}")
    endif()
    list(REMOVE_ITEM sources "${name}")
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${sources})
  message(STATUS "ncfilters: removed ${ARGN} from target ${target}")
endfunction()

# daux.c mixes the filter-spec parser (replaced) with ncaux_* functions ncgen needs
# (kept). Write a copy without the parser: everything from its "Forward" banner up to
# the "Wrappers to export" banner, plus the filterspec_cvt forward declaration.
function(ncfilters_write_daux_without_filterspec out)
  set(daux "${netCDF_SOURCE_DIR}/libdispatch/daux.c")
  file(READ "${daux}" text)
  set(begin_marker "/* Forward */")
  set(end_marker "/* Wrappers to export selected functions from libnetcdf */")
  string(FIND "${text}" "${begin_marker}" begin)
  string(FIND "${text}" "${end_marker}" end)
  if(begin EQUAL -1 OR end EQUAL -1 OR NOT begin LESS end)
    message(FATAL_ERROR "ncfilters: cannot find the filter-spec section of ${daux}")
  endif()
  string(SUBSTRING "${text}" 0 ${begin} head)
  string(SUBSTRING "${text}" ${end} -1 tail)
  set(cvt_decl "static int filterspec_cvt(const char* txt, size_t* nparamsp, unsigned int* params);")
  string(REPLACE "${cvt_decl}" "" head "${head}")
  if(NCFILTERS_PLUGIN_PATH_RELEASE)
    # The ncaux_plugin_path_* helpers, from their banner up to the function after them
    # (4.10.1's ncaux_parse_provenance) or the end of the file.
    set(path_begin_marker "/* Path List Utilities */")
    string(FIND "${tail}" "${path_begin_marker}" path_begin)
    string(FIND "${tail}" "ncaux_plugin_path_stringset(int pathlen, const char* path)" path_last)
    if(path_begin EQUAL -1 OR path_last EQUAL -1 OR NOT path_begin LESS path_last)
      message(FATAL_ERROR "ncfilters: cannot find the plugin-path helpers of ${daux}")
    endif()
    string(SUBSTRING "${tail}" ${path_last} -1 after)
    string(FIND "${after}" "\n}\n" body_end)
    if(body_end EQUAL -1)
      message(FATAL_ERROR "ncfilters: cannot find the end of ncaux_plugin_path_stringset in ${daux}")
    endif()
    math(EXPR rest_begin "${path_last} + ${body_end} + 3")
    string(SUBSTRING "${tail}" 0 ${path_begin} tail_head)
    string(SUBSTRING "${tail}" ${rest_begin} -1 tail_rest)
    set(tail "${tail_head}${tail_rest}")
    string(FIND "${head}${tail}" "ncaux_plugin_path_" leftover)
    if(NOT leftover EQUAL -1)
      message(FATAL_ERROR "ncfilters: plugin-path helper code left in the trimmed daux.c")
    endif()
  endif()
  string(FIND "${head}${tail}" "h5filterspec" leftover)
  if(NOT leftover EQUAL -1)
    message(FATAL_ERROR "ncfilters: filter-spec code left in the trimmed daux.c")
  endif()
  file(WRITE "${out}.tmp" "/* Generated by ncfilters.cmake from libdispatch/daux.c without its filter-spec parser (and plugin-path helpers). */\n${head}\n${tail}")
  file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
endfunction()

# Compile a copy of a netcdf-c source with exact texts replaced: pairs "old" "new" after the
# file name (each old text must occur exactly once in the original).
function(ncfilters_compile_fixed_copy target dir name)
  set(original "${netCDF_SOURCE_DIR}/${dir}/${name}")
  file(READ "${original}" text)
  # ARGV<n>, not ARGN: the C texts contain semicolons, which a list would split on.
  math(EXPR unpaired "(${ARGC} - 3) % 2")
  if(ARGC LESS 5 OR unpaired)
    message(FATAL_ERROR "ncfilters: ncfilters_compile_fixed_copy(${name}) needs old/new text pairs")
  endif()
  math(EXPR last_old "${ARGC} - 2")
  foreach(i RANGE 3 ${last_old} 2)
    math(EXPR j "${i} + 1")
    set(old "${ARGV${i}}")
    set(new "${ARGV${j}}")
    string(FIND "${text}" "${old}" first)
    string(FIND "${text}" "${old}" last REVERSE)
    if(first EQUAL -1 OR NOT first EQUAL last)
      message(FATAL_ERROR "ncfilters: the text to fix occurs ${first}/${last} in ${original}, not exactly once:\n${old}")
    endif()
    string(REPLACE "${old}" "${new}" text "${text}")
  endforeach()
  set(out "${CMAKE_BINARY_DIR}/ncfilters-generated/${name}")
  file(WRITE "${out}.tmp" "/* Generated by ncfilters.cmake from ${dir}/${name} with the fixes listed there. */\n${text}")
  file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
  ncfilters_remove_sources(${target} ${name})
  set_property(TARGET ${target} APPEND PROPERTY SOURCES "${out}")
  # The copy lives elsewhere; its quoted includes are found through the original directory.
  set_property(TARGET ${target} APPEND PROPERTY INCLUDE_DIRECTORIES "${netCDF_SOURCE_DIR}/${dir}")
endfunction()

# 4.9.0's NCZarr code around the filter engine, in files ncfilters does not replace, is fixed
# in compiled copies (exact texts, each found once):
#  * zsync.c reads element 0 of an empty "filters": [] array (NULL dereference on open);
#  * zsync.c fails the whole nc_open when one variable's "compressor" is not an object, its
#    "filters" not a list or an entry of it not an object: every codec value now goes to
#    ncfilters_zarr_codec, which records a bad one as a broken filter of that variable alone
#    (its data and filter inquiries give NC_EFILTER, naming the variable, key and problem);
#  * zxcache.c trusts the length of a chunk read without filters: one stored compressed under
#    "compressor": null was read past its end. ncfilters_zarr_raw_chunk checks it.
#  * zxcache.c's flush drops the chunk's size from the cache's byte count when writing fails and
#    never adds it back (a later flush wraps the count and evicts from an empty list).
# (An encode failure leaves the cache entry alone: NCZ_applyfilterchain encodes a copy.)
set(NCFILTERS_ZSYNC_DECLS "#include \"zfilter.h\"
/* ncfilters: one codec value of .zarray (key \"compressor\", \"filters\" or \"filters[]\"). */
extern int ncfilters_zarr_codec(NC_FILE_INFO_T*, NC_VAR_INFO_T*, const char*, const NCjson*, int);")
set(NCFILTERS_ZXCACHE_DECLS "#include \"zfilter.h\"
/* ncfilters: NC_EFILTER, with a diagnostic, unless an unfiltered chunk has the chunk's byte size. */
extern int ncfilters_zarr_raw_chunk(NC_VAR_INFO_T*, size64_t);")
function(ncfilters_nczarr_fixes)
  # The two NCZ_filter_build calls are indented differently in 4.9.0/4.9.2 and from 4.9.3 on.
  if(NCFILTERS_NETCDF_OPTIONS)
    set(filters_indent "\t\t")
    set(compressor_indent "\t    ")
  else()
    set(filters_indent "\t\t    ")
    set(compressor_indent "\t\t")
  endif()
  ncfilters_compile_fixed_copy(nczarr libnczarr zsync.c
    "#include \"zfilter.h\""
    "${NCFILTERS_ZSYNC_DECLS}"
    "jfilter = NCJith(jvalue,k);"
    "jfilter = (k < (int)jvalue->list.len ? NCJith(jvalue,k) : NULL); /* ncfilters: [] has no element 0 */"
    "if(NCJsort(jvalue) != NCJ_ARRAY) {stat = NC_EFILTER; goto done;}"
    "if(NCJsort(jvalue) != NCJ_ARRAY) { /* ncfilters: a broken filter of this variable */
\t\t    if((stat = ncfilters_zarr_codec(file,var,\"filters\",jvalue,chainindex++))) goto done; } else"
    "if(NCJsort(jfilter) != NCJ_DICT) {stat = NC_EFILTER; goto done;}
${filters_indent}if((stat = NCZ_filter_build(file,var,jfilter,chainindex++))) goto done;"
    "if((stat = ncfilters_zarr_codec(file,var,\"filters[]\",jfilter,chainindex++))) goto done; /* ncfilters */"
    "if(NCJsort(jfilter) != NCJ_DICT) {stat = NC_EFILTER; goto done;}
${compressor_indent}if((stat = NCZ_filter_build(file,var,jfilter,chainindex++))) goto done;"
    "if((stat = ncfilters_zarr_codec(file,var,\"compressor\",jfilter,chainindex++))) goto done; /* ncfilters */")
  ncfilters_compile_fixed_copy(nczarr libnczarr zxcache.c
    "#include \"zfilter.h\""
    "${NCFILTERS_ZXCACHE_DECLS}"
    "    if(empty) {
\t/* fake the chunk */"
    "    if(!empty && !entry->isfiltered && (stat = ncfilters_zarr_raw_chunk(cache->var,entry->size))) goto done; /* ncfilters */
    if(empty) {
\t/* fake the chunk */"
    "if((stat=put_chunk(cache,entry)))
\t        goto done;"
    "if((stat=put_chunk(cache,entry)))
\t        {cache->used += entry->size; goto done;} /* ncfilters: the entry stays cached */")
endfunction()

# ncdump prints _Codecs from a buffer of att_len + 1 bytes as a C string, relying on 4.9.0's
# one-byte overrun (NCZ_codec_attr wrote a NUL after the text); ncfilters writes att_len bytes.
function(ncfilters_ncdump_fixes)
  ncfilters_compile_fixed_copy(ncdump ncdump ncdump.c
    "char* json = (char*)malloc(len+1);"
    "char* json = (char*)calloc(len+1,1); /* ncfilters: nc_get_att_text adds no NUL */")
endfunction()

# The Rust plugin libraries (plugins/) in place of netcdf-c's C plugin targets: those targets
# still build (other targets and scripts refer to them), then `ncfilters_plugins`, which runs
# after them on every build, puts the Rust libraries, of the same file names, in their place.
# The targets, NCFILTERS_RUST_PLUGINS, come from the table of standard filters; those in
# NCFILTERS_OPTIONAL_PLUGINS (h5szip, h5blosc) exist only when netcdf-c found their C library.
include("${NCFILTERS_ROOT}/cmake/ncfilters_plugins.cmake")
# netcdf-c builds no plugins with plugins OFF (Debian 13's configuration) or, from 4.9.3 on, as a
# static library: then there is nothing to replace, and the standard filters are built into
# libnetcdf. A configuration with some of the always-built plugin targets but not all is a layout
# ncfilters does not know, and an error. Sets NCFILTERS_REPLACES_PLUGINS in the caller.
function(ncfilters_replace_plugins)
  set(target_dir "${NCFILTERS_CARGO_TARGET_DIR}/plugins")
  set(copies)
  set(replaced)
  # Every plugin library is built (the install step installs them all, the optional ones too:
  # each loads its C library on first use), and those netcdf-c builds are copied in its place.
  # ncfilters-core among them, so that cargo takes the `ncfilters-core/system-libs` feature of
  # NCFILTERS_SYSTEM_LIBS (the plugins depend on it only through ncfilters-plugin).
  set(packages -p ncfilters-core)
  foreach(target IN LISTS NCFILTERS_RUST_PLUGINS)
    list(APPEND packages -p "ncfilters-plugin-${target}")
  endforeach()
  set(required ${NCFILTERS_RUST_PLUGINS})
  list(REMOVE_ITEM required ${NCFILTERS_OPTIONAL_PLUGINS})
  set(missing)
  foreach(target IN LISTS required)
    if(NOT TARGET ${target})
      list(APPEND missing ${target})
    endif()
  endforeach()
  if(missing STREQUAL required)
    message(STATUS "ncfilters: netcdf-c builds no filter plugins in this configuration (plugins off or a static "
                   "library): none to replace; the standard filters are built into libnetcdf")
    set(NCFILTERS_REPLACES_PLUGINS OFF PARENT_SCOPE)
    return()
  elseif(missing)
    message(FATAL_ERROR "ncfilters: netcdf-c builds some of its filter plugins but not ${missing}: "
                        "a plugin layout ncfilters does not know")
  endif()
  foreach(target stem IN ZIP_LISTS NCFILTERS_RUST_PLUGINS NCFILTERS_RUST_PLUGIN_STEMS)
    if(NOT TARGET ${target})
      continue() # an optional plugin whose C library netcdf-c did not find
    endif()
    # cargo's file, in the file netcdf-c's target has (the same name but for 4.9.0 and 4.9.2 on MinGW).
    ncfilters_plugin_file_of(${NCFILTERS_PLATFORM} ${stem} file)
    list(APPEND copies COMMAND ${CMAKE_COMMAND} -E copy "${target_dir}/${NCFILTERS_CARGO_OUTPUT}plugin/${file}" "$<TARGET_FILE:${target}>")
    list(APPEND replaced ${target})
    # 4.10.1 installs its plugins with install(TARGETS), which would rewrite the build RPATH of the
    # file in the target's place, the Rust library, which has none, and fail: link the C target
    # with its install RPATH, so that there is nothing to rewrite.
    set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON)
  endforeach()
  add_custom_target(ncfilters_plugins ALL
    COMMAND ${CMAKE_COMMAND} -E env ${NCFILTERS_CARGO_COMMON_ENV} "CARGO_TARGET_DIR=${target_dir}" "NCFILTERS_NETCDF_VERSION=${NCFILTERS_NETCDF_VERSION}"
            "${NCFILTERS_CARGO}" build --profile plugin ${NCFILTERS_CARGO_FLAGS} ${packages} --manifest-path "${NCFILTERS_ROOT}/Cargo.toml"
    ${copies}
    WORKING_DIRECTORY "${NCFILTERS_ROOT}"
    COMMENT "ncfilters: Rust plugins in place of netcdf-c's ${replaced}"
    USES_TERMINAL)
  add_dependencies(ncfilters_plugins ${replaced})
  message(STATUS "ncfilters: Rust plugins replace netcdf-c's ${replaced}")
  set(NCFILTERS_REPLACES_PLUGINS ON PARENT_SCOPE)
endfunction()

# The `ncfilters` command, built with cargo against this build's libnetcdf (its public API and
# ncfilters' own functions); installed next to nc-config, it finds the installed library through
# its RPATH.
function(ncfilters_cli)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(rpath "${CMAKE_INSTALL_LIBDIR}")
  else()
    ncfilters_relative_rpath_of(${NCFILTERS_PLATFORM} "${CMAKE_INSTALL_LIBDIR}" rpath)
  endif()
  set(NCFILTERS_CLI_EXECUTABLE "${NCFILTERS_CARGO_TARGET_DIR}/${NCFILTERS_CARGO_OUTPUT}release/ncfilters" PARENT_SCOPE)
  # The command links libnetcdf and none of the crates with filters: cargo refuses their features.
  set(flags ${NCFILTERS_CARGO_FLAGS})
  list(REMOVE_ITEM flags --features=ncfilters-core/system-libs)
  add_custom_target(ncfilters_cli ALL
    COMMAND ${CMAKE_COMMAND} -E env ${NCFILTERS_CARGO_ENV}
            "NCFILTERS_LIBNETCDF_DIR=$<TARGET_FILE_DIR:netcdf>" "NCFILTERS_CLI_RPATH=${rpath}"
            "${NCFILTERS_CARGO}" build --release ${flags} -p ncfilters-cli --features ncfilters-cli/binary
            --manifest-path "${NCFILTERS_ROOT}/Cargo.toml"
    WORKING_DIRECTORY "${NCFILTERS_ROOT}"
    COMMENT "ncfilters: the ncfilters command"
    VERBATIM USES_TERMINAL)
  add_dependencies(ncfilters_cli netcdf)
endfunction()

# A parallel netcdf-c (ENABLE_PARALLEL4 found a parallel HDF5: USE_PARALLEL4) has another
# NC_FILE_INFO_T layout, with the file's MPI_Comm and MPI_Info, whose size depends on the MPI
# (pointers in OpenMPI, ints in MPICH); with HDF5_SUPPORTS_PAR_FILTERS (HDF5 >= 1.10.3) a filter on
# a parallel file means collective access, without it NC_EINVAL. Sets NCFILTERS_CARGO_FEATURES and
# NCFILTERS_MPI_HANDLE_SIZE in the caller.
function(ncfilters_parallel_features)
  set(features)
  set(handle_size "")
  # 4.9.0 lays out NC_FILE_INFO_T by USE_PARALLEL4, later releases by USE_PARALLEL (also PnetCDF).
  if(NCFILTERS_PARALLEL_LAYOUT)
    set(parallel_layout ${USE_PARALLEL})
  else()
    set(parallel_layout ${USE_PARALLEL4})
  endif()
  if(parallel_layout)
    list(APPEND features --features parallel4)
    if(HDF5_SUPPORTS_PAR_FILTERS)
      list(APPEND features --features hdf5-parallel-filters)
    endif()
    include(CheckTypeSize)
    set(CMAKE_EXTRA_INCLUDE_FILES mpi.h)
    set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS} ${MPI_C_INCLUDE_PATH})
    check_type_size(MPI_Comm NCFILTERS_SIZEOF_MPI_COMM)
    check_type_size(MPI_Info NCFILTERS_SIZEOF_MPI_INFO)
    if(NOT NCFILTERS_SIZEOF_MPI_COMM OR NOT NCFILTERS_SIZEOF_MPI_COMM EQUAL NCFILTERS_SIZEOF_MPI_INFO)
      message(FATAL_ERROR "ncfilters: cannot mirror this MPI's handles (sizeof MPI_Comm '${NCFILTERS_SIZEOF_MPI_COMM}', "
                          "MPI_Info '${NCFILTERS_SIZEOF_MPI_INFO}'); ncfilters knows pointer (OpenMPI) and int (MPICH) handles")
    endif()
    set(handle_size ${NCFILTERS_SIZEOF_MPI_COMM})
    message(STATUS "ncfilters: parallel netCDF-4 (MPI handles of ${handle_size} bytes; "
                   "parallel filters: ${HDF5_SUPPORTS_PAR_FILTERS})")
  endif()
  set(NCFILTERS_CARGO_FEATURES ${features} PARENT_SCOPE)
  set(NCFILTERS_MPI_HANDLE_SIZE "${handle_size}" PARENT_SCOPE)
endfunction()

# netcdf-c turns NCZarr's filters off with its plugins (Debian 13 builds so) or by its option
# (ENABLE_NCZARR_FILTERS, NETCDF_ENABLE_NCZARR_FILTERS from 4.9.3 on), and then compiles stubs in
# zdispatch.c that accept any filter and store none. ncfilters' standard filters need no plugin,
# so NCZarr keeps its filters in every configuration: netcdf-c's NCZarr sources are compiled with
# the macro its configure left unset, which drops the stubs and compiles the code that writes and
# reads codecs; ncfilters provides what zfilter.c and zplugins.c would. The NCZarr internals stock
# does not export in that configuration stay out of libnetcdf's dynamic symbols (see
# ncfilters_hidden_netcdf_functions). Sets NCFILTERS_NCZARR_FILTERS_ADDED in the caller.
function(ncfilters_nczarr_filters)
  # The variable and the config.h macro have the same name.
  if(NCFILTERS_NETCDF_OPTIONS)
    set(macro NETCDF_ENABLE_NCZARR_FILTERS)
  else()
    set(macro ENABLE_NCZARR_FILTERS)
  endif()
  if(${macro})
    set(NCFILTERS_NCZARR_FILTERS_ADDED OFF PARENT_SCOPE)
    return()
  endif()
  set_property(TARGET nczarr APPEND PROPERTY COMPILE_DEFINITIONS "${macro}=1")
  set(NCFILTERS_NCZARR_FILTERS_ADDED ON PARENT_SCOPE)
  message(STATUS "ncfilters: netcdf-c has NCZarr filters off (${macro}); ncfilters brings them: "
                 "the standard filters are built in, plugins are still found on the plugin path")
endfunction()

# What ncfilters exports in place of zfilter.c and zplugins.c from 4.9.3 on besides zdispatch.c's
# four stub names: stock exports none of it when its NCZarr filters are off. (4.9.0 and 4.9.2
# compile zfilter.c either way and export all of it but those four.)
set(NCFILTERS_NCZARR_FILTER_INTERNALS
  NCZ_addfilter NCZ_applyfilterchain NCZ_codec_attr NCZ_codec_freelist NCZ_filter_build NCZ_filter_finalize
  NCZ_filter_freelists NCZ_filter_initialize NCZ_filter_jsonize NCZ_filter_remove NCZ_filter_setup
  NCZ_load_all_plugins NCZ_plugin_loaded NCZ_plugin_loaded_byname
  NCZ_plugin_path_finalize NCZ_plugin_path_get NCZ_plugin_path_initialize NCZ_plugin_path_ndirs NCZ_plugin_path_set)

# The netcdf-c functions libnetcdf hides besides Rust's own symbols: the NCZarr filter internals
# when ncfilters added NCZarr's filters (stock exports none of them then, only zdispatch.c's four
# stubs, whose names ncfilters exports in their place).
function(ncfilters_hidden_netcdf_functions out)
  set(hidden)
  if(NCFILTERS_NCZARR_FILTERS_ADDED AND NCFILTERS_NETCDF_OPTIONS)
    set(hidden ${NCFILTERS_NCZARR_FILTER_INTERNALS})
  endif()
  set(${out} ${hidden} PARENT_SCOPE)
endfunction()

# A static libnetcdf.a carries ncfilters: libncfilters.a, linked into one object with only its C
# functions global (cmake/ncfilters_merge_archive.cmake), is added to it after each archive. The
# system libraries the Rust staticlib needs join netcdf's link interface (CMake consumers and
# netcdf-c's own programs link them; netcdf.pc and nc-config --static name them, see
# ncfilters_install.cmake).
function(ncfilters_link_static_netcdf)
  add_custom_command(TARGET netcdf POST_BUILD
    COMMAND ${CMAKE_COMMAND} "-DAR=${CMAKE_AR}" "-DLD=${CMAKE_LINKER}" "-DOBJCOPY=${CMAKE_OBJCOPY}"
            "-DARCHIVE=$<TARGET_FILE:netcdf>" "-DSTATICLIB=${NCFILTERS_STATICLIB}"
            -P "${NCFILTERS_ROOT}/cmake/ncfilters_merge_archive.cmake"
    COMMENT "ncfilters: libncfilters.a into $<TARGET_FILE_NAME:netcdf>, as one object"
    VERBATIM)
  set_property(TARGET netcdf APPEND PROPERTY LINK_LIBRARIES ${NCFILTERS_NATIVE_LIBS})
  set_property(TARGET netcdf APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${NCFILTERS_NATIVE_LIBS})
  message(STATUS "ncfilters: libnetcdf.a carries ${NCFILTERS_STATICLIB}; its users link ${NCFILTERS_NATIVE_LIBS}")
endfunction()

function(ncfilters_link_shared_netcdf)
  # netcdf uses the plain target_link_libraries signature and CMP0079 is unset, so
  # append to the property instead of calling target_link_libraries from here.
  set_property(TARGET netcdf APPEND PROPERTY LINK_LIBRARIES
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,ncfilters_static>" ${NCFILTERS_NATIVE_LIBS})
  if(WIN32)
    # A DLL exports what is marked dllexport, and ncfilters' Rust is not: the module-definition
    # file the cargo step writes (ncfilters_dll_exports) exports ncfilters' functions as stock's
    # netcdf.dll exports them.
    if(MSVC)
      set(exports "LINKER:/DEF:${NCFILTERS_DLL_DEF}")
    else()
      set(exports "${NCFILTERS_DLL_DEF}" "LINKER:-Map=${CMAKE_BINARY_DIR}/ncfilters-libnetcdf.map" "LINKER:--gc-sections")
    endif()
    set_property(TARGET netcdf APPEND PROPERTY LINK_OPTIONS ${exports})
    set_property(TARGET netcdf APPEND PROPERTY LINK_DEPENDS "${NCFILTERS_LINKED_STATICLIB}" "${NCFILTERS_DLL_DEF}")
    message(STATUS "ncfilters: netcdf.dll links ${NCFILTERS_LINKED_STATICLIB} (whole archive), exports by ${NCFILTERS_DLL_DEF}")
    return()
  endif()
  # The link map lets `cargo xtask symbol-provenance` prove where each replaced symbol comes from.
  # Rust's symbols stay out of the dynamic symbol table (exporting thousands of long mangled names
  # made ld.so touch 350 KiB more of the library at load), which lets the linker drop the parts of
  # std ncfilters does not use.
  set(symbols "${CMAKE_BINARY_DIR}/ncfilters-generated/ncfilters-libnetcdf.symbols")
  ncfilters_hidden_netcdf_functions(hidden)
  ncfilters_hidden_symbols_of(${NCFILTERS_PLATFORM} "${symbols}" "${CMAKE_BINARY_DIR}/ncfilters-libnetcdf.map"
                              "${hidden}" options)
  set_property(TARGET netcdf APPEND PROPERTY LINK_OPTIONS ${options})
  set_property(TARGET netcdf APPEND PROPERTY LINK_DEPENDS "${NCFILTERS_STATICLIB}" "${symbols}")
  message(STATUS "ncfilters: libnetcdf links ${NCFILTERS_STATICLIB} (whole archive)")
endfunction()

# netcdf.dll exports a function when netcdf-c declares or defines it EXTERNL (dllexport while the
# library builds), in a header or in the C file ncfilters replaces (dplugins.c's
# nc_plugin_path_initialize); Rust's `#[no_mangle]` functions are not dllexport. The functions this
# tree's library sources declare so are listed here (names only); after each cargo build,
# cmake/ncfilters_dll_exports.cmake keeps those the staticlib defines, with ncfilters.h's, in
# the module-definition file NCFILTERS_DLL_DEF. Sets NCFILTERS_DLL_DEF and
# NCFILTERS_DLL_DEF_COMMAND (the build step's command) in the caller.
function(ncfilters_dll_exports)
  set(dir "${CMAKE_BINARY_DIR}/ncfilters-generated")
  set(declared)
  foreach(subdir include libdispatch libhdf5 libnczarr)
    file(GLOB sources "${CMAKE_SOURCE_DIR}/${subdir}/*.h" "${CMAKE_SOURCE_DIR}/${subdir}/*.c")
    foreach(source IN LISTS sources)
      file(READ "${source}" text)
      string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " text "${text}") # comments
      string(REGEX MATCHALL "EXTERNL[^;{}()#]*[ \t\n*][A-Za-z_][A-Za-z0-9_]*[ \t\n]*\\(" found "${text}")
      foreach(declaration IN LISTS found)
        string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)[ \t\n]*\\($" name "${declaration}")
        list(APPEND declared "${CMAKE_MATCH_1}")
      endforeach()
    endforeach()
  endforeach()
  # ncfilters' own functions (include/ncfilters.h) are exported too.
  file(STRINGS "${NCFILTERS_ROOT}/include/ncfilters.h" lines REGEX "^[a-z].*[ *]ncfilters_[a-z_]+\\(")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "(ncfilters_[a-z_]+)\\(" name "${line}")
    list(APPEND declared "${CMAKE_MATCH_1}")
  endforeach()
  list(REMOVE_DUPLICATES declared)
  list(SORT declared)
  list(LENGTH declared count)
  if(count EQUAL 0)
    message(FATAL_ERROR "ncfilters: no source of ${CMAKE_SOURCE_DIR} declares an EXTERNL function")
  endif()
  list(JOIN declared "\n" text)
  file(WRITE "${dir}/ncfilters-dll-declared.txt.tmp" "${text}\n")
  file(COPY_FILE "${dir}/ncfilters-dll-declared.txt.tmp" "${dir}/ncfilters-dll-declared.txt" ONLY_IF_DIFFERENT)
  if(NOT CMAKE_NM)
    message(FATAL_ERROR "ncfilters: a Windows netcdf.dll needs an nm (CMAKE_NM), which lists the functions "
                        "ncfilters' staticlib defines for its module-definition file: MinGW-w64's, or LLVM's "
                        "llvm-nm with MSVC (-DCMAKE_NM=<path of llvm-nm>)")
  endif()
  # MinGW's Rust std carries split-DWARF members that must go (ncfilters_dll_exports.cmake); MSVC's
  # has none, and its CMAKE_AR is `lib`, which is no `ar`.
  set(split_dwarf_ar "${CMAKE_AR}")
  if(MSVC)
    set(split_dwarf_ar "")
  endif()
  set(def "${dir}/ncfilters-netcdf.def")
  get_filename_component(name "${NCFILTERS_STATICLIB}" NAME)
  set(linked "${dir}/${name}")
  set(NCFILTERS_DLL_DEF "${def}" PARENT_SCOPE)
  set(NCFILTERS_LINKED_STATICLIB "${linked}" PARENT_SCOPE)
  set(NCFILTERS_DLL_DEF_COMMAND
      COMMAND ${CMAKE_COMMAND} "-DNM=${CMAKE_NM}" "-DAR=${split_dwarf_ar}" "-DSTATICLIB=${NCFILTERS_STATICLIB}"
              "-DLINKED=${linked}" "-DDECLARED=${dir}/ncfilters-dll-declared.txt" "-DDEF=${def}"
              -P "${NCFILTERS_ROOT}/cmake/ncfilters_dll_exports.cmake"
      PARENT_SCOPE)
  message(STATUS "ncfilters: ${count} functions this tree declares EXTERNL or ncfilters.h declares; "
                 "netcdf.dll exports those ncfilters defines")
endfunction()

# Checked, not trusted: ncfilters reads netcdf-c's internal structs through mirrors chosen by the
# release (src/abi_layout.rs). A distribution's patch or a point release that moves a field would
# have the library read the wrong memory, so configure builds ncfilters-layout-check (with the
# library's features, release and target; cargo reuses the work when it builds the library), reads
# the C program it holds from the file (nothing of the target runs), compiles it against this
# tree's headers and config.h, and stops on any difference, naming the struct and the field. Where
# the program can run (a native build, or a cross build with CMAKE_CROSSCOMPILING_EMULATOR) it runs
# and also says both values; a cross build for a target nothing here runs (a Mac's from Linux,
# osx-arm64's from osx-64) compiles each check as a _Static_assert instead.
function(ncfilters_layout_check)
  set(dir "${CMAKE_BINARY_DIR}/ncfilters-generated")
  set(source "${dir}/ncfilters_layout_check.c")
  message(STATUS "ncfilters: checking ncfilters' mirrors of netcdf-c ${NCFILTERS_NETCDF_VERSION}'s structs against this tree")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${NCFILTERS_CARGO_ENV}
            "${NCFILTERS_CARGO}" build --quiet --release ${NCFILTERS_CARGO_FLAGS} -p ncfilters ${NCFILTERS_CARGO_FEATURES}
            --bin ncfilters-layout-check --manifest-path "${NCFILTERS_ROOT}/Cargo.toml"
    WORKING_DIRECTORY "${NCFILTERS_ROOT}"
    ERROR_VARIABLE error RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "ncfilters: cargo could not build ncfilters-layout-check (${failed}):\n${error}")
  endif()
  set(program_file "${NCFILTERS_CARGO_TARGET_DIR}/${NCFILTERS_CARGO_OUTPUT}release/ncfilters-layout-check${CMAKE_EXECUTABLE_SUFFIX}")
  # The program's text stands between its markers (abi_layout::embedded_layout_check); file(STRINGS)
  # escapes the semicolons of what it reads.
  set(begin_marker "NCFILTERS-LAYOUT-CHECK-BEGIN\n")
  file(STRINGS "${program_file}" held NEWLINE_CONSUME REGEX "${begin_marker}")
  string(FIND "${held}" "${begin_marker}" begin)
  string(FIND "${held}" "NCFILTERS-LAYOUT-CHECK-END" end)
  if(begin EQUAL -1 OR end LESS begin)
    message(FATAL_ERROR "ncfilters: ${program_file} holds no layout check between its markers")
  endif()
  string(LENGTH "${begin_marker}" skip)
  math(EXPR begin "${begin} + ${skip}")
  math(EXPR length "${end} - ${begin}")
  string(SUBSTRING "${held}" ${begin} ${length} program)
  string(REPLACE "\\;" ";" program "${program}")
  file(WRITE "${source}.tmp" "${program}")
  file(COPY_FILE "${source}.tmp" "${source}" ONLY_IF_DIFFERENT)
  set(includes "${CMAKE_BINARY_DIR}" "${CMAKE_BINARY_DIR}/include" "${CMAKE_SOURCE_DIR}/include"
      "${CMAKE_SOURCE_DIR}/libhdf5" "${CMAKE_SOURCE_DIR}/libnczarr" "${CMAKE_SOURCE_DIR}/libncpoco"
      ${HDF5_INCLUDE_DIRS} ${HDF5_INCLUDE_DIR} ${MPI_C_INCLUDE_DIRS} ${MPI_C_INCLUDE_PATH})
  if((CMAKE_CROSSCOMPILING OR NCFILTERS_CROSS_TARGET) AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
    try_compile(compiled "${dir}/layout-check" "${source}"
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${includes}"
      COMPILE_DEFINITIONS -DNCF_LAYOUT_COMPILE_ONLY
      OUTPUT_VARIABLE compile_output)
    # Each failed assertion's message, as the program's NCF_EQUAL and NCF_AT_LEAST word it; indented,
    # so that message() keeps each on its line.
    set(check "(sizeof\\([^)]*\\)|alignment of [^ ]+|offset of [^ ]+|size of [^ ]+)")
    string(REGEX MATCHALL "${check} (differs from|is smaller than) the ncfilters mirror" differences "${compile_output}")
    set(differs 0)
    if(differences)
      list(REMOVE_DUPLICATES differences)
      list(JOIN differences "\n  " differences)
      set(differences "  ${differences}")
      set(differs 1)
      set(compiled TRUE)
    endif()
    set(how "compiled as static assertions for ${NCFILTERS_CROSS_TARGET}: a cross build with no emulator")
  else()
    try_run(differs compiled "${dir}/layout-check" "${source}"
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${includes}"
      COMPILE_OUTPUT_VARIABLE compile_output
      RUN_OUTPUT_VARIABLE differences)
    set(how "compiled and run")
  endif()
  if(NOT compiled)
    message(FATAL_ERROR "ncfilters: the layout check (${source}) does not compile against this netcdf-c tree, "
                        "so ncfilters cannot mirror its structs:\n${compile_output}")
  endif()
  if(differs STREQUAL "FAILED_TO_RUN")
    message(FATAL_ERROR "ncfilters: the layout check (${source}) compiled but did not run: ${differences}")
  elseif(NOT differs EQUAL 0)
    message(FATAL_ERROR "ncfilters: this netcdf-c tree lays out its structs differently from netcdf-c "
                        "${NCFILTERS_NETCDF_VERSION}, whose layouts ncfilters mirrors (${source}):\n${differences}\n"
                        "A patch or a release that changes these structs needs an ncfilters that knows it.")
  endif()
  string(REGEX MATCHALL "\n    NCF_[A-Z_]+\\(" checks "${program}")
  list(LENGTH checks count)
  message(STATUS "ncfilters: ${count} sizes and offsets of netcdf-c's structs match ncfilters' mirrors (${how})")
endfunction()

function(ncfilters_edit_netcdf_targets)
  foreach(target dispatch netcdfhdf5 netcdf)
    if(NOT TARGET ${target})
      message(FATAL_ERROR "ncfilters: netcdf-c target '${target}' not found")
    endif()
  endforeach()

  if(NOT netCDF_VERSION MATCHES "^${NCFILTERS_NETCDF_TREE_VERSION}")
    message(FATAL_ERROR "ncfilters: netcdf-c calls itself ${netCDF_VERSION}, not ${NCFILTERS_NETCDF_TREE_VERSION}")
  endif()
  ncfilters_remove_sources(dispatch dfilter.c daux.c)
  ncfilters_remove_sources(netcdfhdf5 hdf5filter.c)
  if(NCFILTERS_PLUGIN_PATH_RELEASE)
    ncfilters_remove_sources(dispatch dplugins.c)
    ncfilters_remove_sources(netcdfhdf5 hdf5plugins.c)
  endif()
  if(TARGET nczarr)
    # From 4.9.3 on these are sources only with NETCDF_ENABLE_NCZARR_FILTERS.
    get_target_property(nczarr_sources nczarr SOURCES)
    foreach(name zfilter.c zplugins.c)
      if(name IN_LIST nczarr_sources)
        ncfilters_remove_sources(nczarr ${name})
      endif()
    endforeach()
    ncfilters_nczarr_fixes()
    ncfilters_nczarr_filters()
  endif()
  if(TARGET ncdump)
    ncfilters_ncdump_fixes()
  endif()
  set(daux_rest "${CMAKE_BINARY_DIR}/ncfilters-generated/daux_nonfilter.c")
  ncfilters_write_daux_without_filterspec("${daux_rest}")
  set_property(TARGET dispatch APPEND PROPERTY SOURCES "${daux_rest}")

  ncfilters_parallel_features()
  # What the core crate's build reads: the command builds with the same, so that it reuses the
  # library's build of the core instead of compiling it again.
  set(NCFILTERS_CARGO_ENV ${NCFILTERS_CARGO_COMMON_ENV} "CARGO_TARGET_DIR=${NCFILTERS_CARGO_TARGET_DIR}"
      "NCFILTERS_DEFAULT_CODEC_DIALECT=${NCFILTERS_CODEC_DIALECT}"
      "NCFILTERS_MPI_HANDLE_SIZE=${NCFILTERS_MPI_HANDLE_SIZE}"
      "NCFILTERS_NETCDF_VERSION=${NCFILTERS_NETCDF_VERSION}"
      "NCFILTERS_PLUGIN_SEARCH_PATH=${NETCDF_PLUGIN_SEARCH_PATH}")
  # The same, one VARIABLE=value a line, for a tool that builds against this tree's target
  # directory: with any other value cargo would compile the crates again.
  list(JOIN NCFILTERS_CARGO_ENV "\n" lines)
  file(WRITE "${CMAKE_BINARY_DIR}/ncfilters-cargo.env" "${lines}\n")
  ncfilters_layout_check()
  get_target_property(netcdf_type netcdf TYPE)
  set(NCFILTERS_DLL_DEF_COMMAND)
  set(NCFILTERS_DLL_DEF)
  set(NCFILTERS_LINKED_STATICLIB "${NCFILTERS_STATICLIB}")
  if(WIN32 AND netcdf_type STREQUAL "SHARED_LIBRARY")
    ncfilters_dll_exports()
  endif()
  add_custom_target(ncfilters_cargo
    COMMAND ${CMAKE_COMMAND} -E env ${NCFILTERS_CARGO_ENV}
            "${NCFILTERS_CARGO}" build --release ${NCFILTERS_CARGO_FLAGS} -p ncfilters ${NCFILTERS_CARGO_FEATURES}
            --manifest-path "${NCFILTERS_ROOT}/Cargo.toml"
    ${NCFILTERS_DLL_DEF_COMMAND}
    BYPRODUCTS "${NCFILTERS_STATICLIB}" ${NCFILTERS_DLL_DEF} "${NCFILTERS_LINKED_STATICLIB}"
    WORKING_DIRECTORY "${NCFILTERS_ROOT}"
    COMMENT "ncfilters: cargo build --release"
    USES_TERMINAL)
  set(NCFILTERS_REPLACES_PLUGINS OFF)
  if(NCFILTERS_PLUGINS)
    ncfilters_replace_plugins()
  endif()
  add_dependencies(netcdf ncfilters_cargo)
  if(netcdf_type STREQUAL "STATIC_LIBRARY")
    ncfilters_link_static_netcdf()
  else()
    add_library(ncfilters_static STATIC IMPORTED GLOBAL)
    set_property(TARGET ncfilters_static PROPERTY IMPORTED_LOCATION "${NCFILTERS_LINKED_STATICLIB}")
    ncfilters_link_shared_netcdf()
  endif()
  if(NCFILTERS_CLI AND netcdf_type STREQUAL "STATIC_LIBRARY")
    # The command is Rust and links libnetcdf; a static libnetcdf.a holds a second Rust std.
    message(STATUS "ncfilters: the ncfilters command is not built: it links a shared libnetcdf, and this build has none")
    set(NCFILTERS_CLI OFF)
  elseif(NCFILTERS_CLI)
    ncfilters_cli()
  endif()
  # Last, so that its install rules run after netcdf-c's (see CMP0082 above).
  include("${NCFILTERS_ROOT}/cmake/ncfilters_install.cmake")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL ncfilters_edit_netcdf_targets)
