// SPDX-License-Identifier: BSD-3-Clause
//
// zstd_mt_emulation.c: does compressing libzstd's multithreaded jobs one after another, on the
// calling thread, give the bytes of ZSTDMT (the frames ncfilters writes: 1 MiB jobs, no overlap,
// the block pre-splitter off)? It prints IDENTICAL or DIFFERENT for levels 1, 3, 6 and 9 on
// `length` bytes of a file from `offset` (BENCHMARKS.md, issue 60). Not built by anything: with
// the libzstd sources zstd-sys carries in `$Z` (its `zstd/lib`), the static library of them but
// `zstd_compress.c`, which this file includes for its static functions:
//
//   F="-O2 -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -I$Z -I$Z/common -I$Z/compress"
//   gcc $F -c $Z/common/*.c $Z/compress/*.c $Z/decompress/*.c
//   rm zstd_compress.o && ar rcs libzstd-parts.a *.o
//   gcc $F tools/zstd_mt_emulation.c libzstd-parts.a -lpthread -o zstd_mt_emulation
//   ./zstd_mt_emulation etopo5.cdf 9338880 4000
//
// Without ZSTD_invalidateRepCodes the bytes differ at levels 1 and 3.
#define ZSTD_STATIC_LINKING_ONLY
#include "zstd.h"
#include "compress/zstd_compress.c"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOB (1u << 20)

static size_t mt(const void *src, size_t n, void *dst, size_t cap, int level, int workers) {
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, (ZSTD_cParameter)1017, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers);
    if (workers) {
        ZSTD_CCtx_setParameter(c, ZSTD_c_jobSize, JOB);
        ZSTD_CCtx_setParameter(c, ZSTD_c_overlapLog, 1);
    }
    size_t r = ZSTD_compress2(c, dst, cap, src, n);
    ZSTD_freeCCtx(c);
    return r;
}

/* ZSTDMT_compressionJob, job after job, into dst. */
static size_t emulated(const void *src, size_t n, void *dst, size_t cap, int level) {
    ZSTD_CCtx_params params;
    ZSTD_CCtxParams_init(&params, level);
    ZSTD_CCtxParams_setParameter(&params, (ZSTD_cParameter)1017, 1);
    params.cParams = ZSTD_getCParamsFromCCtxParams(&params, n, 0, ZSTD_cpm_noAttachDict);
    /* what ZSTD_CCtx_init_compressStream2 settles before handing params to ZSTDMT */
    params.postBlockSplitter = ZSTD_resolveBlockSplitterMode(params.postBlockSplitter, &params.cParams);
    params.ldmParams.enableLdm = ZSTD_resolveEnableLdm(params.ldmParams.enableLdm, &params.cParams);
    params.useRowMatchFinder = ZSTD_resolveRowMatchFinderMode(params.useRowMatchFinder, &params.cParams);
    params.validateSequences = ZSTD_resolveExternalSequenceValidation(params.validateSequences);
    params.maxBlockSize = ZSTD_resolveMaxBlockSize(params.maxBlockSize);
    params.searchForExternalRepcodes = ZSTD_resolveExternalRepcodeSearch(params.searchForExternalRepcodes, params.compressionLevel);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    char *op = dst, *oend = (char *)dst + cap;
    const char *ip = src;
    size_t jobs = (n + JOB - 1) / JOB;
    for (size_t j = 0; j < jobs; j++) {
        int first = j == 0, last = j + 1 == jobs;
        size_t size = last ? n - j * JOB : JOB;
        ZSTD_CCtx_params jp = params;
        if (!first) jp.fParams.checksumFlag = 0;
        jp.ldmParams.enableLdm = ZSTD_ps_disable;
        jp.nbWorkers = 0;
        ZSTD_CCtxParams_setParameter(&jp, ZSTD_c_forceMaxWindow, !first);
        if (!first) ZSTD_CCtxParams_setParameter(&jp, ZSTD_c_deterministicRefPrefix, 0);
        size_t e = ZSTD_compressBegin_advanced_internal(c, NULL, 0, ZSTD_dct_rawContent, ZSTD_dtlm_fast, NULL, &jp,
                                                         first ? n : size);
        if (ZSTD_isError(e)) return e;
        if (!first) {
            size_t h = ZSTD_compressContinue_public(c, op, oend - op, ip, 0);
            if (ZSTD_isError(h)) return h;
            ZSTD_invalidateRepCodes(c);
        }
        size_t chunk = 4 * ZSTD_BLOCKSIZE_MAX, chunks = (size + chunk - 1) / chunk;
        for (size_t k = 1; k < chunks; k++) {
            size_t s = ZSTD_compressContinue_public(c, op, oend - op, ip, chunk);
            if (ZSTD_isError(s)) return s;
            ip += chunk, op += s;
        }
        size_t rest = size & (chunk - 1);
        if (rest == 0 && size >= chunk) rest = chunk;
        size_t s = last ? ZSTD_compressEnd_public(c, op, oend - op, ip, rest) : ZSTD_compressContinue_public(c, op, oend - op, ip, rest);
        if (ZSTD_isError(s)) return s;
        ip += rest, op += s;
    }
    ZSTD_freeCCtx(c);
    return (size_t)(op - (char *)dst);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s file length offset\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    size_t n = strtoul(argv[2], 0, 0), off = strtoul(argv[3], 0, 0);
    char *src = malloc(n);
    fseek(f, (long)off, SEEK_SET);
    n = fread(src, 1, n, f);
    size_t cap = ZSTD_compressBound(n);
    char *a = malloc(cap), *b = malloc(cap);
    int different = 0;
    for (int level = 1; level <= 9; level += (level < 3 ? 2 : 3)) {
        size_t x = mt(src, n, a, cap, level, 1), y = emulated(src, n, b, cap, level);
        int same = !ZSTD_isError(x) && x == y && !memcmp(a, b, x);
        different |= !same;
        printf("level %d, %zu bytes: ZSTDMT %zu, job by job %zu: %s\n", level, n, x, y, same ? "IDENTICAL" : "DIFFERENT");
    }
    return different;
}
