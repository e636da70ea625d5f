# SPDX-License-Identifier: BSD-3-Clause
# The Rust target triple of a C compiler's GNU triplet (`gcc -dumpmachine`), for a cross build of
# netcdf-c: Debian's cross compilers (aarch64-linux-gnu, arm-linux-gnueabihf, ...) and
# conda-forge's (aarch64-conda-linux-gnu) name the CPU first and the ABI last; the vendor field is
# ignored. The triples are the ones Debian's rustc uses (xtask/src/cross.rs, TARGETS, whose unit
# test holds this mapping to that table). MinGW-w64's (x86_64-w64-mingw32, as Debian and MSYS2
# name it) is Rust's windows-gnu target; Apple's (arm64-apple-darwin23.0.0) and Zig's
# (aarch64-unknown-macos.11.0-none) and clang's (arm64-apple-macos11, x86_64-apple-macosx10.13)
# its darwin one.
# Sets `out` to "" for a triplet it does not know.
function(ncfilters_rust_target_of triplet out)
  set(triple "")
  # Zig's form of Apple's: cpu-unknown-macos[.version]-none.
  string(REGEX REPLACE "^(x86_64|aarch64)-unknown-macos[0-9.]*-none$" "\\1-apple-darwin" triplet "${triplet}")
  if(triplet MATCHES "^([^-]+)-(.+-)?linux-(gnu[a-z0-9]*)$")
    set(cpu "${CMAKE_MATCH_1}")
    set(abi "${CMAKE_MATCH_3}")
    if(cpu STREQUAL "arm" AND abi STREQUAL "gnueabihf")
      set(cpu armv7) # Debian's armhf: ARMv7, hard float
    elseif(cpu STREQUAL "arm" AND abi STREQUAL "gnueabi")
      set(cpu armv5te) # Debian's armel
    elseif(cpu MATCHES "^i[3-6]86$")
      set(cpu i686)
    elseif(cpu STREQUAL "riscv64")
      set(cpu riscv64gc)
    endif()
    if(cpu MATCHES "^(x86_64|i686|aarch64|armv7|armv5te|powerpc64le|powerpc64|s390x|riscv64gc|loongarch64|mips64el)$")
      set(triple "${cpu}-unknown-linux-${abi}")
    endif()
  elseif(triplet MATCHES "^(x86_64|i[3-6]86)-w64-mingw32$")
    set(cpu "${CMAKE_MATCH_1}")
    if(cpu MATCHES "^i[3-6]86$")
      set(cpu i686)
    endif()
    set(triple "${cpu}-pc-windows-gnu")
  elseif(triplet MATCHES "^(x86_64|i[3-6]86|aarch64)-w64-windows-gnu$")
    # LLVM's MinGW-w64 (MSYS2's clang64 and clangarm64): Rust's gnullvm targets.
    set(cpu "${CMAKE_MATCH_1}")
    if(cpu MATCHES "^i[3-6]86$")
      set(cpu i686)
    endif()
    set(triple "${cpu}-pc-windows-gnullvm")
  elseif(triplet MATCHES "^(x86_64|aarch64|arm64)-apple-(darwin|macosx?)[0-9.]*$")
    set(cpu "${CMAKE_MATCH_1}")
    if(cpu STREQUAL "arm64")
      set(cpu aarch64)
    endif()
    set(triple "${cpu}-apple-darwin")
  endif()
  set(${out} "${triple}" PARENT_SCOPE)
endfunction()

# The Rust target cargo builds for, in `out` ("" for the build machine's own), and in `how` what
# of it the C compiler is not told by its name: "" or clang's --target.
# - NCFILTERS_RUST_TARGET, when set;
# - else CMAKE_C_COMPILER_TARGET, which CMake gives clang as --target on each compile and link
#   (a toolchain file's `clang` for another machine);
# - else, on Apple, CMAKE_OSX_ARCHITECTURES, which CMake gives as -arch: an Intel Mac's build for
#   arm64 is a cross build that CMake does not call one;
# - else, cross-compiling, the compiler's own target (`-dumpmachine`).
function(ncfilters_rust_target out how)
  set(triple "${NCFILTERS_RUST_TARGET}")
  set(flag "")
  if(CMAKE_C_COMPILER_TARGET)
    set(flag "--target=${CMAKE_C_COMPILER_TARGET}")
  endif()
  if(NOT triple STREQUAL "")
    # named by the user
  elseif(CMAKE_C_COMPILER_TARGET)
    ncfilters_rust_target_of("${CMAKE_C_COMPILER_TARGET}" triple)
    if(triple STREQUAL "")
      message(FATAL_ERROR "ncfilters: CMAKE_C_COMPILER_TARGET '${CMAKE_C_COMPILER_TARGET}' names no Rust target "
                          "ncfilters knows: set NCFILTERS_RUST_TARGET to Rust's triple for it")
    endif()
  elseif(APPLE AND CMAKE_OSX_ARCHITECTURES)
    list(LENGTH CMAKE_OSX_ARCHITECTURES count)
    if(count GREATER 1)
      message(FATAL_ERROR "ncfilters: CMAKE_OSX_ARCHITECTURES '${CMAKE_OSX_ARCHITECTURES}' asks for a universal "
                          "libnetcdf, which ncfilters cannot build yet: build each architecture and join them with lipo")
    endif()
    ncfilters_rust_target_of("${CMAKE_OSX_ARCHITECTURES}-apple-darwin" triple)
    ncfilters_rust_target_of("${CMAKE_HOST_SYSTEM_PROCESSOR}-apple-darwin" host)
    if(triple STREQUAL "")
      message(FATAL_ERROR "ncfilters: CMAKE_OSX_ARCHITECTURES '${CMAKE_OSX_ARCHITECTURES}' names no Rust target "
                          "ncfilters knows: set NCFILTERS_RUST_TARGET to Rust's triple for it")
    elseif(triple STREQUAL host AND NOT CMAKE_CROSSCOMPILING)
      set(triple "")
    endif()
  elseif(CMAKE_CROSSCOMPILING)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -dumpmachine OUTPUT_VARIABLE machine
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
    ncfilters_rust_target_of("${machine}" triple)
    if(failed OR triple STREQUAL "")
      message(FATAL_ERROR "ncfilters: cross-compiling with ${CMAKE_C_COMPILER}, whose target '${machine}' "
                          "names no Rust target ncfilters knows: set NCFILTERS_RUST_TARGET to Rust's triple for it")
    endif()
  endif()
  set(${out} "${triple}" PARENT_SCOPE)
  set(${how} "${flag}" PARENT_SCOPE)
endfunction()
