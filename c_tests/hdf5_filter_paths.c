/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The filters through the real HDF5 a netcdf-c build links (cargo xtask matrix, the HDF5 cells):
 *
 * 1. A chunk no filter can shrink (random bytes) is written and read back unchanged by every
 *    standard filter. netcdf-c adds generic filters as H5Z_FLAG_OPTIONAL, so a filter that fails
 *    on such a chunk leaves it stored as is (netcdf-c #3075); what HDF5 stored is printed.
 * 2. A chunk whose filtered bytes are damaged (rewritten with H5Dwrite_chunk) fails to read with a
 *    netCDF error, and never crashes (szip aside: its format has no check, so damage can decode). HDF5 2.x drops errors a filter pushes inside its callback,
 *    so the filter's own message must reach the user another way: the caller checks stderr.
 *
 * Usage: hdf5_filter_paths DIR. Prints one line per filter and case; exits 0 only when every
 * chunk read back unchanged and every damaged chunk failed to read.
 */
#include <hdf5.h>
#include <netcdf.h>
#include <netcdf_filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 65536

struct filter {
    const char *name;
    int (*define)(int ncid, int varid);
};

static int def_deflate(int ncid, int varid) { return nc_def_var_deflate(ncid, varid, 0, 1, 9); }
static int def_szip(int ncid, int varid) { return nc_def_var_szip(ncid, varid, 32, 32); }
static int def_bzip2(int ncid, int varid) { return nc_def_var_bzip2(ncid, varid, 9); }
static int def_zstd(int ncid, int varid) { return nc_def_var_zstandard(ncid, varid, 3); }
static int def_blosc(int ncid, int varid) { return nc_def_var_blosc(ncid, varid, BLOSC_LZ4, 5, 0, 1); }

static const struct filter FILTERS[] = {
    {"deflate", def_deflate}, {"szip", def_szip}, {"bzip2", def_bzip2}, {"zstd", def_zstd}, {"blosc", def_blosc},
};
#define NFILTERS (sizeof FILTERS / sizeof FILTERS[0])

static int failures;

static void check(int status, const char *what, const char *filter)
{
    if (status != NC_NOERR) {
        printf("FAIL %s: %s: %s\n", filter, what, nc_strerror(status));
        failures++;
    }
}

/* One variable per filter, one chunk of N bytes each, holding `data`. */
static int write_file(const char *path, const unsigned char *data)
{
    int ncid, dimid, status;
    size_t chunk = N;
    if ((status = nc_create(path, NC_NETCDF4 | NC_CLOBBER, &ncid)) != NC_NOERR) return status;
    if ((status = nc_def_dim(ncid, "n", N, &dimid)) != NC_NOERR) return status;
    for (size_t i = 0; i < NFILTERS; i++) {
        int varid;
        if ((status = nc_def_var(ncid, FILTERS[i].name, NC_UBYTE, 1, &dimid, &varid)) != NC_NOERR) return status;
        if ((status = nc_def_var_chunking(ncid, varid, NC_CHUNKED, &chunk)) != NC_NOERR) return status;
        check(FILTERS[i].define(ncid, varid), "define", FILTERS[i].name);
    }
    if ((status = nc_enddef(ncid)) != NC_NOERR) return status;
    for (size_t i = 0; i < NFILTERS; i++) {
        int varid;
        if ((status = nc_inq_varid(ncid, FILTERS[i].name, &varid)) != NC_NOERR) return status;
        check(nc_put_var_uchar(ncid, varid, data), "write", FILTERS[i].name);
    }
    return nc_close(ncid);
}

/* The chunk's filter mask and stored size, as HDF5 keeps them. */
static void describe_chunk(const char *path, const char *name)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file < 0 ? -1 : H5Dopen2(file, name, H5P_DEFAULT);
    hsize_t offset[1], size = 0;
    unsigned mask = 0;
    haddr_t addr;
    if (dset < 0 || H5Dget_chunk_info(dset, H5S_ALL, 0, offset, &mask, &addr, &size) < 0)
        printf("     %s: HDF5 cannot describe the chunk\n", name);
    else
        printf("     %s: %d bytes stored as %llu, %s\n", name, N, (unsigned long long)size,
               mask ? "filter skipped (stored as is)" : "filtered");
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
}

static void incompressible(const char *dir)
{
    char path[4096];
    unsigned char *data = malloc(N), *back = malloc(N);
    unsigned state = 12345;
    snprintf(path, sizeof path, "%s/incompressible.nc", dir);
    for (size_t i = 0; i < N; i++) {
        state = state * 1103515245u + 12345u;
        data[i] = (unsigned char)(state >> 23);
    }
    check(write_file(path, data), "create", "file");
    int ncid;
    check(nc_open(path, NC_NOWRITE, &ncid), "open", "file");
    for (size_t i = 0; i < NFILTERS && !failures; i++) {
        int varid;
        memset(back, 0, N);
        check(nc_inq_varid(ncid, FILTERS[i].name, &varid), "inq", FILTERS[i].name);
        int status = nc_get_var_uchar(ncid, varid, back);
        if (status == NC_NOERR && memcmp(back, data, N) == 0)
            printf("PASS %s: an incompressible chunk reads back unchanged\n", FILTERS[i].name);
        else
            check(status ? status : NC_EHDFERR, "incompressible chunk read back", FILTERS[i].name);
    }
    nc_close(ncid);
    for (size_t i = 0; i < NFILTERS; i++) describe_chunk(path, FILTERS[i].name);
    free(data);
    free(back);
}

/* Replaces the filtered chunk of `name` with bytes no decoder accepts, keeping the filter mask. */
static int damage(const char *path, const char *name)
{
    unsigned char junk[200];
    hsize_t offset[1] = {0};
    memset(junk, 0xAB, sizeof junk);
    junk[0] = 0x7F; /* neither a zlib, bzip2, zstd nor blosc header */
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t dset = file < 0 ? -1 : H5Dopen2(file, name, H5P_DEFAULT);
    herr_t status = dset < 0 ? -1 : H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset, sizeof junk, junk);
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
    return status < 0 ? -1 : 0;
}

static void damaged(const char *dir)
{
    char path[4096];
    unsigned char *data = malloc(N), *back = malloc(N);
    for (size_t i = 0; i < N; i++) data[i] = (unsigned char)(i / 256);
    /* Kept whole, for a reader of the same data through HDF5's plugins. */
    snprintf(path, sizeof path, "%s/compressible.nc", dir);
    check(write_file(path, data), "create", "file");
    snprintf(path, sizeof path, "%s/damaged.nc", dir);
    check(write_file(path, data), "create", "file");
    for (size_t i = 0; i < NFILTERS; i++) {
        if (damage(path, FILTERS[i].name) != 0) {
            printf("FAIL %s: HDF5 could not rewrite the chunk\n", FILTERS[i].name);
            failures++;
        }
    }
    int ncid;
    check(nc_open(path, NC_NOWRITE, &ncid), "open", "file");
    for (size_t i = 0; i < NFILTERS; i++) {
        int varid;
        if (strcmp(FILTERS[i].name, "szip") == 0) continue;
        check(nc_inq_varid(ncid, FILTERS[i].name, &varid), "inq", FILTERS[i].name);
        fprintf(stderr, "-- reading the damaged %s chunk\n", FILTERS[i].name);
        int status = nc_get_var_uchar(ncid, varid, back);
        if (status != NC_NOERR) {
            printf("PASS %s: a damaged chunk fails to read: %s\n", FILTERS[i].name, nc_strerror(status));
        } else {
            printf("FAIL %s: a damaged chunk read without error\n", FILTERS[i].name);
            failures++;
        }
    }
    nc_close(ncid);
    free(data);
    free(back);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    unsigned major, minor, release;
    H5get_libversion(&major, &minor, &release);
    printf("HDF5 %u.%u.%u, %s\n", major, minor, release, nc_inq_libvers());
    incompressible(argv[1]);
    damaged(argv[1]);
    return failures ? 1 : 0;
}
