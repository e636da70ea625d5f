# SPDX-License-Identifier: BSD-3-Clause
# cmake -DAR=<ar> -DLD=<ld> -DOBJCOPY=<objcopy> -DARCHIVE=<libnetcdf.a> -DSTATICLIB=<libncfilters.a>
#       -P ncfilters_merge_archive.cmake
#
# Adds ncfilters to a static libnetcdf.a as one object: the Rust staticlib linked into a
# relocatable object (ld -r), with
#   * its Rust and hidden symbols made local, as libnetcdf.so's version script keeps them, so that
#     only netcdf-c's and ncfilters' C functions are global and a program that links another Rust
#     library, or its own zstd, meets no duplicate symbol;
#   * the LLVM bitcode that Rust's standard library carries removed: binutils hands an object with
#     bitcode to its LLVM plugin (/usr/lib/bfd-plugins), which fails on a newer LLVM's bitcode, and
#     `ar` then indexes none of its symbols (every program linking libnetcdf.a fails).
foreach(var AR LD OBJCOPY ARCHIVE STATICLIB)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "ncfilters_merge_archive.cmake: ${var} is not set")
  endif()
endforeach()
foreach(file "${ARCHIVE}" "${STATICLIB}")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "ncfilters_merge_archive.cmake: ${file} does not exist")
  endif()
endforeach()

function(ncfilters_run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ncfilters: ${what} failed (${status}): ${errors}")
  endif()
endfunction()

get_filename_component(dir "${ARCHIVE}" DIRECTORY)
set(object "${dir}/ncfilters-rust.o")
ncfilters_run("ld -r of ${STATICLIB}" "${LD}" -r --whole-archive "${STATICLIB}" -o "${object}")
ncfilters_run("objcopy of ${object}" "${OBJCOPY}" --remove-section=.llvmbc --remove-section=.llvmcmd --localize-hidden
  --wildcard --localize-symbol=_ZN* --localize-symbol=_R* --localize-symbol=__rust* --localize-symbol=rust_*
  "${object}")
ncfilters_run("adding ${object} to ${ARCHIVE}" "${AR}" rs "${ARCHIVE}" "${object}")
file(REMOVE "${object}")
