/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The functions of HDF5 and of netcdf-c's public API that the filters call back, for
 * ncfilters-plugin (hdf5_sys.rs, netcdf_api.rs): in libnetcdf, in the plugin libraries
 * and in the built-in filters. Rust cannot declare weak symbols on stable, hence this file.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#include <psapi.h>
#else
#include <stdatomic.h>
#include <dlfcn.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#else
#include <link.h>
#endif
#endif

#define NCFILTERS_ENOTBUILT (-128) /* NC_ENOTBUILT */

#ifndef _WIN32
/*
 * A plugin library (plugins/) calls back into netcdf-c without linking libnetcdf. When libnetcdf
 * is in the global scope (a program linked with it) the weak references bind to it; when it was
 * loaded RTLD_LOCAL (Python's netCDF4 or h5py, ctypes) they stay NULL, and the function is looked
 * up in the loaded objects themselves.
 *
 * No dlopen, dlsym or dlclose inside the dl_iterate_phdr callback: glibc holds its write lock
 * there, and dlopen takes its load lock, the reverse of a concurrent dlopen's order (deadlock).
 * The callback only copies the objects' names.
 */
struct names {
    char **names;
    size_t count, capacity;
};

/* Adds a copy of `name` to `list`; nonzero when out of memory. */
static int add_name(struct names *list, const char *name)
{
    char *copy;
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 64;
        char **grown = realloc(list->names, capacity * sizeof *grown);
        if (!grown)
            return 1; /* search the objects listed so far */
        list->names = grown;
        list->capacity = capacity;
    }
    /* Copied: the object may be unloaded once the iteration releases the lock. */
    if (!(copy = strdup(name)))
        return 1;
    list->names[list->count++] = copy;
    return 0;
}

#ifdef __APPLE__
/* The loaded images but the main program (the first), which the weak reference saw. */
static void collect_names(struct names *list)
{
    uint32_t i, count = _dyld_image_count();
    for (i = 1; i < count; i++) {
        const char *name = _dyld_get_image_name(i); /* NULL once image i is unloaded */
        if (name && add_name(list, name))
            return; /* search the objects listed so far */
    }
}
#else
static int collect_name(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    /* The main program (empty name) is in the global scope, which the weak reference saw. */
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    return add_name(data, info->dlpi_name); /* on failure: search the objects listed so far */
}

static void collect_names(struct names *list)
{
    dl_iterate_phdr(collect_name, list);
}
#endif

/* `name` if the object `file` (handle `library`) defines it itself: dlsym also searches its dependencies. */
static void *own_symbol(void *library, const char *file, const char *name)
{
    void *symbol = dlsym(library, name);
    Dl_info info;
    if (!symbol || !dladdr(symbol, &info) || !info.dli_fname || strcmp(info.dli_fname, file) != 0)
        return NULL;
    return symbol;
}

/*
 * `name` in an already loaded object, or NULL: the first that defines both `name` and `marker`
 * (a symbol of the intended library: Python wheels rename it), else the first that defines `name`.
 * *handlep gets the reference NOLOAD took on that object.
 */
static void *loaded_function(const char *marker, const char *name, void **handlep)
{
    struct names list = {NULL, 0, 0};
    void *found = NULL;
    size_t i;
    *handlep = NULL;
    collect_names(&list);
    for (i = 0; i < list.count; i++) {
        void *library = dlopen(list.names[i], RTLD_LAZY | RTLD_NOLOAD);
        void *function = library ? own_symbol(library, list.names[i], name) : NULL;
        if (function && own_symbol(library, list.names[i], marker)) {
            if (*handlep)
                dlclose(*handlep);
            found = function;
            *handlep = library;
            break;
        }
        if (function && !found) {
            found = function;
            *handlep = library;
        } else if (library) {
            dlclose(library); /* drops only the reference NOLOAD took */
        }
    }
    for (i = 0; i < list.count; i++)
        free(list.names[i]);
    free(list.names);
    return found;
}

/* A function found by cached_function: a NULL pointer until one is. */
typedef _Atomic(void *) function_cache;

static void *cache_load(function_cache *cache)
{
    return atomic_load_explicit(cache, memory_order_acquire);
}

/* Stores `function` if the cache is still empty; else returns 0 and *cached is what it holds. */
static int cache_store(function_cache *cache, void **cached, void *function)
{
    *cached = NULL;
    return atomic_compare_exchange_strong_explicit(cache, cached, function, memory_order_acq_rel, memory_order_acquire);
}

#define WEAK __attribute__((weak))
#define WEAK_REFERENCE(name) name

#else /* _WIN32 */
/*
 * Windows has no weak references and no global symbol scope: a function is looked up in the
 * modules the process has loaded (EnumProcessModules), by GetProcAddress, which finds only what
 * a module exports itself. The first module that exports both `name` and `marker` wins, else the
 * first that exports `name`; *handlep gets a reference (GetModuleHandleExW) to its module.
 */
static void *loaded_function(const char *marker, const char *name, void **handlep)
{
    HMODULE listed[1024];
    HMODULE module = NULL;
    FARPROC found = NULL;
    DWORD size = 0, i;
    *handlep = NULL;
    if (!K32EnumProcessModules(GetCurrentProcess(), listed, sizeof listed, &size))
        return NULL;
    if (size > sizeof listed)
        size = sizeof listed; /* search the first 1024 modules */
    for (i = 0; i < size / sizeof listed[0]; i++) {
        FARPROC function = GetProcAddress(listed[i], name);
        if (function && GetProcAddress(listed[i], marker)) {
            found = function;
            break;
        }
        if (function && !found)
            found = function;
    }
    /* The reference keeps the module loaded; none taken (and not found) if it was unloaded meanwhile. */
    if (!found || !GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, (LPCWSTR)(void *)found, &module))
        return NULL;
    *handlep = module;
    return (void *)found;
}

/* Drops the reference loaded_function took. */
static void dlclose(void *handle)
{
    FreeLibrary((HMODULE)handle);
}

/* As above, with the Interlocked functions (full barriers): MSVC's C11 atomics are experimental. */
typedef void *volatile function_cache;

static void *cache_load(function_cache *cache)
{
    return InterlockedCompareExchangePointer(cache, NULL, NULL);
}

static int cache_store(function_cache *cache, void **cached, void *function)
{
    *cached = InterlockedCompareExchangePointer(cache, function, NULL);
    return *cached == NULL;
}

#define WEAK
#define WEAK_REFERENCE(name) NULL
#endif /* _WIN32 */

/*
 * loaded_function, found once per function: this runs for every dataset or variable a filter is
 * set on. A miss is retried on the next call (the library may be loaded later).
 */
static void *cached_function(function_cache *cache, const char *library, const char *name)
{
    void *function = cache_load(cache);
    void *handle, *expected;
    if (function)
        return function;
    /* `library` names the library a function belongs to; its marker picks it among those defining the name. */
    function = loaded_function(strcmp(library, "hdf5") == 0 ? "H5open" : "nc_inq_libvers", name, &handle);
    if (!function)
        return NULL;
    if (cache_store(cache, &expected, function))
        return function; /* keeps the handle: the cached pointer must outlive a dlclose by the library's user */
    dlclose(handle); /* another thread cached it first */
    return expected;
}

/*
 * A function of an already loaded library, through a weak reference or else looked up by name:
 * returns `fail` when neither finds it.
 */
#define FORWARD(library, ret, fail, name, params, args)                         \
    extern ret name params WEAK;                                                \
    ret ncfilters_##name params                                                 \
    {                                                                           \
        static function_cache cache;                                            \
        ret(*f) params = WEAK_REFERENCE(name);                                  \
        if (!f)                                                                 \
            f = (ret(*) params)cached_function(&cache, library, #name);         \
        return f ? f args : fail;                                               \
    }

FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_vartype, (int ncid, int varid, int *xtypep), (ncid, varid, xtypep))
/* ncfilters_report initialises netCDF first: that registers the built-in filters with HDF5. */
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_initialize, (void), ())


/* Used by the codecs' NCZ_modify_parameters (plugin.rs, netcdf_api.rs). */
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_type, (int ncid, int xtype, char *name, size_t *sizep),
        (ncid, xtype, name, sizep))
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_varndims, (int ncid, int varid, int *ndimsp), (ncid, varid, ndimsp))
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_vardimid, (int ncid, int varid, int *dimidsp), (ncid, varid, dimidsp))
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_dimlen, (int ncid, int dimid, size_t *lenp), (ncid, dimid, lenp))
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_var_chunking, (int ncid, int varid, int *storagep, size_t *chunksizesp),
        (ncid, varid, storagep, chunksizesp))
FORWARD("libnetcdf.so", int, NCFILTERS_ENOTBUILT, nc_inq_var_endian, (int ncid, int varid, int *endianp), (ncid, varid, endianp))

/*
 * HDF5, for the filters' can_apply/set_local callbacks and registering the built-in filters
 * (hdf5_sys.rs). A plugin is loaded by HDF5, so HDF5 is always there; -2 (HDF5 failures are
 * negative) or 0 when it cannot be found.
 */
#include <stdint.h>
typedef int64_t hid_t;
typedef unsigned long long hsize_t;
FORWARD("hdf5", int, -2, H5Zfilter_avail, (int id), (id))
FORWARD("hdf5", int, -2, H5Zregister, (const void *cls), (cls))
FORWARD("hdf5", int, -2, H5Pget_filter_by_id2,
        (hid_t plist, int id, unsigned *flags, size_t *nelmts, unsigned *values, size_t namelen, char *name, unsigned *config),
        (plist, id, flags, nelmts, values, namelen, name, config))
FORWARD("hdf5", int, -2, H5Pmodify_filter, (hid_t plist, int id, unsigned flags, size_t nelmts, const unsigned *values),
        (plist, id, flags, nelmts, values))
FORWARD("hdf5", int, -2, H5Pget_chunk, (hid_t plist, int max_ndims, hsize_t *dims), (plist, max_ndims, dims))
FORWARD("hdf5", size_t, 0, H5Tget_size, (hid_t type), (type))
FORWARD("hdf5", size_t, 0, H5Tget_precision, (hid_t type), (type))
FORWARD("hdf5", int, -2, H5Tget_offset, (hid_t type), (type))
FORWARD("hdf5", int, -2, H5Tget_order, (hid_t type), (type))
FORWARD("hdf5", int, -2, H5Tget_class, (hid_t type), (type))
FORWARD("hdf5", hid_t, -2, H5Tget_super, (hid_t type), (type))
FORWARD("hdf5", int, -2, H5Tclose, (hid_t type), (type))
FORWARD("hdf5", int, -2, H5Sget_simple_extent_dims, (hid_t space, hsize_t *dims, hsize_t *maxdims), (space, dims, maxdims))
FORWARD("hdf5", long long, -2, H5Sget_simple_extent_npoints, (hid_t space), (space))
FORWARD("hdf5", int, -2, H5Zget_filter_info, (int id, unsigned *flags), (id, flags))
/* HDF5's plugin search table, which the plugin path steers (the ncfilters crate's abi/plugin_path_api.rs). */
FORWARD("hdf5", int, -2, H5PLsize, (unsigned *count), (count))
/* H5PLget returns an ssize_t, which MSVC lacks: ptrdiff_t has its size on every platform (long has
   not on 64-bit Windows). */
FORWARD("hdf5", ptrdiff_t, -2, H5PLget, (unsigned index, char *path, size_t size), (index, path, size))
FORWARD("hdf5", int, -2, H5PLremove, (unsigned index), (index))
FORWARD("hdf5", int, -2, H5PLappend, (const char *path), (path))
