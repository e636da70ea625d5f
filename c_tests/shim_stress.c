/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The weak-reference shim's lookup (plugins/common/src/shim.c) against concurrent dlopen/dlclose.
 *
 * The lookup once called dlopen inside a dl_iterate_phdr callback: glibc's two loader locks taken
 * in the reverse order of a concurrent dlopen, and both threads hung. Loader threads here dlopen
 * and dlclose small libraries in a loop while other threads go through the lookup; a thread that
 * makes no progress for HANG_SECONDS fails the run (exit 1).
 *
 *   shim_stress direct <dir> <seconds>
 *       this program's own copy of shim.c (linked in), against libraries in <dir> loaded
 *       RTLD_LOCAL: a renamed HDF5 and netCDF (as Python wheels ship them) and a decoy.
 *   shim_stress netcdf <libnetcdf.so> <dir> <seconds>
 *       libnetcdf loaded RTLD_LOCAL, as Python's netCDF4 loads it, so the plugin libraries on
 *       HDF5_PLUGIN_PATH reach HDF5 and netCDF through their copy of the lookup: threads write
 *       netCDF-4 and NCZarr files with blosc, szip and shuffle into <dir>.
 *
 * The same file builds the libraries it loads (cc -shared -DLIBRARY=...): see run.sh.
 */
#define _GNU_SOURCE

#if defined(LIBRARY)
/* LIBRARY 1: an HDF5 renamed by a wheel; 2: a netCDF renamed by a wheel; 3: a decoy defining an
 * HDF5 name without being HDF5; 4: a library only loaded and unloaded (LOADEE tells them apart). */
#if LIBRARY == 1
int H5open(void) { return 0; }
unsigned long H5Tget_size(long long type) { return type == 1 ? 42 : 0; }
#elif LIBRARY == 2
const char *nc_inq_libvers(void) { return "fake"; }
int nc_inq_vartype(int ncid, int varid, int *xtypep)
{
    *xtypep = ncid + varid;
    return 0;
}
#elif LIBRARY == 3
unsigned long H5Tget_size(long long type) { return type == 1 ? 7 : 0; }
#elif LIBRARY == 4
#define NAME2(n) shim_stress_loadee_##n
#define NAME(n) NAME2(n)
int NAME(LOADEE)(void) { return LOADEE; }
#endif

#else
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOADERS 3
#define LOADEES 8
#define LOOKERS 2
#define HANG_SECONDS 10

/* The shim's wrappers (shim.c, linked into this program for the direct variant). */
unsigned long ncfilters_H5Tget_size(int64_t type);
int ncfilters_H5Tclose(int64_t type);
int ncfilters_nc_inq_vartype(int ncid, int varid, int *xtypep);

struct worker {
    pthread_t thread;
    const char *kind;
    atomic_ulong done;   /* iterations finished */
    atomic_long stamp;   /* monotonic second of the last one */
    atomic_int failed;
};

static atomic_int stop;
static const char *dir;

static long now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec;
}

static void progress(struct worker *w)
{
    atomic_fetch_add(&w->done, 1);
    atomic_store(&w->stamp, now());
}

static void fail(struct worker *w, const char *what)
{
    fprintf(stderr, "FAIL %s thread: %s\n", w->kind, what);
    atomic_store(&w->failed, 1);
    atomic_store(&stop, 1);
}

/* dlopen and dlclose each loadee in turn: every dlopen maps a new object, every dlclose unmaps it. */
static void *loader(void *arg)
{
    struct worker *w = arg;
    char path[4096];
    unsigned i = (unsigned)((uintptr_t)w / sizeof *w); /* threads start at different loadees */
    while (!atomic_load(&stop)) {
        void *library;
        snprintf(path, sizeof path, "%s/libshim_stress_loadee%u.so", dir, i++ % LOADEES);
        if (!(library = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
            fail(w, dlerror());
            break;
        }
        if (dlclose(library) != 0) {
            fail(w, dlerror());
            break;
        }
        progress(w);
    }
    return NULL;
}

/* A function found (cached after the first lookup) and one missing (looked up on every call). */
static void *looker(void *arg)
{
    struct worker *w = arg;
    while (!atomic_load(&stop)) {
        if (ncfilters_H5Tget_size(1) != 42) {
            fail(w, "H5Tget_size did not come from the renamed HDF5");
            break;
        }
        if (ncfilters_H5Tclose(1) != -2) {
            fail(w, "H5Tclose, defined nowhere, did not fail");
            break;
        }
        progress(w);
    }
    return NULL;
}

/* netCDF functions, from the RTLD_LOCAL libnetcdf. */
static struct {
    int (*create)(const char *, int, int *);
    int (*open)(const char *, int, int *);
    int (*def_dim)(int, const char *, size_t, int *);
    int (*def_var)(int, const char *, int, int, const int *, int *);
    int (*def_var_chunking)(int, int, int, const size_t *);
    int (*def_var_filter)(int, int, unsigned, size_t, const unsigned *);
    int (*def_var_szip)(int, int, int, int);
    int (*def_var_deflate)(int, int, int, int, int);
    int (*enddef)(int);
    int (*put_var_float)(int, int, const float *);
    int (*get_var_float)(int, int, float *);
    int (*close)(int);
    const char *(*strerror)(int);
    int (*H5Eset_auto2)(int64_t, void *, void *); /* HDF5's, through libnetcdf's dependencies */
} nc;

#define NC_NOWRITE 0
#define NC_CLOBBER 0
#define NC_NETCDF4 0x1000
#define NC_FLOAT 5
#define NC_CHUNKED 0
#define POINTS 4096
#define CHUNK 1024

/* netCDF-4 and NCZarr are not thread-safe: one thread at a time in the library. */
static pthread_mutex_t netcdf_lock = PTHREAD_MUTEX_INITIALIZER;

/* Writes a file with a blosc, an szip and a shuffle (+deflate) variable and reads the blosc one
 * back: 0, or the failed call's status with *what naming it. */
static int write_file(const char *path, const float *data, float *back, const char **what)
{
    static const unsigned blosc[7] = {0, 0, 0, 0, 5, 1, 1}; /* blocksize auto, level 5, shuffle, lz4 */
    static const char *const names[3] = {"blosc", "szip", "shuffle"};
    const size_t chunk = CHUNK;
    int ncid, dim, var[3], i, status;
#define CHECK(call, name)          \
    if ((status = (call)) != 0) {  \
        *what = name;              \
        return status;             \
    }
    CHECK(nc.create(path, NC_NETCDF4 | NC_CLOBBER, &ncid), "nc_create");
    CHECK(nc.def_dim(ncid, "x", POINTS, &dim), "nc_def_dim");
    for (i = 0; i < 3; i++) {
        CHECK(nc.def_var(ncid, names[i], NC_FLOAT, 1, &dim, &var[i]), "nc_def_var");
        CHECK(nc.def_var_chunking(ncid, var[i], NC_CHUNKED, &chunk), "nc_def_var_chunking");
    }
    CHECK(nc.def_var_filter(ncid, var[0], 32001, 7, blosc), "nc_def_var_filter (blosc)");
    CHECK(nc.def_var_szip(ncid, var[1], 32, 32), "nc_def_var_szip"); /* NN, 32 pixels per block */
    CHECK(nc.def_var_deflate(ncid, var[2], 1, 1, 1), "nc_def_var_deflate (shuffle)");
    CHECK(nc.enddef(ncid), "nc_enddef");
    for (i = 0; i < 3; i++)
        CHECK(nc.put_var_float(ncid, var[i], data), "nc_put_var_float");
    CHECK(nc.close(ncid), "nc_close");
    CHECK(nc.open(path, NC_NOWRITE, &ncid), "nc_open");
    CHECK(nc.get_var_float(ncid, var[0], back), "nc_get_var_float");
    CHECK(nc.close(ncid), "nc_close");
#undef CHECK
    *what = "blosc data read back";
    return memcmp(data, back, POINTS * sizeof *data) != 0; /* 1: not netCDF's status */
}

static void *writer(void *arg)
{
    struct worker *w = arg;
    char paths[2][4200], message[4400];
    float *data = malloc(2 * POINTS * sizeof *data);
    unsigned i;
    if (!data) {
        fail(w, "out of memory");
        return NULL;
    }
    for (i = 0; i < POINTS; i++)
        data[i] = (float)(i % 100) * 0.5f;
    /* HDF5 prints errors per thread: netCDF turns that off only in the thread it started in. */
    nc.H5Eset_auto2(0 /* H5E_DEFAULT */, NULL, NULL);
    snprintf(paths[0], sizeof paths[0], "%s/shim_stress_%p.nc", dir, arg);
    snprintf(paths[1], sizeof paths[1], "file://%s/shim_stress_%p.zarr#mode=nczarr,file", dir, arg);
    while (!atomic_load(&stop)) {
        const char *what = NULL;
        int status = 0;
        pthread_mutex_lock(&netcdf_lock);
        for (i = 0; i < 2 && !status; i++)
            status = write_file(paths[i], data, data + POINTS, &what);
        pthread_mutex_unlock(&netcdf_lock);
        if (status) {
            snprintf(message, sizeof message, "%s: %s: %d %s", paths[i - 1], what, status,
                     status < 0 ? nc.strerror(status) : "differ");
            fail(w, message);
            break;
        }
        progress(w);
    }
    free(data);
    return NULL;
}

#define LOAD(field, symbol)                                                        \
    do {                                                                           \
        if (!(*(void **)&nc.field = dlsym(netcdf, symbol))) {                      \
            fprintf(stderr, "FAIL %s not in %s\n", symbol, argv[2]);               \
            return 1;                                                              \
        }                                                                          \
    } while (0)

static void on_alarm(int sig)
{
    static const char text[] = "FAIL HUNG: threads still running long after the stop\n";
    (void)sig;
    if (write(2, text, sizeof text - 1) < 0) {
        /* nothing more to do in a signal handler */
    }
    _exit(1);
}

int main(int argc, char **argv)
{
    struct worker workers[LOADERS + LOOKERS];
    void *(*work)(void *);
    void *kept[3] = {NULL, NULL, NULL};
    unsigned nworkers = 0, i;
    long seconds, start, hung = 0;
    int direct = argc == 4 && strcmp(argv[1], "direct") == 0, status = 0;
    void *netcdf = NULL;

    if (!direct && !(argc == 5 && strcmp(argv[1], "netcdf") == 0)) {
        fprintf(stderr, "usage: %s direct <dir> <seconds> | netcdf <libnetcdf.so> <dir> <seconds>\n", argv[0]);
        return 2;
    }
    dir = argv[argc - 2];
    seconds = strtol(argv[argc - 1], NULL, 10);
    if (seconds <= 0) {
        fprintf(stderr, "bad duration %s\n", argv[argc - 1]);
        return 2;
    }

    if (direct) {
        /* Local, so the shim's weak references stay NULL and it has to look the functions up. */
        static const char *const names[3] = {"libdecoy.so", "libhdf5-0a1b2c3d.so", "libnetcdf-4e5f6a7b.so"};
        char path[4096];
        for (i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            if (!(kept[i] = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
                fprintf(stderr, "FAIL %s\n", dlerror());
                return 1;
            }
        }
        work = looker;
    } else {
        const char *plugins = getenv("HDF5_PLUGIN_PATH");
        char path[4096];
        snprintf(path, sizeof path, "%s/lib__nch5blosc.so", plugins ? plugins : "");
        if (!plugins || access(path, R_OK) != 0) {
            fprintf(stderr, "FAIL HDF5_PLUGIN_PATH must hold the plugin libraries (%s)\n", path);
            return 2;
        }
        if (!(netcdf = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL))) {
            fprintf(stderr, "FAIL %s\n", dlerror());
            return 1;
        }
        LOAD(create, "nc_create");
        LOAD(open, "nc_open");
        LOAD(def_dim, "nc_def_dim");
        LOAD(def_var, "nc_def_var");
        LOAD(def_var_chunking, "nc_def_var_chunking");
        LOAD(def_var_filter, "nc_def_var_filter");
        LOAD(def_var_szip, "nc_def_var_szip");
        LOAD(def_var_deflate, "nc_def_var_deflate");
        LOAD(enddef, "nc_enddef");
        LOAD(put_var_float, "nc_put_var_float");
        LOAD(get_var_float, "nc_get_var_float");
        LOAD(close, "nc_close");
        LOAD(strerror, "nc_strerror");
        LOAD(H5Eset_auto2, "H5Eset_auto2");
        work = writer;
    }

    start = now();
    for (i = 0; i < LOADERS + LOOKERS; i++) {
        struct worker *w = &workers[i];
        int error;
        w->kind = i < LOADERS ? "dlopen/dlclose" : direct ? "lookup" : "netCDF writer";
        atomic_init(&w->done, 0);
        atomic_init(&w->stamp, start);
        atomic_init(&w->failed, 0);
        if ((error = pthread_create(&w->thread, NULL, i < LOADERS ? loader : work, w)) != 0) {
            fprintf(stderr, "FAIL pthread_create: %s\n", strerror(error));
            atomic_store(&stop, 1);
            status = 1;
            break;
        }
        nworkers++;
    }

    /* A thread with no iteration for HANG_SECONDS is stuck (a deadlock never ends). */
    while (!atomic_load(&stop) && now() - start < seconds) {
        usleep(100000);
        for (i = 0; i < nworkers; i++)
            if (now() - atomic_load(&workers[i].stamp) >= HANG_SECONDS) {
                fprintf(stderr, "FAIL HUNG: a %s thread made no progress for %d s, %ld s into the run "
                        "(%lu iterations done)\n", workers[i].kind, HANG_SECONDS, now() - start,
                        atomic_load(&workers[i].done));
                hung = 1;
            }
        if (hung)
            _exit(1); /* the stuck threads cannot be joined */
    }
    atomic_store(&stop, 1);
    signal(SIGALRM, on_alarm);
    alarm(HANG_SECONDS);
    for (i = 0; i < nworkers; i++) {
        pthread_join(workers[i].thread, NULL);
        status |= atomic_load(&workers[i].failed);
    }
    alarm(0);

    if (direct && !status) {
        /* Matched by symbol, not file name: the renamed netCDF, found once, then from the cache. */
        int xtype = 0;
        if (ncfilters_nc_inq_vartype(2, 3, &xtype) != 0 || xtype != 5) {
            fprintf(stderr, "FAIL nc_inq_vartype not found in the renamed netCDF library\n");
            status = 1;
        }
    }
    if (!status) {
        unsigned long loads = 0, others = 0;
        for (i = 0; i < nworkers; i++)
            *(i < LOADERS ? &loads : &others) += atomic_load(&workers[i].done);
        printf("%s: %ld s, %d threads dlopen/dlclose %d libraries %lu times, %d threads %lu %s\n", argv[1],
               now() - start, LOADERS, LOADEES, loads, LOOKERS, others,
               direct ? "lookups (one found, one missing: a full scan each)"
                      : "netCDF-4 + NCZarr writes (blosc, szip, shuffle)");
    }
    for (i = 0; i < 3; i++)
        if (kept[i])
            dlclose(kept[i]);
    if (netcdf)
        dlclose(netcdf);
    return status;
}
#endif
