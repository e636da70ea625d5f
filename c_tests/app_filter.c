/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An application's own HDF5 filter class for zstd (32015), registered before netCDF initialises,
 * as hdf5plugin or h5py programs do (tests/interop/test_builtin_filters.py). netCDF must keep it:
 * its built-in stand-in is registered only for ids no class is registered for.
 */
#include <hdf5.h>

static int calls;

static size_t app_filter(unsigned flags, size_t n, const unsigned v[], size_t nbytes, size_t *buf_size, void **buf)
{
    (void)flags; (void)n; (void)v; (void)buf_size; (void)buf;
    calls++;
    return nbytes; /* identity */
}

static const H5Z_class2_t app_class = {H5Z_CLASS_T_VERS, 32015, 1, 1, "application's zstd", NULL, NULL, app_filter};

int app_register(void) { return H5Zregister(&app_class); }
int app_calls(void) { return calls; }
