/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The plugin structs as netcdf-c 4.9.0's headers define them, for the test plugin fixtures
 * (bad_plugin.c, nczarr_codec.c), which fill them in wrong or hostile ways on purpose.
 */
#ifndef NCFILTERS_TEST_PLUGIN_STRUCTS_H
#define NCFILTERS_TEST_PLUGIN_STRUCTS_H
#include <stddef.h>

typedef struct {
    int version; int id; unsigned encoder_present; unsigned decoder_present; const char *name;
    void *can_apply; void *set_local;
    size_t (*filter)(unsigned, size_t, const unsigned[], size_t, size_t *, void **);
} H5Z_class2_t;

typedef struct {
    int version; int sort; const char *codecid; unsigned hdf5id;
    void (*initialize)(void); void (*finalize)(void);
    int (*to_hdf5)(const char *, size_t *, unsigned **);
    int (*to_codec)(size_t, const unsigned *, char **);
    int (*modify_parameters)(int, int, size_t *, unsigned **, size_t *, unsigned **);
} NCZ_codec_t;

#endif
