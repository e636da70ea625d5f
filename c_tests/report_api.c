/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ncfilters' own API (include/ncfilters.h) through the ncfilters build's libnetcdf: the report,
 * spec and codec descriptions, their error JSON and NULL arguments. Every returned text is freed
 * with free() (run under valgrind by c_tests/run.sh). Run with HDF5_PLUGIN_PATH set to the
 * build's plugin directory. Prints one line per check; exits 1 on the first failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netcdf.h"
#include "netcdf_meta.h"
#include "ncfilters.h"

static int checks = 0;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        checks++;                                                                         \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

/* Whether json contains every one of the NULL-terminated needles. */
static int contains_all(const char *json, const char *const *needles)
{
    for (; *needles; needles++)
        if (strstr(json, *needles) == NULL) {
            fprintf(stderr, "missing %s\n", *needles);
            return 0;
        }
    return 1;
}

static void spec(const char *text, int expected, const char *const *needles)
{
    char *json = NULL;
    int status = ncfilters_describe_spec(text, &json);
    CHECK(json != NULL, "spec %s: no JSON", text);
    CHECK(status == expected, "spec %s: status %d, expected %d: %s", text, status, expected, json);
    CHECK(contains_all(json, needles), "spec %s: %s", text, json);
    printf("describe_spec(\"%s\") = %d %s\n", text, status, json);
    free(json);
}

static void codec(const char *text, int expected, const char *const *needles)
{
    char *json = NULL;
    int status = ncfilters_describe_codec(text, &json);
    CHECK(json != NULL, "codec %s: no JSON", text);
    CHECK(status == expected, "codec %s: status %d, expected %d: %s", text, status, expected, json);
    CHECK(contains_all(json, needles), "codec %s: %s", text, json);
    printf("describe_codec(%s) = %d %s\n", text, status, json);
    free(json);
}

int main(void)
{
    char *json = NULL;

    /* The report: the standard filters built in, for both backends; HDF5's own filters. */
    CHECK(ncfilters_report(&json) == NC_NOERR && json != NULL, "report: %s", json ? json : "(null)");
    {
        const char *const needles[] = {
            "\"ncfilters_version\":", "\"netcdf_version\":\"" NC_VERSION "\"", "\"variable\":\"HDF5_PLUGIN_PATH\"",
            "\"origin\":\"HDF5_PLUGIN_PATH\"", "\"state\":\"searched\"", "\"libraries\":[",
            "{\"id\":1,\"name\":\"deflate\",\"standard\":true,\"hdf5\":{\"source\":\"hdf5\"",
            "{\"id\":5,\"name\":\"nbit\",\"standard\":false,\"hdf5\":{\"source\":\"hdf5\"",
            "{\"id\":307,\"name\":\"bzip2\",\"standard\":true,", "\"codec_id\":\"bz2\"",
            "{\"id\":32015,\"name\":\"zstd\",\"standard\":true,", "\"codec_id\":\"zstd\"",
            "\"outcome\":\"used\"", NULL};
        CHECK(contains_all(json, needles), "report: %s", json);
    }
    printf("report: %zu bytes of JSON\n", strlen(json));
    free(json);
    json = NULL;

    /* Specs, by number and by name, and the codec JSON NCZarr writes for them. */
    {
        const char *const zstd[] = {"\"id\":32015", "\"name\":\"zstd\"", "\"params\":[3]", "\"codec\":{\"id\":\"zstd\"",
                                    "\"codec_error\":null", NULL};
        spec("zstd,3", NC_NOERR, zstd);
        spec("32015,3", NC_NOERR, zstd);
        const char *const list[] = {"\"id\":2", "\"id\":307", "\"codec\":{\"id\":\"bz2\"", "\"id\":1,",
                                    "\"codec\":{\"id\":\"zlib\"", NULL};
        spec("shuffle|bzip2,9|1,5", NC_NOERR, list);
        const char *const bad[] = {"{\"error\":", "zstd,x", NULL};
        spec("zstd,x", NC_EFILTER, bad);
        const char *const unknown[] = {"{\"error\":", "nosuchfilter", NULL};
        spec("nosuchfilter,1", NC_EFILTER, unknown);
    }

    /* Codecs back to HDF5 filters. */
    {
        const char *const zstd[] = {"{\"id\":32015,\"name\":\"zstd\",\"params\":[3]}", NULL};
        codec("{\"id\": \"zstd\", \"level\": 3}", NC_NOERR, zstd);
        codec("{\"id\": \"zstd\", \"level\": \"3\"}", NC_NOERR, zstd);
        const char *const zlib[] = {"{\"id\":1,\"name\":\"deflate\",\"params\":[5]}", NULL};
        codec("{\"id\": \"zlib\", \"level\": 5}", NC_NOERR, zlib);
        const char *const bad[] = {"{\"error\":", "not valid JSON", NULL};
        codec("{\"id\": ", NC_EFILTER, bad);
        const char *const unknown[] = {"{\"error\":", "nosuchcodec", NULL};
        codec("{\"id\": \"nosuchcodec\"}", NC_ENOFILTER, unknown);
    }

    /* NULL arguments: NC_EINVAL, and the error JSON whenever json_out is given. */
    CHECK(ncfilters_report(NULL) == NC_EINVAL, "report(NULL)");
    CHECK(ncfilters_describe_spec("1", NULL) == NC_EINVAL, "describe_spec(spec, NULL)");
    CHECK(ncfilters_describe_codec("{}", NULL) == NC_EINVAL, "describe_codec(codec, NULL)");
    CHECK(ncfilters_describe_spec(NULL, &json) == NC_EINVAL && json && strstr(json, "\"error\""), "describe_spec(NULL)");
    free(json);
    json = NULL;
    CHECK(ncfilters_describe_codec(NULL, &json) == NC_EINVAL && json && strstr(json, "\"error\""), "describe_codec(NULL)");
    free(json);

    printf("PASS report_api: %d checks\n", checks);
    return 0;
}
