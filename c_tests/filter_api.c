/* SPDX-License-Identifier: BSD-3-Clause */
/* Every public filter function and its error codes, with netcdf-c 4.9.0's semantics (netcdf_filter.h
 * and libdispatch/dfilter.c; the ncaux_h5filterspec_* parser of netcdf_aux.h and libdispatch/daux.c).
 *
 * Prints one line per call: "<what>: <status> [values]". c_tests/run.sh runs it against the
 * stock libnetcdf and the ncfilters libnetcdf (of any release ncfilters knows, from
 * netcdf_meta.h) and requires identical output. With the argument
 * "ncfilters-only" it also checks inputs on which 4.9.0 misbehaves (crash, over-read, invalid
 * free), which must give NC_EINVAL from ncfilters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netcdf.h"
#include "netcdf_meta.h"
#include "netcdf_filter.h"
#include "netcdf_aux.h"

/* netcdf-c 4.9.3 and later define filters on variable-length types (HDF5 makes them optional,
 * NCZarr keeps them unapplied); 4.9.0 refuses them with NC_EFILTER. */
#define NETCDF_RELEASE (NC_VERSION_MAJOR * 10000 + NC_VERSION_MINOR * 100 + NC_VERSION_PATCH)
#define VLEN_FILTER_STATUS (NETCDF_RELEASE >= 40903 ? NC_NOERR : NC_EFILTER)

static int failures = 0, checks = 0;

#define SHOW(what, call) show(what, (call))
static int show(const char *what, int status)
{
    printf("%s: %d %s\n", what, status, status ? nc_strerror(status) : "");
    return status;
}

/* Fails the run (not just the comparison) when a status differs from the documented one. */
static void expect(const char *what, int status, int want)
{
    show(what, status);
    checks++;
    if (status != want) {
        fprintf(stderr, "FAIL %s: got %d (%s), want %d\n", what, status, nc_strerror(status), want);
        failures++;
    }
}

static void print_filters(int ncid, int varid, const char *label)
{
    size_t n = 0, np, i, j;
    unsigned ids[16], params[64];
    SHOW(label, nc_inq_var_filter_ids(ncid, varid, &n, NULL));
    if (n > 16) n = 16;
    nc_inq_var_filter_ids(ncid, varid, &n, ids);
    for (i = 0; i < n; i++) {
        np = 0;
        nc_inq_var_filter_info(ncid, varid, ids[i], &np, NULL);
        if (np > 64) np = 64;
        nc_inq_var_filter_info(ncid, varid, ids[i], &np, params);
        printf("  filter %u:", ids[i]);
        for (j = 0; j < np; j++) printf(" %u", params[j]);
        printf("\n");
    }
}

#define NX 64
#define NY 32
/* A smooth-ish pattern, so compressors have something to do. */
static double pattern(size_t i) { return (double)((i * 7) % 1000) / 4.0 - 100.0; }

static void write_data(int ncid, int varid, nc_type type, const char *label)
{
    static double values[NX * NY];
    char what[64];
    size_t i;
    for (i = 0; i < NX * NY; i++) values[i] = pattern(i);
    snprintf(what, sizeof what, "write %s", label);
    /* nc_put_var_double converts to the variable's type. */
    expect(what, nc_put_var_double(ncid, varid, values), NC_NOERR);
    (void)type;
}

static void check_data(int ncid, int varid, nc_type type, const char *label)
{
    static double values[NX * NY];
    char what[64];
    size_t i, bad = 0;
    snprintf(what, sizeof what, "read %s", label);
    expect(what, nc_get_var_double(ncid, varid, values), NC_NOERR);
    for (i = 0; i < NX * NY; i++) {
        double want = pattern(i);
        if (type == NC_INT || type == NC_SHORT) want = (double)(long)want; /* truncated on write */
        if (values[i] != want) bad++;
    }
    printf("  %s values: %zu of %d differ\n", label, bad, NX * NY);
    if (bad) failures++;
}

static void netcdf4_file(const char *path)
{
    int ncid, dims[2], v_int, v_str, v_vlen = -1, v_scalar, v_multi, v_szip, v_bz, v_zstd, v_blosc, v_plain, vlen_type;
    unsigned level = 5, two[2] = {5, 6}, szip_bad[2] = {32, 7}, szip_ok[2] = {32, 32}, id = 99, p[8];
    size_t np = 77;
    int has = -1, lev = -1;
    unsigned sub = 0, blev = 0, bsize = 0, bshuf = 0;

    printf("== %s\n", path);
    if (SHOW("create", nc_create(path, NC_NETCDF4 | NC_CLOBBER, &ncid))) { failures++; return; }
    nc_def_dim(ncid, "x", NX, &dims[0]);
    nc_def_dim(ncid, "y", NY, &dims[1]);
    nc_def_var(ncid, "i", NC_INT, 2, dims, &v_int);
    nc_def_var(ncid, "s", NC_STRING, 2, dims, &v_str);
    nc_def_vlen(ncid, "vl", NC_INT, &vlen_type);
    if (SHOW("def vlen variable", nc_def_var(ncid, "vlv", vlen_type, 1, dims, &v_vlen))) failures++;
    nc_def_var(ncid, "scalar", NC_FLOAT, 0, NULL, &v_scalar);
    nc_def_var(ncid, "multi", NC_DOUBLE, 2, dims, &v_multi);
    nc_def_var(ncid, "szip", NC_INT, 2, dims, &v_szip);
    nc_def_var(ncid, "bz", NC_SHORT, 2, dims, &v_bz);
    nc_def_var(ncid, "zstd", NC_FLOAT, 2, dims, &v_zstd);
    nc_def_var(ncid, "blosc", NC_INT, 2, dims, &v_blosc);
    nc_def_var(ncid, "plain", NC_INT, 2, dims, &v_plain);

    expect("def bad ncid", nc_def_var_filter(ncid + 99999, v_int, 1, 1, &level), NC_EBADID);
    expect("def bad varid", nc_def_var_filter(ncid, 999, 1, 1, &level), NC_ENOTVAR);
    expect("def string var", nc_def_var_filter(ncid, v_str, 1, 1, &level), VLEN_FILTER_STATUS);
    expect("def vlen var", nc_def_var_filter(ncid, v_vlen, 1, 1, &level), VLEN_FILTER_STATUS);
    expect("def scalar var", nc_def_var_filter(ncid, v_scalar, 1, 1, &level), NC_EINVAL);
    expect("def deflate 2 params", nc_def_var_filter(ncid, v_int, 1, 2, two), NC_EFILTER);
    level = 10;
    expect("def deflate level 10", nc_def_var_filter(ncid, v_int, 1, 1, &level), NC_EINVAL);
    level = 5;
    expect("def deflate 5", nc_def_var_filter(ncid, v_int, 1, 1, &level), NC_NOERR);
    expect("def unknown id", nc_def_var_filter(ncid, v_int, 55555, 0, NULL), NC_ENOFILTER);
    expect("def szip after deflate", nc_def_var_filter(ncid, v_int, 4, 2, szip_ok), NC_EINVAL);
    expect("def szip odd ppb", nc_def_var_filter(ncid, v_szip, 4, 2, szip_bad), NC_EINVAL);
    expect("def szip", nc_def_var_filter(ncid, v_szip, 4, 2, szip_ok), NC_NOERR);
    expect("def deflate after szip", nc_def_var_filter(ncid, v_szip, 1, 1, &level), NC_EINVAL);

    /* Order: fletcher32 first, shuffle next, the rest as defined; re-definition keeps the position. */
    level = 2;
    expect("multi deflate", nc_def_var_filter(ncid, v_multi, 1, 1, &level), NC_NOERR);
    expect("multi shuffle", nc_def_var_filter(ncid, v_multi, 2, 0, NULL), NC_NOERR);
    expect("multi fletcher32", nc_def_var_filter(ncid, v_multi, 3, 0, NULL), NC_NOERR);
    level = 7;
    expect("multi deflate again", nc_def_var_filter(ncid, v_multi, 1, 1, &level), NC_NOERR);
    print_filters(ncid, v_multi, "multi ids");

    expect("bzip2 level 0", nc_def_var_bzip2(ncid, v_bz, 0), NC_EINVAL);
    expect("bzip2 level 9", nc_def_var_bzip2(ncid, v_bz, 9), NC_NOERR);
    expect("inq bzip2", nc_inq_var_bzip2(ncid, v_bz, &has, &lev), NC_NOERR);
    printf("  has=%d level=%d\n", has, lev);
    expect("inq bzip2 absent", nc_inq_var_bzip2(ncid, v_plain, &has, &lev), NC_NOERR);
    printf("  has=%d level=%d\n", has, lev);
    expect("zstd level 23", nc_def_var_zstandard(ncid, v_zstd, 23), NC_EINVAL);
    expect("zstd level -5", nc_def_var_zstandard(ncid, v_zstd, -5), NC_NOERR);
    expect("inq zstd", nc_inq_var_zstandard(ncid, v_zstd, &has, &lev), NC_NOERR);
    printf("  has=%d level=%d\n", has, lev);
    expect("blosc subcompressor 6", nc_def_var_blosc(ncid, v_blosc, 6, 5, 0, 1), NC_EINVAL);
    expect("blosc shuffle 3", nc_def_var_blosc(ncid, v_blosc, 1, 5, 0, 3), NC_EINVAL);
    expect("blosc lz4", nc_def_var_blosc(ncid, v_blosc, 1, 5, 256, 1), NC_NOERR);
    expect("inq blosc", nc_inq_var_blosc(ncid, v_blosc, &has, &sub, &blev, &bsize, &bshuf), NC_NOERR);
    printf("  has=%d sub=%u level=%u blocksize=%u shuffle=%u\n", has, sub, blev, bsize, bshuf);

    expect("inq first filter of plain", nc_inq_var_filter(ncid, v_plain, &id, &np, p), NC_NOERR);
    printf("  id=%u nparams=%zu (77 = untouched)\n", id, np);
    expect("inq first filter of multi", nc_inq_var_filter(ncid, v_multi, &id, &np, p), NC_NOERR);
    printf("  id=%u nparams=%zu\n", id, np);
    expect("inq info absent", nc_inq_var_filter_info(ncid, v_plain, 1, &np, p), NC_ENOFILTER);
    expect("inq ids NULL outputs", nc_inq_var_filter_ids(ncid, v_multi, NULL, NULL), NC_NOERR);
    expect("inq ids bad ncid", nc_inq_var_filter_ids(ncid + 99999, v_multi, &np, NULL), NC_EBADID);
    expect("avail deflate", nc_inq_filter_avail(ncid, 1), NC_NOERR);
    expect("avail bzip2", nc_inq_filter_avail(ncid, 307), NC_NOERR);
    expect("avail unknown", nc_inq_filter_avail(ncid, 55555), NC_ENOFILTER);
    expect("avail bad ncid", nc_inq_filter_avail(ncid + 99999, 1), NC_EBADID);

    expect("enddef", nc_enddef(ncid), NC_NOERR);
    write_data(ncid, v_int, NC_INT, "deflate");
    write_data(ncid, v_multi, NC_DOUBLE, "multi");
    write_data(ncid, v_szip, NC_INT, "szip");
    write_data(ncid, v_bz, NC_SHORT, "bzip2");
    write_data(ncid, v_zstd, NC_FLOAT, "zstd");
    write_data(ncid, v_blosc, NC_INT, "blosc");
    level = 3;
    expect("def outside define mode", nc_def_var_filter(ncid, v_plain, 1, 1, &level), NC_EINDEFINE);
    expect("redef", nc_redef(ncid), NC_NOERR);
    expect("def after creation", nc_def_var_filter(ncid, v_plain, 1, 1, &level), NC_ELATEDEF);
    expect("close", nc_close(ncid), NC_NOERR);

    expect("reopen", nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
    print_filters(ncid, v_int, "reopened deflate");
    print_filters(ncid, v_multi, "reopened multi");
    print_filters(ncid, v_szip, "reopened szip");
    print_filters(ncid, v_bz, "reopened bzip2");
    print_filters(ncid, v_zstd, "reopened zstd");
    print_filters(ncid, v_blosc, "reopened blosc");
    check_data(ncid, v_int, NC_INT, "deflate");
    check_data(ncid, v_multi, NC_DOUBLE, "multi");
    check_data(ncid, v_szip, NC_INT, "szip");
    check_data(ncid, v_bz, NC_SHORT, "bzip2");
    check_data(ncid, v_zstd, NC_FLOAT, "zstd");
    check_data(ncid, v_blosc, NC_INT, "blosc");
    expect("inq blosc reopened", nc_inq_var_blosc(ncid, v_blosc, &has, &sub, &blev, &bsize, &bshuf), NC_NOERR);
    printf("  has=%d sub=%u level=%u blocksize=%u shuffle=%u\n", has, sub, blev, bsize, bshuf);
    nc_close(ncid);
}

static void classic_file(const char *path)
{
    int ncid, dim, varid;
    unsigned level = 1, id = 99;
    size_t n = 99;
    printf("== %s\n", path);
    nc_create(path, NC_CLOBBER, &ncid);
    nc_def_dim(ncid, "x", 4, &dim);
    nc_def_var(ncid, "v", NC_INT, 1, &dim, &varid);
    expect("classic def", nc_def_var_filter(ncid, varid, 1, 1, &level), NC_ENOTNC4);
    expect("classic ids", nc_inq_var_filter_ids(ncid, varid, &n, NULL), NC_NOERR);
    printf("  nfilters=%zu\n", n);
    expect("classic info", nc_inq_var_filter_info(ncid, varid, 1, &n, NULL), NC_ENOFILTER);
    expect("classic first", nc_inq_var_filter(ncid, varid, &id, &n, NULL), NC_NOERR);
    printf("  id=%u\n", id);
    expect("classic avail", nc_inq_filter_avail(ncid, 1), NC_ENOFILTER);
    nc_close(ncid);
}

static void nczarr_file(const char *url)
{
    int ncid, dim, varid;
    unsigned level = 4;
    printf("== nczarr\n");
    if (SHOW("create", nc_create(url, NC_NETCDF4 | NC_CLOBBER, &ncid))) { failures++; return; }
    nc_def_dim(ncid, "x", 100, &dim);
    nc_def_var(ncid, "v", NC_INT, 1, &dim, &varid);
    expect("nczarr def deflate", nc_def_var_filter(ncid, varid, 1, 1, &level), NC_NOERR);
    expect("nczarr def bzip2", nc_def_var_bzip2(ncid, varid, 3), NC_NOERR);
    expect("nczarr avail unknown", nc_inq_filter_avail(ncid, 55555), NC_ENOFILTER);
    print_filters(ncid, varid, "nczarr ids");
    expect("nczarr close", nc_close(ncid), NC_NOERR);
    expect("nczarr reopen", nc_open(url, NC_NOWRITE, &ncid), NC_NOERR);
    print_filters(ncid, varid, "nczarr reopened");
    nc_close(ncid);
}

static void filterspecs(void)
{
    const char *valid[] = {"307,9", " 32768, -17b, 23ub, -25S, 27US, 77, 93U, 789f, -1L, 1UL, 0.5d", "1,+5,7u", "2"};
    unsigned id, *params, words[2];
    size_t n, i, k, nspecs;
    int format;
    NC_H5_Filterspec **specs;
    printf("== filter specs\n");
    for (k = 0; k < sizeof(valid) / sizeof(*valid); k++) {
        params = NULL;
        SHOW(valid[k], ncaux_h5filterspec_parse(valid[k], &id, &n, &params));
        printf("  id=%u:", id);
        for (i = 0; i < n; i++) printf(" %u", params[i]);
        printf("\n");
        free(params);
    }
    expect("parselist", ncaux_h5filterspec_parselist("307,9|1,2|40000", &format, &nspecs, &specs), NC_NOERR);
    for (k = 0; k < nspecs; k++) {
        printf("  spec %zu: id=%u nparams=%zu\n", k, specs[k]->filterid, specs[k]->nparams);
        ncaux_h5filterspec_free(specs[k]);
    }
    free(specs);
    expect("parse_parameter", ncaux_h5filterspec_parse_parameter("-9223372036854775807L", &n, words), NC_NOERR);
    printf("  n=%zu %u %u\n", n, words[0], words[1]);
    expect("parse NULL", ncaux_h5filterspec_parse(NULL, &id, &n, &params), NC_EINVAL);
    expect("parse empty", ncaux_h5filterspec_parse("", &id, &n, &params), NC_EINVAL);
    expect("parse unknown tag", ncaux_h5filterspec_parse("307,9q", &id, &n, &params), NC_EINVAL);
    expect("parse missing id", ncaux_h5filterspec_parse("x,9", &id, &n, &params), NC_EINVAL);
}

/* Inputs on which netcdf-c 4.9.0 reads out of bounds, frees an interior pointer, wraps or
 * dereferences NULL: ncfilters must answer NC_EINVAL. */
static void ncfilters_only(const char *path)
{
    const char *bad[] = {"307,9,", "307,,9", "307, ", "307,9 ", "307,4294967296", "307,1.5", "307,18446744073709551616UL"};
    unsigned id, *params = NULL;
    size_t n, k, nspecs;
    int ncid, dim, varid, format;
    NC_H5_Filterspec **specs;
    printf("== ncfilters only\n");
    for (k = 0; k < sizeof(bad) / sizeof(*bad); k++)
        expect(bad[k], ncaux_h5filterspec_parse(bad[k], &id, &n, &params), NC_EINVAL);
    expect("parselist [1]", ncaux_h5filterspec_parselist("[1]", &format, &nspecs, &specs), NC_EINVAL);
    expect("parselist [2]307,9", ncaux_h5filterspec_parselist("[2]307,9", &format, &nspecs, &specs), NC_NOERR);
    printf("  format=%d nspecs=%zu\n", format, nspecs);
    ncaux_h5filterspec_free(specs[0]);
    free(specs);
    expect("parse_parameter NULL out", ncaux_h5filterspec_parse_parameter("9", &n, NULL), NC_EINVAL);
    nc_create(path, NC_NETCDF4 | NC_CLOBBER, &ncid);
    nc_def_dim(ncid, "x", 4, &dim);
    nc_def_var(ncid, "v", NC_INT, 1, &dim, &varid);
    expect("def deflate NULL params", nc_def_var_filter(ncid, varid, 1, 1, NULL), NC_EINVAL);
    nc_close(ncid);
}

int main(int argc, char **argv)
{
    int only = argc > 1 && strcmp(argv[1], "ncfilters-only") == 0;
    if (only) {
        ncfilters_only("tmp_c_ncfilters_only.nc");
    } else {
        netcdf4_file("tmp_c_filter_api.nc");
        classic_file("tmp_c_classic.nc");
        nczarr_file("file://tmp_c_filter_api.zarr#mode=nczarr,file");
        filterspecs();
    }
    if (failures) fprintf(stderr, "%d unexpected status codes\n", failures);
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
