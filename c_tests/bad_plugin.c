/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Plugin libraries that are wrong in one way each, for the NCZarr loader tests
 * (tests/interop/test_bad_plugins.py). Compiled once per variant with -DVARIANT=<n>:
 *
 *   1 ONE_H5PL        exports H5PLget_plugin_type only
 *   2 WRONG_TYPE      H5PLget_plugin_type returns H5PL_TYPE_NONE
 *   3 WRONG_VERSION   H5Z_class2_t version 2
 *   4 NULL_INFO       H5PLget_plugin_info returns NULL
 *   5 BAD_SORT        NCZ_codec_t sort 2
 *   6 NULL_CODEC_ID   NCZ_codec_t codecid NULL
 *   7 DUPLICATE       a second HDF5 filter 307 (bzip2)
 *   8 MISMATCH        HDF5 filter FILTER_ID with a codec for FILTER_ID + 1
 *   9 HDF5_ONLY       HDF5 filter FILTER_ID (its codec comes from DEFAULTS)
 *  10 DEFAULTS        NCZ_codec_info_defaults: a version-9 entry, then a good codec for FILTER_ID
 *  11 INIT_CRASH      complete plugin whose NCZ_codec_initialize dereferences NULL
 *  12 GOOD            complete plugin (identity), to show loading went on
 *  13 MINUS_ONE       complete plugin (identity) that fails with (size_t)-1, netcdf-c's plugins'
 *                     error value, when BAD_PLUGIN_FAIL is set in the environment
 *  14 COUNTING        complete plugin (identity) whose NCZ_codec_initialize and NCZ_codec_finalize
 *                     each append a line to the file BAD_PLUGIN_COUNT names
 *
 * FILTER_ID and CODEC_ID are set per variant by the test.
 *
 * The structs (plugin_structs.h) are netcdf-c's, so each variant can break them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FILTER_ID
#define FILTER_ID 40400
#endif
#ifndef CODEC_ID
#define CODEC_ID "good"
#endif

#include "plugin_structs.h"

static size_t identity(unsigned flags, size_t n, const unsigned v[], size_t nbytes, size_t *buf_size, void **buf)
{
    (void)flags; (void)n; (void)v; (void)buf_size; (void)buf;
    if (VARIANT == 13 && getenv("BAD_PLUGIN_FAIL"))
        return (size_t)-1;
    return nbytes;
}

static int to_hdf5(const char *codec, size_t *nparamsp, unsigned **paramsp)
{
    (void)codec;
    *nparamsp = 0;
    *paramsp = NULL;
    return 0;
}

static int to_codec(size_t nparams, const unsigned *params, char **codecp)
{
    (void)nparams; (void)params;
    *codecp = strdup("{\"id\": \"" CODEC_ID "\"}");
    return 0;
}

static void crash(void) { *(volatile int *)NULL = 1; }

static void count(const char *what)
{
    const char *path = getenv("BAD_PLUGIN_COUNT");
    FILE *file = path ? fopen(path, "a") : NULL;
    if (file) {
        fprintf(file, "%s\n", what);
        fclose(file);
    }
}
static void count_initialize(void) { count("initialize"); }
static void count_finalize(void) { count("finalize"); }

__attribute__((unused)) static H5Z_class2_t filter_class = {VARIANT == 3 ? 2 : 1, FILTER_ID, 1, 1, "bad-plugin fixture", NULL, NULL, identity};
__attribute__((unused)) static NCZ_codec_t codec = {1, VARIANT == 5 ? 2 : 1, VARIANT == 6 ? NULL : CODEC_ID,
                            VARIANT == 8 ? FILTER_ID + 1 : FILTER_ID,
                            VARIANT == 11 ? crash : VARIANT == 14 ? count_initialize : NULL,
                            VARIANT == 14 ? count_finalize : NULL, to_hdf5, to_codec, NULL};

#if VARIANT != 10
int H5PLget_plugin_type(void) { return VARIANT == 2 ? 1 : 0; }
#endif
#if VARIANT != 1 && VARIANT != 10
const void *H5PLget_plugin_info(void) { return VARIANT == 4 ? NULL : &filter_class; }
#endif
#if VARIANT != 7 && VARIANT != 9 && VARIANT != 10
const void *NCZ_get_codec_info(void) { return &codec; }
#endif
#if VARIANT == 10
static NCZ_codec_t bad_version = {9, 1, "bad-version", FILTER_ID, NULL, NULL, to_hdf5, to_codec, NULL};
static NCZ_codec_t defaulted = {1, 1, "defaulted", FILTER_ID, NULL, NULL, to_hdf5, to_codec, NULL};
static const NCZ_codec_t *defaults[] = {&bad_version, &defaulted, NULL};
const void *NCZ_codec_info_defaults(void) { return defaults; }
#endif
