# SPDX-License-Identifier: BSD-3-Clause
# ncfilters_provenance.cmake -- which ncfilters build a tree is: its version (the workspace's, in
# Cargo.toml) and its source:
#   "release"             the tarball of `cargo xtask dist` (it carries .ncfilters-release);
#   "git <commit>"        a clone of ncfilters' own repository (", modified" with uncommitted changes);
#   what .ncfilters-source says, for a copy of a clone without .git (the install stage of
#                         `cargo xtask test` copies a clone in a private directory to /tmp and
#                         records the clone's source there, so the copy names the same build);
#   "source without git metadata" otherwise.
# ncfilters.cmake includes it. `cmake -DNCFILTERS_ROOT=<tree> -P ncfilters_provenance.cmake` prints
# the source.

# Sets NCFILTERS_VERSION, NCFILTERS_BUILD_SOURCE and NCFILTERS_BUILD ("0.3.0 (git 1a2b3c4d5e6f)")
# in the caller's scope for the tree at NCFILTERS_ROOT.
function(ncfilters_provenance)
  file(STRINGS "${NCFILTERS_ROOT}/Cargo.toml" lines REGEX "^version = \"[^\"]+\"")
  list(LENGTH lines count)
  if(NOT count EQUAL 1 OR NOT lines MATCHES "^version = \"([^\"]+)\"")
    message(FATAL_ERROR "ncfilters: cannot read the workspace version from ${NCFILTERS_ROOT}/Cargo.toml")
  endif()
  set(version "${CMAKE_MATCH_1}")
  set(source "")
  find_program(NCFILTERS_GIT git)
  if(EXISTS "${NCFILTERS_ROOT}/.ncfilters-release")
    set(source "release")
  elseif(NCFILTERS_GIT)
    # Only ncfilters' own repository: a tarball unpacked inside a packaging repository is not it.
    execute_process(COMMAND "${NCFILTERS_GIT}" -C "${NCFILTERS_ROOT}" rev-parse --show-toplevel
                    OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
    if(NOT failed)
      file(REAL_PATH "${top}" top)
      file(REAL_PATH "${NCFILTERS_ROOT}" root)
    endif()
    if(NOT failed AND top STREQUAL root)
      execute_process(COMMAND "${NCFILTERS_GIT}" -C "${NCFILTERS_ROOT}" rev-parse --short=12 HEAD
                      OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE)
      execute_process(COMMAND "${NCFILTERS_GIT}" -C "${NCFILTERS_ROOT}" status --porcelain --untracked-files=no
                      OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE)
      set(source "git ${commit}")
      if(NOT changes STREQUAL "")
        string(APPEND source ", modified")
      endif()
    endif()
  endif()
  if(source STREQUAL "" AND EXISTS "${NCFILTERS_ROOT}/.ncfilters-source")
    file(STRINGS "${NCFILTERS_ROOT}/.ncfilters-source" recorded LIMIT_COUNT 1)
    if(NOT recorded MATCHES "^git [0-9a-f]+(, modified)?$")
      message(FATAL_ERROR "ncfilters: ${NCFILTERS_ROOT}/.ncfilters-source says '${recorded}', not 'git <commit>'")
    endif()
    set(source "${recorded}")
  endif()
  if(source STREQUAL "")
    set(source "source without git metadata")
  endif()
  set(NCFILTERS_VERSION "${version}" PARENT_SCOPE)
  set(NCFILTERS_BUILD_SOURCE "${source}" PARENT_SCOPE)
  set(NCFILTERS_BUILD "${version} (${source})" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT NCFILTERS_ROOT)
    message(FATAL_ERROR "usage: cmake -DNCFILTERS_ROOT=<ncfilters tree> -P ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  ncfilters_provenance()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "${NCFILTERS_BUILD_SOURCE}")
endif()
