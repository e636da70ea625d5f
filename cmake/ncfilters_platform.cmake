# SPDX-License-Identifier: BSD-3-Clause
# What the module does differently per platform, as functions of the platform's name (Linux for the
# ELF systems, Windows, Apple), so that xtask checks every platform's answer on any host.

# The platform CMake configures for.
function(ncfilters_platform out)
  if(WIN32)
    set(${out} Windows PARENT_SCOPE)
  elseif(APPLE)
    set(${out} Apple PARENT_SCOPE)
  else()
    set(${out} Linux PARENT_SCOPE)
  endif()
endfunction()

# The system libraries Rust's std needs in a staticlib on `platform`, which libnetcdf and its
# users then link: what rustc's `--print native-static-libs` names there (MSVC's are Windows' with
# `.lib`; `cargo xtask cross-compile` compares each platform's with rustc's).
function(ncfilters_native_libs_of platform out)
  if(platform STREQUAL "Windows")
    set(${out} kernel32 ntdll userenv ws2_32 dbghelp PARENT_SCOPE)
  elseif(platform STREQUAL "Apple")
    set(${out} System c m PARENT_SCOPE)
  else()
    set(${out} gcc_s util rt pthread m dl c PARENT_SCOPE)
  endif()
endfunction()

# Where an installed program finds the libraries of `libdir` (relative to the install prefix) from
# its bin directory: `$ORIGIN` for ld.so, `@loader_path` for dyld.
function(ncfilters_relative_rpath_of platform libdir out)
  if(platform STREQUAL "Apple")
    set(${out} "@loader_path/../${libdir}" PARENT_SCOPE)
  else()
    set(${out} "$ORIGIN/../${libdir}" PARENT_SCOPE)
  endif()
endfunction()

# The file of plugin `stem` (h5zstd, zstdfilters) on `platform`: netcdf-c's plugins/CMakeLists.txt
# names it lib__nc<stem>.so or .dylib, __nc<stem>.dll on Windows (4.9.3 on), and cargo names the Rust
# library __nc<stem> (plugins/*/Cargo.toml) by the same rule.
function(ncfilters_plugin_file_of platform stem out)
  if(platform STREQUAL "Windows")
    set(${out} "__nc${stem}.dll" PARENT_SCOPE)
  elseif(platform STREQUAL "Apple")
    set(${out} "lib__nc${stem}.dylib" PARENT_SCOPE)
  else()
    set(${out} "lib__nc${stem}.so" PARENT_SCOPE)
  endif()
endfunction()

# The linker options that keep Rust's own symbols out of a shared libnetcdf's exports and drop
# the parts of std ncfilters does not use, with a link map (`symbols` names the file of hidden
# symbols to write: a GNU ld version script, or ld64's unexported-symbols list, whose names carry
# Mach-O's leading underscore). `hidden` is the list of netcdf-c functions to hide besides.
function(ncfilters_hidden_symbols_of platform symbols map hidden out)
  set(patterns "_ZN*" "_R*" "__rust*" "rust_*")
  if(platform STREQUAL "Apple")
    # Rust's compiler-builtins defines clang's availability checks with default visibility.
    list(APPEND patterns "__isOSVersionAtLeast" "__isPlatformVersionAtLeast")
    set(text "")
    foreach(name IN LISTS patterns hidden)
      string(APPEND text "_${name}\n")
    endforeach()
    set(options "LINKER:-unexported_symbols_list,${symbols}" "LINKER:-map,${map}" "LINKER:-dead_strip")
  else()
    set(text "/* Written by cmake/ncfilters_platform.cmake: Rust's
   own symbols (std, core, ncfilters internals) stay local, netcdf-c's global. */\n{\n  local:")
    foreach(name IN LISTS patterns hidden)
      string(APPEND text " ${name};")
    endforeach()
    string(APPEND text "\n};\n")
    set(options "LINKER:-Map=${map}" "LINKER:--version-script=${symbols}" "LINKER:--gc-sections")
  endif()
  file(WRITE "${symbols}.tmp" "${text}")
  file(COPY_FILE "${symbols}.tmp" "${symbols}" ONLY_IF_DIFFERENT)
  set(${out} ${options} PARENT_SCOPE)
endfunction()
