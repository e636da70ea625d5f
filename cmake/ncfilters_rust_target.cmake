# SPDX-License-Identifier: BSD-3-Clause
# The Rust target triple of a C compiler's GNU triplet (`gcc -dumpmachine`), for a cross build of
# netcdf-c: Debian's cross compilers (aarch64-linux-gnu, arm-linux-gnueabihf, ...) and
# conda-forge's (aarch64-conda-linux-gnu) name the CPU first and the ABI last; the vendor field is
# ignored. The triples are the ones Debian's rustc uses (xtask/src/cross.rs, TARGETS, whose unit
# test holds this mapping to that table). MinGW-w64's (x86_64-w64-mingw32, as Debian and MSYS2
# name it) is Rust's windows-gnu target; Apple's (arm64-apple-darwin23.0.0) and Zig's
# (aarch64-unknown-macos.11.0-none) its darwin one.
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
  elseif(triplet MATCHES "^(x86_64|aarch64|arm64)-apple-darwin[0-9.]*$")
    set(cpu "${CMAKE_MATCH_1}")
    if(cpu STREQUAL "arm64")
      set(cpu aarch64)
    endif()
    set(triple "${cpu}-apple-darwin")
  endif()
  set(${out} "${triple}" PARENT_SCOPE)
endfunction()
