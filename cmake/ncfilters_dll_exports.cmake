# SPDX-License-Identifier: BSD-3-Clause
# cmake -DNM=<nm> [-DAR=<ar>] -DSTATICLIB=<libncfilters.a> -DLINKED=<copy netcdf.dll links>
#       -DDECLARED=<names file> -DDEF=<netcdf.def> -P ncfilters_dll_exports.cmake
#
# After each cargo build of a Windows netcdf.dll with ncfilters:
#   * writes DEF, its module-definition file: the functions the staticlib defines (nm's global
#     text symbols) that DECLARED names, one per line (what this tree declares EXTERNL, and
#     ncfilters.h). Stock's netcdf.dll exports what EXTERNL marks dllexport; Rust marks nothing,
#     so without this file netcdf.dll would export none of ncfilters' functions;
#   * copies the staticlib to LINKED without its split-DWARF members (`*.dwo`, which Rust's std
#     for windows-gnu carries): linked whole-archive, their sections have no address, and ld
#     writes a DLL that Windows refuses to load (STATUS_INVALID_IMAGE_FORMAT). Without AR (MSVC,
#     whose Rust std has no such members and whose `lib` is no `ar`), the copy is the staticlib.
cmake_minimum_required(VERSION 3.24)
foreach(var NM STATICLIB LINKED DECLARED DEF)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "ncfilters_dll_exports.cmake: ${var} is not set")
  endif()
endforeach()
file(STRINGS "${DECLARED}" declared)
execute_process(COMMAND "${NM}" -g --defined-only "${STATICLIB}"
                OUTPUT_VARIABLE symbols RESULT_VARIABLE failed ERROR_VARIABLE error)
if(failed)
  message(FATAL_ERROR "ncfilters_dll_exports.cmake: ${NM} cannot list ${STATICLIB}'s symbols (${failed}):\n${error}")
endif()
string(REGEX MATCHALL "\n[0-9a-fA-F]+ T [A-Za-z_][A-Za-z0-9_]*" lines "\n${symbols}")
set(defined)
foreach(line IN LISTS lines)
  string(REGEX MATCH "[A-Za-z_][A-Za-z0-9_]*$" name "${line}")
  list(APPEND defined "${name}")
endforeach()
set(exports)
foreach(name IN LISTS declared)
  if(name IN_LIST defined)
    list(APPEND exports "${name}")
  endif()
endforeach()
if(NOT "ncfilters_report" IN_LIST exports)
  message(FATAL_ERROR "ncfilters_dll_exports.cmake: ${STATICLIB} defines none of ncfilters.h's functions, "
                      "by ${NM}: not ncfilters' staticlib")
endif()
list(JOIN exports "\n  " text)
file(WRITE "${DEF}.tmp" "; Written by cmake/ncfilters_dll_exports.cmake: ncfilters' exports from netcdf.dll.\nEXPORTS\n  ${text}\n")
file(COPY_FILE "${DEF}.tmp" "${DEF}" ONLY_IF_DIFFERENT)

if(NOT AR)
  file(COPY_FILE "${STATICLIB}" "${LINKED}" ONLY_IF_DIFFERENT)
  return()
endif()
execute_process(COMMAND "${AR}" t "${STATICLIB}" OUTPUT_VARIABLE members RESULT_VARIABLE failed ERROR_VARIABLE error)
if(failed)
  message(FATAL_ERROR "ncfilters_dll_exports.cmake: ${AR} cannot list ${STATICLIB} (${failed}):\n${error}")
endif()
string(REGEX MATCHALL "[^\n]+\\.dwo" split_dwarf "${members}")
file(COPY_FILE "${STATICLIB}" "${LINKED}.tmp")
if(split_dwarf)
  execute_process(COMMAND "${AR}" d "${LINKED}.tmp" ${split_dwarf} RESULT_VARIABLE failed ERROR_VARIABLE error)
  if(failed)
    message(FATAL_ERROR "ncfilters_dll_exports.cmake: ${AR} cannot remove the .dwo members of ${LINKED}.tmp (${failed}):\n${error}")
  endif()
endif()
file(RENAME "${LINKED}.tmp" "${LINKED}")
