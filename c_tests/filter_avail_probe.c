/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LD_PRELOAD probe: appends the id of every H5Zfilter_avail call the process makes to the file
 * FILTER_AVAIL_LOG names, then answers with HDF5's own function. tests/interop/test_lazy_loading.py
 * uses it to see that netCDF's initialisation asks HDF5 nothing that can load plugins.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int htri_t;       /* HDF5's H5public.h */
typedef int H5Z_filter_t; /* HDF5's H5Zpublic.h */

/* Copies the name of the loaded HDF5 library (not its high-level one) into `found`. */
static int find_hdf5(struct dl_phdr_info *info, size_t size, void *found)
{
    const char *base = strrchr(info->dlpi_name, '/');
    (void)size;
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libhdf5", 7) == 0 && strstr(base, "_hl") == NULL) {
        snprintf(found, 4096, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

/* HDF5's H5Zfilter_avail. RTLD_NEXT misses it when libnetcdf (and so HDF5) was loaded
 * RTLD_LOCAL, as Python's ctypes does; dlopen runs after the iteration, never inside it. */
static htri_t (*hdf5s_function(void))(H5Z_filter_t)
{
    static char name[4096];
    void *library, *function = dlsym(RTLD_NEXT, "H5Zfilter_avail");
    if (function || !dl_iterate_phdr(find_hdf5, name))
        return (htri_t(*)(H5Z_filter_t))function;
    library = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    return library ? (htri_t(*)(H5Z_filter_t))dlsym(library, "H5Zfilter_avail") : NULL;
}

htri_t H5Zfilter_avail(H5Z_filter_t id)
{
    htri_t (*hdf5s)(H5Z_filter_t) = hdf5s_function();
    const char *log = getenv("FILTER_AVAIL_LOG");
    FILE *file = log ? fopen(log, "a") : NULL;
    if (file) {
        fprintf(file, "%d\n", id);
        fclose(file);
    }
    return hdf5s ? hdf5s(id) : -1;
}
