/* SPDX-License-Identifier: BSD-3-Clause */
/* ncfilters' MPI filter test (issue 13), built and run by `cargo xtask parallel`:
 *
 *   mpiexec -n 4 mpi_filters write FILE
 *       Four ranks create FILE in parallel. Variable own_R is written by rank R alone (the other
 *       ranks take part in the collective write with nothing): own_0 and own_2 with shuffle + zstd,
 *       own_1 and own_3 with bzip2, all defined through nc_def_var_filter. Variable "all" has
 *       deflate + fletcher32 (nc_def_var_deflate, nc_def_var_fletcher32) and every rank writes
 *       its own rows of it. No nc_var_par_access call: defining a filter must switch the variable
 *       to collective access, as HDF5 requires for filtered parallel writes.
 *   mpi_filters read FILE
 *       One process opens FILE serially and checks every filter and every value.
 */
#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <netcdf_filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS 4
#define OWN_LEN 4096
#define OWN_CHUNK 1024
#define ROWS_PER_RANK 256
#define COLS 64

#define CHECK(call) do { int status_ = (call); if (status_ != NC_NOERR) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(status_)); \
    MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define EXPECT(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } } while (0)

static float own_value(int var, size_t i) { return (float)var * 1000.0f + (float)(i % 97) * 0.5f; }
static int all_value(size_t row, size_t col) { return (int)(row * COLS + col) * 3 - 7; }

static int write_file(const char *path) {
    int rank, size, nc, own_dim, row_dim, col_dim, own[RANKS], all;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != RANKS) {
        if (rank == 0) fprintf(stderr, "run with mpiexec -n %d\n", RANKS);
        return 1;
    }
    CHECK(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &nc));
    CHECK(nc_def_dim(nc, "n", OWN_LEN, &own_dim));
    CHECK(nc_def_dim(nc, "row", RANKS * ROWS_PER_RANK, &row_dim));
    CHECK(nc_def_dim(nc, "col", COLS, &col_dim));
    size_t own_chunk = OWN_CHUNK;
    for (int v = 0; v < RANKS; v++) {
        char name[16];
        snprintf(name, sizeof name, "own_%d", v);
        CHECK(nc_def_var(nc, name, NC_FLOAT, 1, &own_dim, &own[v]));
        CHECK(nc_def_var_chunking(nc, own[v], NC_CHUNKED, &own_chunk));
        if (v % 2 == 0) {
            unsigned int level = 3;
            CHECK(nc_def_var_filter(nc, own[v], H5Z_FILTER_SHUFFLE, 0, NULL));
            CHECK(nc_def_var_filter(nc, own[v], H5Z_FILTER_ZSTD, 1, &level));
        } else {
            unsigned int level = 9;
            CHECK(nc_def_var_filter(nc, own[v], H5Z_FILTER_BZIP2, 1, &level));
        }
    }
    int dims[2] = {row_dim, col_dim};
    size_t all_chunks[2] = {ROWS_PER_RANK, COLS};
    CHECK(nc_def_var(nc, "all", NC_INT, 2, dims, &all));
    CHECK(nc_def_var_chunking(nc, all, NC_CHUNKED, all_chunks));
    CHECK(nc_def_var_deflate(nc, all, 0, 1, 4));
    CHECK(nc_def_var_fletcher32(nc, all, NC_FLETCHER32));
    CHECK(nc_enddef(nc));

    float *values = malloc(OWN_LEN * sizeof *values);
    int *rows = malloc(ROWS_PER_RANK * COLS * sizeof *rows);
    if (!values || !rows) return 1;
    for (int v = 0; v < RANKS; v++) {
        for (size_t i = 0; i < OWN_LEN; i++) values[i] = own_value(v, i);
        size_t start = 0, count = (v == rank) ? OWN_LEN : 0;
        CHECK(nc_put_vara_float(nc, own[v], &start, &count, values));
    }
    for (size_t r = 0; r < ROWS_PER_RANK; r++)
        for (size_t c = 0; c < COLS; c++) rows[r * COLS + c] = all_value(rank * ROWS_PER_RANK + r, c);
    size_t start[2] = {(size_t)rank * ROWS_PER_RANK, 0}, count[2] = {ROWS_PER_RANK, COLS};
    CHECK(nc_put_vara_int(nc, all, start, count, rows));
    CHECK(nc_close(nc));
    free(values);
    free(rows);
    if (rank == 0) printf("wrote %s with %d ranks\n", path, size);
    return 0;
}

static int check_filters(int nc, int var, const char *name, size_t n, const unsigned int *want) {
    size_t nfilters = 0;
    unsigned int ids[8];
    CHECK(nc_inq_var_filter_ids(nc, var, &nfilters, NULL));
    EXPECT(nfilters == n, "%s: %zu filters, expected %zu", name, nfilters, n);
    CHECK(nc_inq_var_filter_ids(nc, var, &nfilters, ids));
    for (size_t i = 0; i < n; i++) EXPECT(ids[i] == want[i], "%s: filter %zu is %u, expected %u", name, i, ids[i], want[i]);
    return 0;
}

static int read_file(const char *path) {
    int nc, var;
    static const unsigned int shuffle_zstd[] = {H5Z_FILTER_SHUFFLE, H5Z_FILTER_ZSTD};
    static const unsigned int bzip2[] = {H5Z_FILTER_BZIP2};
    /* netCDF-4 puts fletcher32 first, before the deflate defined earlier. */
    static const unsigned int fletcher32_deflate[] = {H5Z_FILTER_FLETCHER32, H5Z_FILTER_DEFLATE};
    CHECK(nc_open(path, NC_NOWRITE, &nc));
    float *values = malloc(OWN_LEN * sizeof *values);
    int *all = malloc(RANKS * ROWS_PER_RANK * COLS * sizeof *all);
    if (!values || !all) return 1;
    for (int v = 0; v < RANKS; v++) {
        char name[16];
        snprintf(name, sizeof name, "own_%d", v);
        CHECK(nc_inq_varid(nc, name, &var));
        if (check_filters(nc, var, name, v % 2 == 0 ? 2 : 1, v % 2 == 0 ? shuffle_zstd : bzip2)) return 1;
        CHECK(nc_get_var_float(nc, var, values));
        for (size_t i = 0; i < OWN_LEN; i++)
            EXPECT(values[i] == own_value(v, i), "%s[%zu] = %g, expected %g", name, i, values[i], own_value(v, i));
    }
    CHECK(nc_inq_varid(nc, "all", &var));
    if (check_filters(nc, var, "all", 2, fletcher32_deflate)) return 1;
    CHECK(nc_get_var_int(nc, var, all));
    for (size_t r = 0; r < RANKS * ROWS_PER_RANK; r++)
        for (size_t c = 0; c < COLS; c++)
            EXPECT(all[r * COLS + c] == all_value(r, c), "all[%zu][%zu] = %d, expected %d", r, c, all[r * COLS + c], all_value(r, c));
    CHECK(nc_close(nc));
    free(values);
    free(all);
    printf("read %s: every filter and value as written\n", path);
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int failed = 1;
    if (argc == 3 && strcmp(argv[1], "write") == 0) failed = write_file(argv[2]);
    else if (argc == 3 && strcmp(argv[1], "read") == 0) failed = read_file(argv[2]);
    else fprintf(stderr, "usage: mpi_filters write|read FILE\n");
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
