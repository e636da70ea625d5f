/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Complete NCZarr plugins (HDF5 filter + codec) that misbehave, for
 * tests/interop/test_nczarr_codecs.py. Compiled once per variant with -DVARIANT=<n>:
 *
 *   1 FAIL_ENCODE  encode replaces the chunk with a garbage block and fails; decode fails too,
 *                  so the chain can neither encode nor restore the chunk (filter 41500, "failenc")
 *   2 REENTRANT    identity filter whose NCZ_modify_parameters calls nc_inq_var_filter_info on
 *                  the variable being set up; working = visible + [nparams seen] (41501, "reenter")
 *
 * Linked against libnetcdf (variant 2 calls it). Structs: plugin_structs.h.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_structs.h"

#define H5Z_FLAG_REVERSE 0x100

#if VARIANT == 1
#define FILTER_ID 41500
#define CODEC_ID "failenc"
static size_t filter(unsigned flags, size_t n, const unsigned v[], size_t nbytes, size_t *buf_size, void **buf)
{
    (void)n; (void)v;
    if (flags & H5Z_FLAG_REVERSE)
        return 0;
    void *garbage = malloc(nbytes + 1);
    if (garbage == NULL)
        return 0;
    memset(garbage, 0xEE, nbytes + 1);
    free(*buf);
    *buf = garbage;
    *buf_size = nbytes + 1;
    return 0;
}
#define MODIFY NULL
#else
#define FILTER_ID 41501
#define CODEC_ID "reenter"
extern int nc_inq_var_filter_info(int ncid, int varid, unsigned id, size_t *nparamsp, unsigned *params);

static size_t filter(unsigned flags, size_t n, const unsigned v[], size_t nbytes, size_t *buf_size, void **buf)
{
    (void)flags; (void)n; (void)v; (void)buf_size; (void)buf;
    return nbytes;
}

static int modify(int ncid, int varid, size_t *vnp, unsigned **vpp, size_t *wnp, unsigned **wpp)
{
    size_t seen = 0;
    unsigned inq[16];
    if (nc_inq_var_filter_info(ncid, varid, FILTER_ID, &seen, NULL) != 0 || seen > 16)
        return -1;
    if (nc_inq_var_filter_info(ncid, varid, FILTER_ID, &seen, inq) != 0)
        return -1;
    unsigned *working = malloc((*vnp + 1) * sizeof(unsigned));
    if (working == NULL)
        return -1;
    for (size_t i = 0; i < *vnp; i++)
        working[i] = (*vpp)[i] + (i < seen ? inq[i] - (*vpp)[i] : 0); /* equal when consistent */
    working[*vnp] = (unsigned)seen;
    free(*wpp);
    *wpp = working;
    *wnp = *vnp + 1;
    return 0;
}
#define MODIFY modify
#endif

static int to_hdf5(const char *codec, size_t *nparamsp, unsigned **paramsp)
{
    (void)codec;
    unsigned *params = malloc(sizeof(unsigned));
    if (params == NULL)
        return -1;
    params[0] = 7;
    *nparamsp = 1;
    *paramsp = params;
    return 0;
}

static int to_codec(size_t nparams, const unsigned *params, char **codecp)
{
    (void)nparams; (void)params;
    *codecp = strdup("{\"id\": \"" CODEC_ID "\"}");
    return *codecp == NULL ? -1 : 0;
}

static H5Z_class2_t filter_class = {1, FILTER_ID, 1, 1, "nczarr test codec", NULL, NULL, filter};
static NCZ_codec_t codec = {1, 1, CODEC_ID, FILTER_ID, NULL, NULL, to_hdf5, to_codec, MODIFY};

int H5PLget_plugin_type(void) { return 0; }
const void *H5PLget_plugin_info(void) { return &filter_class; }
const void *NCZ_get_codec_info(void) { return &codec; }
