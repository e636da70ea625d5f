# SPDX-License-Identifier: BSD-3-Clause
# ncfilters' install rules. ncfilters.cmake includes this file after netcdf-c's CMakeLists.txt has
# run, and install rules run in declaration order (CMP0082), so these run after netcdf-c's own and
# overwrite the files they replace:
#   * ncfilters' generated headers in place of netcdf-c's netcdf_filter.h and netcdf_filter_build.h,
#     and ncfilters.h (the `ncfilters_*` functions);
#   * netcdf_meta.h, nc-config and libnetcdf.settings, corrected to what the library does (zstd,
#     bzip2 and blosc are built in, whatever netcdf-c's configure found: the HAS macros, --has-zstd,
#     the standard filters' list; see ncfilters_truthful_copy);
#   * the Rust plugin libraries into netcdf-c's plugin directory (-DPLUGIN_INSTALL_DIR=YES or a path),
#     all of them: netcdf-c installs only those whose C library its configure found;
#   * the `ncfilters` command and its man page.

# Installs `files` (FILES or PROGRAMS) into `dir`, replacing what netcdf-c's rules installed
# there just before: file(INSTALL) skips a file whose time stamp matches the installed one to the
# second, so the old file is removed first.
function(ncfilters_install_replacing kind dir component)
  if(IS_ABSOLUTE "${dir}")
    set(installed "${dir}")
  else()
    set(installed "\${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
  foreach(file IN LISTS ARGN)
    get_filename_component(name "${file}" NAME)
    install(CODE "file(REMOVE \"\$ENV{DESTDIR}${installed}/${name}\")" COMPONENT ${component})
  endforeach()
  install(${kind} ${ARGN} DESTINATION "${dir}" COMPONENT ${component})
endfunction()

ncfilters_install_replacing(FILES "${CMAKE_INSTALL_INCLUDEDIR}" headers
  "${NCFILTERS_ROOT}/include/netcdf_filter.h" "${NCFILTERS_ROOT}/include/netcdf_filter_build.h"
  "${NCFILTERS_ROOT}/include/ncfilters.h")

# A copy of a file netcdf-c configured, with each regular expression replaced (pairs after `out`);
# every expression must match, so a changed template fails here instead of installing a lie.
function(ncfilters_truthful_copy in out)
  file(READ "${in}" text)
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 2 ${last} 2)
    math(EXPR j "${i} + 1")
    if(NOT text MATCHES "${ARGV${i}}")
      message(FATAL_ERROR "ncfilters: ${in} has no match for ${ARGV${i}}")
    endif()
    string(REGEX REPLACE "${ARGV${i}}" "${ARGV${j}}" text "${text}")
  endforeach()
  file(WRITE "${out}.tmp" "${text}")
  file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
endfunction()

set(generated "${CMAKE_BINARY_DIR}/ncfilters-generated")
if(NCFILTERS_NETCDF_VERSION VERSION_LESS 4.9.2)
  ncfilters_truthful_copy("${netCDF_BINARY_DIR}/include/netcdf_meta.h" "${generated}/netcdf_meta.h"
    "(#define NC_HAS_ZSTD[ \t]+)[01]" "\\11")
  # 4.9.0's CMake nc-config has no --has-zstd (its autotools one does): add it.
  ncfilters_truthful_copy("${netCDF_BINARY_DIR}/nc-config" "${generated}/nc-config"
    "(\n  --has-nczarr [^\n]*\n)" "\\1  --has-zstd      whether zstandard compression is available (ncfilters: built in)\n"
    "(\n[ \t]*echo \"  --has-nczarr [^\n]*\n)" "\\1        echo \"  --has-zstd      -> yes\"\n"
    "(\n[ \t]*--has-nczarr\\)\n)" "\n    --has-zstd)\n        echo yes\n        ;;\n\\1")
else()
  # 4.9.2 on: netcdf_meta.h also says whether blosc and bzip2 are there; nc-config has --has-zstd,
  # whose value its configure wrote ("ON" or ""; 4.9.2's template lacks the closing @, so it is
  # "@HAS_ZSTD" there) and which its shell turns into yes or no.
  ncfilters_truthful_copy("${netCDF_BINARY_DIR}/include/netcdf_meta.h" "${generated}/netcdf_meta.h"
    "(#define NC_HAS_ZSTD[ \t]+)[01]" "\\11"
    "(#define NC_HAS_BLOSC[ \t]+)[01]" "\\11"
    "(#define NC_HAS_BZ2[ \t]+)[01]" "\\11")
  ncfilters_truthful_copy("${netCDF_BINARY_DIR}/nc-config" "${generated}/nc-config"
    "\nhas_zstd=\"[^\"\n]*\"" "\nhas_zstd=\"yes\"")
endif()
# A static libnetcdf.a carries the Rust staticlib, whose system libraries a program linking it
# statically needs too.
if(netcdf_type STREQUAL "STATIC_LIBRARY")
  list(TRANSFORM NCFILTERS_NATIVE_LIBS PREPEND "-l" OUTPUT_VARIABLE native)
  string(JOIN " " native ${native})
  ncfilters_truthful_copy("${generated}/nc-config" "${generated}/nc-config"
    "\nlibsprivate=\"([^\"\n]*)\"" "\nlibsprivate=\"\\1 ${native}\"")
  ncfilters_truthful_copy("${netCDF_BINARY_DIR}/netcdf.pc" "${generated}/netcdf.pc"
    "\nLibs.private:([^\n]*)" "\nLibs.private:\\1 ${native}")
  ncfilters_install_replacing(FILES "${CMAKE_INSTALL_LIBDIR}/pkgconfig" utilities "${generated}/netcdf.pc")
endif()
ncfilters_truthful_copy("${netCDF_BINARY_DIR}/libnetcdf.settings" "${generated}/libnetcdf.settings"
  "(ZSTD Support:[ \t]+)[a-z]+" "\\1yes")
# szip in netCDF-4 files is HDF5's own filter: where the HDF5 netcdf-c builds against has it
# (netcdf-c's own check, HAVE_H5Z_SZIP), szip works whether or not netcdf-c's configure found libsz
# for its plugin, and NCZarr's szip loads libsz at run time. Without it in HDF5, netcdf-c's value
# stays: ncfilters' szip then needs libsz at run time, which a build cannot promise.
if(HAVE_H5Z_SZIP)
  ncfilters_truthful_copy("${generated}/netcdf_meta.h" "${generated}/netcdf_meta.h"
    "(#define NC_HAS_SZIP[ \t]+)[01]?" "\\11"
    "(#define NC_HAS_SZIP_WRITE[ \t]+)[01]?" "\\11")
  ncfilters_truthful_copy("${generated}/nc-config" "${generated}/nc-config"
    "\nhas_szlib=\"[^\"\n]*\"" "\nhas_szlib=\"yes\"")
  ncfilters_truthful_copy("${generated}/libnetcdf.settings" "${generated}/libnetcdf.settings"
    "(SZIP Write Support:[ \t]+)[a-z]+" "\\1yes")
endif()
# The standard filters the library has: configure's list (STD_FILTERS, what it found) and those
# ncfilters builds in whatever it found, in netcdf-c's words: deflate, blosc, zstd, bz2, and szip where HDF5
# has it (above). libnetcdf.settings says them; nc-config --has-stdfilters too from 4.9.2 on (4.9.0's
# CMake nc-config has no such option).
set(ncfilters_std_filters "${STD_FILTERS}")
string(STRIP "${ncfilters_std_filters}" ncfilters_std_filters)
separate_arguments(ncfilters_found UNIX_COMMAND "${ncfilters_std_filters}")
set(ncfilters_builtin deflate blosc zstd bz2)
if(HAVE_H5Z_SZIP)
  list(APPEND ncfilters_builtin szip)
endif()
foreach(filter IN LISTS ncfilters_builtin)
  if(NOT filter IN_LIST ncfilters_found)
    string(APPEND ncfilters_std_filters " ${filter}")
  endif()
endforeach()
string(STRIP "${ncfilters_std_filters}" ncfilters_std_filters)
ncfilters_truthful_copy("${generated}/libnetcdf.settings" "${generated}/libnetcdf.settings"
  "(Standard Filters:[ \t]+)[^\n]*" "\\1${ncfilters_std_filters}")
if(NOT NCFILTERS_NETCDF_VERSION VERSION_LESS 4.9.2)
  ncfilters_truthful_copy("${generated}/nc-config" "${generated}/nc-config"
    "(\n[ \t]*echo \"  --has-stdfilters[ \t]+-> )[^\"\n]*\"" "\\1${ncfilters_std_filters}\""
    "(\n[ \t]*--has-stdfilters\\)\n[ \t]*echo )[^\n]*" "\\1${ncfilters_std_filters}")
endif()
# What the library contains: ncfilters' version and source (NCFILTERS_BUILD, ncfilters.cmake), as
# the ncfilters_report JSON says; the same in a static build.
ncfilters_truthful_copy("${generated}/nc-config" "${generated}/nc-config"
  "(\n[ \t]*echo \"  --version[ \t]+-> \\$version\"\n)" "\\1        echo \"  --ncfilters         -> ${NCFILTERS_BUILD}\"\n")
file(READ "${generated}/libnetcdf.settings" settings)
string(REGEX REPLACE "\n+$" "" settings "${settings}")
file(WRITE "${generated}/libnetcdf.settings.tmp" "${settings}\n\n# ncfilters\n-----------\nncfilters:              ${NCFILTERS_BUILD}\n")
file(COPY_FILE "${generated}/libnetcdf.settings.tmp" "${generated}/libnetcdf.settings" ONLY_IF_DIFFERENT)
ncfilters_install_replacing(FILES "${CMAKE_INSTALL_INCLUDEDIR}" headers "${generated}/netcdf_meta.h")
ncfilters_install_replacing(FILES "${CMAKE_INSTALL_LIBDIR}" libraries "${generated}/libnetcdf.settings")
ncfilters_install_replacing(PROGRAMS "${CMAKE_INSTALL_BINDIR}" utilities "${generated}/nc-config")

# Where netcdf-c installs its plugins, when it does: 4.9.0 and 4.9.2 with -DPLUGIN_INSTALL_DIR=YES|<directory>;
# 4.9.3 on with -DNETCDF_PLUGIN_INSTALL=ON, into NETCDF_PLUGIN_INSTALL_DIR (-DNETCDF_WITH_PLUGIN_DIR,
# else <prefix>/hdf5/lib/plugin), which nc-config --plugindir names. 4.9.3's plugins/CMakeLists.txt
# tests the old ENABLE_PLUGIN_INSTALL instead and so installs none of its plugins; ncfilters
# installs its own all the same.
if(NOT NCFILTERS_NETCDF_OPTIONS)
  set(ncfilters_install_plugins_into "")
  if(ENABLE_PLUGIN_INSTALL AND PLUGIN_INSTALL_DIR)
    set(ncfilters_install_plugins_into "${PLUGIN_INSTALL_DIR}")
  endif()
else()
  set(ncfilters_install_plugins_into "")
  if(NETCDF_ENABLE_PLUGINS AND (NETCDF_PLUGIN_INSTALL OR ENABLE_PLUGIN_INSTALL) AND NETCDF_PLUGIN_INSTALL_DIR)
    set(ncfilters_install_plugins_into "${NETCDF_PLUGIN_INSTALL_DIR}")
  endif()
endif()
if(NCFILTERS_REPLACES_PLUGINS AND ncfilters_install_plugins_into)
  set(plugins)
  set(plugin_files)
  foreach(stem IN LISTS NCFILTERS_RUST_PLUGIN_STEMS)
    ncfilters_plugin_file_of(${NCFILTERS_PLATFORM} ${stem} file)
    list(APPEND plugins "${NCFILTERS_CARGO_TARGET_DIR}/plugins/${NCFILTERS_CARGO_OUTPUT}plugin/${file}")
    list(APPEND plugin_files ${file})
  endforeach()
  ncfilters_install_replacing(PROGRAMS "${ncfilters_install_plugins_into}" Unspecified ${plugins})
  message(STATUS "ncfilters: installs ${plugin_files} into ${ncfilters_install_plugins_into}")
endif()

if(NCFILTERS_CLI)
  install(PROGRAMS "${NCFILTERS_CLI_EXECUTABLE}" DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT utilities)
  # Written from the command's clap definition by `cargo xtask man-page` and committed, so the build
  # needs no generator. CMAKE_INSTALL_MANDIR is GNUInstallDirs', which netcdf-c's CMakeLists.txt
  # includes (as for CMAKE_INSTALL_BINDIR above).
  install(FILES "${NCFILTERS_ROOT}/tools/ncfilters-cli/ncfilters.1" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
    COMPONENT utilities)
endif()
