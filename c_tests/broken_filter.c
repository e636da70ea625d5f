/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A deliberately broken filter plugin for filter_contract.c: zstd whose decoder takes the input's
 * size from *buf_size instead of nbytes, as netcdf-c 4.9.x's C zstd plugin did (fixed in 4.10.1,
 * #3370). HDF5 1.x handed it a block of exactly the stored size, so it worked; HDF5 2.2 hands it a
 * block pre-sized at the chunk's size, and it fails. The contract harness must say so.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "plugin_structs.h"

#define H5Z_FLAG_REVERSE 0x0100

static size_t broken_zstd(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                          size_t *buf_size, void **buf) {
    (void)cd_nelmts;
    (void)cd_values;
    if (flags & H5Z_FLAG_REVERSE) {
        unsigned long long size = ZSTD_getFrameContentSize(*buf, nbytes);
        if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) return 0;
        void *out = malloc(size);
        if (out == NULL) return 0;
        size_t n = ZSTD_decompress(out, size, *buf, *buf_size); /* the bug: *buf_size, not nbytes */
        if (ZSTD_isError(n)) { free(out); return 0; }
        free(*buf);
        *buf = out;
        *buf_size = size;
        return n;
    }
    size_t bound = ZSTD_compressBound(nbytes);
    void *out = malloc(bound);
    if (out == NULL) return 0;
    size_t n = ZSTD_compress(out, bound, *buf, nbytes, 3);
    if (ZSTD_isError(n)) { free(out); return 0; }
    free(*buf);
    *buf = out;
    *buf_size = bound;
    return n;
}

static const H5Z_class2_t broken_class = {1, 40002, 1, 1, "broken zstd (reads *buf_size)", NULL, NULL, broken_zstd};

int H5PLget_plugin_type(void) { return 0; /* H5PL_TYPE_FILTER */ }
const void *H5PLget_plugin_info(void) { return &broken_class; }
