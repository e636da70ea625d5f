/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program linked against a static libnetcdf.a built with ncfilters, with only the libraries its
 * netcdf.pc names (`cargo xtask matrix`, the static configuration): it writes a zstd-compressed
 * variable to NCZarr with no plugin path, then reads it back.
 *   static_program <NCZarr URL>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netcdf.h>
#include <netcdf_filter.h>
#include <ncfilters.h>

#define CHECK(e) do { int s_ = (e); if (s_) { printf("%s: %s\n", #e, nc_strerror(s_)); return 1; } } while (0)
#define N 1000

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s <NCZarr URL>\n", argv[0]); return 2; }
    int nc, dim, var;
    float out[N], in[N];
    unsigned level = 3, id = 0;
    size_t nfilters = 0;
    for (int i = 0; i < N; i++) out[i] = (float)i * 0.5f;
    CHECK(nc_create(argv[1], NC_CLOBBER | NC_NETCDF4, &nc));
    CHECK(nc_def_dim(nc, "x", N, &dim));
    CHECK(nc_def_var(nc, "v", NC_FLOAT, 1, &dim, &var));
    CHECK(nc_def_var_filter(nc, var, H5Z_FILTER_ZSTD, 1, &level));
    CHECK(nc_put_var_float(nc, var, out));
    CHECK(nc_close(nc));
    CHECK(nc_open(argv[1], NC_NOWRITE, &nc));
    CHECK(nc_inq_var_filter_ids(nc, 0, &nfilters, &id));
    CHECK(nc_get_var_float(nc, 0, in));
    CHECK(nc_close(nc));
    for (int i = 0; i < N; i++)
        if (in[i] != out[i]) { printf("value %d differs\n", i); return 1; }
    if (nfilters != 1 || id != H5Z_FILTER_ZSTD) { printf("filters: %zu (id %u), not zstd\n", nfilters, id); return 1; }
    printf("PASS a program linked with libnetcdf.a and netcdf.pc's Libs.private wrote and read zstd in NCZarr\n");
    /* A static library says what it contains, as the shared one does. */
    char *report = NULL;
    CHECK(ncfilters_report(&report));
    const char *key = "\"ncfilters_build\":\"";
    const char *build = strstr(report, key);
    if (!build) { printf("libnetcdf.a's report names no ncfilters build: %s\n", report); free(report); return 1; }
    build += strlen(key);
    printf("PASS libnetcdf.a's report names its ncfilters build: %.*s\n", (int)strcspn(build, "\""), build);
    free(report);
    return 0;
}
