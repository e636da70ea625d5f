/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The filter contract as HDF5 2.2 checks it, applied to plugin libraries through H5Z_func_t:
 *   filter_contract <plugin.so>...
 * For each library (H5PLget_plugin_info) and a small and a large chunk:
 *   - encode: the chunk in a malloc'd block of exactly its size; a result > 0 and <= *buf_size;
 *   - decode as HDF5 2.2 reads: the stored bytes in a block pre-sized at the chunk's size
 *     (*buf_size > nbytes), the rest of the block garbage; the result must be exactly the chunk's
 *     size, <= *buf_size, and the chunk's bytes;
 *   - decode as HDF5 1.x reads: a block of exactly the stored size (valgrind sees any read past it);
 *   - failure (the stored bytes cut in half, or one byte flipped for fletcher32): 0, with *buf and
 *     *buf_size as they were;
 *   - a valid stream of no bytes (the filter's encoding of an empty chunk): it decodes to nothing,
 *     which H5Z_func_t cannot return, so 0 with *buf and *buf_size as they were.
 * Prints one line per library and check; exits 1 if any library broke the contract.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_structs.h"

#define H5Z_FLAG_REVERSE 0x0100
#define SMALL_CHUNK (64 * 1024)
#define LARGE_CHUNK (2 * 1024 * 1024 + 4096) /* past every filter's threshold for pieces */

typedef size_t (*filter_fn)(unsigned, size_t, const unsigned[], size_t, size_t *, void **);

/* The parameters set_local would leave for a chunk of `chunk` bytes of 4-byte floats. */
static size_t params_for(int id, size_t chunk, unsigned *cd) {
    switch (id) {
    case 1: cd[0] = 6; return 1;                               /* deflate level 6 */
    case 2: cd[0] = 4; return 1;                               /* shuffle, 4-byte elements */
    case 3: return 0;                                          /* fletcher32 */
    case 4: cd[0] = 32 | 128 | 8; cd[1] = 32; cd[2] = 32; cd[3] = 4096; return 4; /* szip NN, raw, LSB */
    case 307: cd[0] = 9; return 1;                             /* bzip2 9 */
    case 32015: cd[0] = 3; return 1;                           /* zstd 3 */
    case 32001:                                                /* blosc: version, format, type size, */
        cd[0] = 2; cd[1] = 2; cd[2] = 4; cd[3] = (unsigned)chunk; /* chunk bytes, level, shuffle, */
        cd[4] = 5; cd[5] = 1; cd[6] = 0; return 7;             /* blosclz */
    default: cd[0] = 0; return 0;                              /* a test filter: none */
    }
}

static int failures = 0;

static void fail(const char *library, const char *what, size_t chunk) {
    printf("FAIL %s (%zu-byte chunk): %s\n", library, chunk, what);
    failures++;
}

/* Smooth floats with noise in the low bits: compressible by every filter, not trivially. */
static void fill_chunk(unsigned char *block, size_t chunk) {
    uint32_t state = 12345;
    for (size_t i = 0; i + 4 <= chunk; i += 4) {
        state = state * 1103515245u + 12345u;
        float value = (float)(i / 4 % 1000) * 0.25f + (float)(state >> 24) * 1e-4f;
        memcpy(block + i, &value, 4);
    }
}

/* Runs the checks on one library's filter for one chunk size. */
static void check_filter(const char *library, int id, filter_fn filter, size_t chunk) {
    unsigned cd[8];
    size_t ncd = params_for(id, chunk, cd);
    unsigned char *original = malloc(chunk);
    void *buf = malloc(chunk);
    if (original == NULL || buf == NULL) { fail(library, "out of memory", chunk); free(original); free(buf); return; }
    fill_chunk(original, chunk);
    memcpy(buf, original, chunk);

    size_t buf_size = chunk;
    size_t stored = filter(0, ncd, cd, chunk, &buf_size, &buf);
    if (stored == 0) { fail(library, "encode failed", chunk); free(original); free(buf); return; }
    if (stored > buf_size) { fail(library, "encode returned more than *buf_size", chunk); free(original); free(buf); return; }

    /* HDF5 2.2: a block pre-sized at the chunk's size, garbage past the stored bytes. */
    size_t presized = stored > chunk ? stored : chunk;
    void *block = malloc(presized);
    memset(block, 0xA5, presized);
    memcpy(block, buf, stored);
    size_t block_size = presized;
    size_t decoded = filter(H5Z_FLAG_REVERSE, ncd, cd, stored, &block_size, &block);
    if (decoded != chunk) {
        char what[160];
        snprintf(what, sizeof what, "decode into a pre-sized block returned %zu, not the chunk's %zu bytes", decoded, chunk);
        fail(library, what, chunk);
    } else if (decoded > block_size) {
        fail(library, "decode returned more than *buf_size", chunk);
    } else if (memcmp(block, original, chunk) != 0) {
        fail(library, "decode into a pre-sized block changed the data", chunk);
    }
    free(block);

    /* HDF5 1.x: a block of exactly the stored bytes (valgrind: nothing read past nbytes). */
    block = malloc(stored);
    memcpy(block, buf, stored);
    block_size = stored;
    decoded = filter(H5Z_FLAG_REVERSE, ncd, cd, stored, &block_size, &block);
    if (decoded != chunk || memcmp(block, original, chunk) != 0)
        fail(library, "decode of an exactly-sized block did not give the chunk back", chunk);
    free(block);

    /* Failure leaves *buf and *buf_size alone. Shuffle has no invalid input. */
    if (id != 2) {
        size_t damaged = stored;
        block = malloc(stored);
        memcpy(block, buf, stored);
        if (id == 3) ((unsigned char *)block)[stored / 2] ^= 0x40; /* the checksum no longer matches */
        else damaged = stored / 2;                                  /* a cut stream */
        block_size = stored;
        void *before = block;
        decoded = filter(H5Z_FLAG_REVERSE, ncd, cd, damaged, &block_size, &block);
        if (decoded != 0) fail(library, "decode of damaged bytes succeeded", chunk);
        else if (block != before || block_size != stored) fail(library, "a failed decode changed *buf or *buf_size", chunk);
        free(block);
    }
    free(buf);
    free(original);
}

/* A valid stream of no bytes fails and leaves the block. Shuffle and fletcher32 have no stream.
 * szip encodes no empty chunk: its empty stream is the 4-byte size header alone. Built for 4.9.2,
 * blosc encodes none either (as 4.9.2's own filter): its empty stream is the 16-byte header the
 * other releases write for one. */
static void check_empty_stream(const char *library, int id, filter_fn filter) {
    static const unsigned char blosc_empty[16] = {2, 1, 19, 4, 0, 0, 0, 0, 1, 0, 0, 0, 16, 0, 0, 0};
    if (id == 2 || id == 3) return;
    unsigned cd[8];
    size_t ncd = params_for(id, 0, cd);
    size_t block_size = 16, stored = 4;
    void *block = calloc(1, block_size);
    if (block == NULL) { fail(library, "out of memory", 0); return; }
    if (id != 4) stored = filter(0, ncd, cd, 0, &block_size, &block);
    if (stored == 0 && id == 32001) {
        memcpy(block, blosc_empty, sizeof blosc_empty);
        stored = sizeof blosc_empty;
    }
    if (stored == 0) { fail(library, "encode of an empty chunk failed", 0); free(block); return; }
    void *before = block;
    size_t size_before = block_size;
    size_t decoded = filter(H5Z_FLAG_REVERSE, ncd, cd, stored, &block_size, &block);
    if (decoded != 0) fail(library, "decode of an empty stream returned bytes", 0);
    else if (block != before || block_size != size_before)
        fail(library, "a failed decode of an empty stream changed *buf or *buf_size", 0);
    free(block);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <plugin.so>...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *library = argv[i];
        void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) { printf("FAIL %s: %s\n", library, dlerror()); failures++; continue; }
        const void *(*info)(void) = (const void *(*)(void))dlsym(handle, "H5PLget_plugin_info");
        const H5Z_class2_t *class = info ? info() : NULL;
        if (class == NULL || class->filter == NULL) { printf("FAIL %s: no filter class\n", library); failures++; continue; }
        int before = failures;
        check_filter(library, class->id, class->filter, SMALL_CHUNK);
        check_filter(library, class->id, class->filter, LARGE_CHUNK);
        check_empty_stream(library, class->id, class->filter);
        if (failures == before)
            printf("PASS %s (filter %d): encode within *buf_size; decode exact into a pre-sized and an exact block; failure, and an empty stream, leave the block\n",
                   library, class->id);
        /* Not dlclose'd: valgrind names a leak's frames only in a library still loaded. */
    }
    return failures ? 1 : 0;
}
