/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plugin_unload: ncfilters' plugin libraries compress large chunks on worker threads, and
 * unloading a plugin leaves no thread running in unmapped code (issue 15).
 *
 *   plugin_unload PLUGIN.so CD_VALUE [CYCLES]
 *
 * Each cycle: dlopen the plugin as HDF5 does, compress a 4 MiB float32 chunk through its
 * H5Z_class2_t filter (large enough for its worker threads) on a thread that then exits (so its
 * thread-local contexts are freed, as when an application's I/O thread ends), decode it, compare,
 * dlclose. After
 * each dlclose: if the library is gone from /proc/self/maps, no thread but this one may remain;
 * if glibc kept it mapped (a thread-local destructor still pins it), its threads may stay but
 * must not grow from cycle to cycle. Prints one line; exits non-zero on any failure.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin_structs.h"

#define CHUNK (4u << 20)
#define H5Z_FLAG_REVERSE 0x0100

static int thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    int count = 0;
    if (!tasks) return -1;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;)
        if (entry->d_name[0] != '.') count++;
    closedir(tasks);
    return count;
}

/*
 * pthread_join and a library's own joins return once a thread has left user code, but the
 * kernel may list the exiting task in /proc/self/task a little longer. Poll for up to two
 * seconds until at most `limit` threads are listed; a thread still running (in unmapped code
 * or not) never leaves the list, so the check keeps its strength.
 */
static int settled_thread_count(int limit) {
    struct timespec pause = {0, 1000000};
    int count = thread_count();
    for (int waited_ms = 0; count > limit && waited_ms < 2000; waited_ms++) {
        nanosleep(&pause, NULL);
        count = thread_count();
    }
    return count;
}

static int is_mapped(const char *path) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!maps) return -1;
    while (!found && fgets(line, sizeof line, maps)) found = strstr(line, path) != NULL;
    fclose(maps);
    return found;
}

struct round_trip {
    const H5Z_class2_t *filter_class;
    unsigned cd_value;
    const float *original;
    int threads_while_compressing;
    const char *failure;
};

static void *round_trip(void *arg) {
    struct round_trip *job = arg;
    size_t buf_size = CHUNK;
    void *buf = malloc(CHUNK);
    if (!buf) { job->failure = "out of memory"; return NULL; }
    memcpy(buf, job->original, CHUNK);
    size_t packed = job->filter_class->filter(0, 1, &job->cd_value, CHUNK, &buf_size, &buf);
    job->threads_while_compressing = thread_count();
    if (packed == 0) { job->failure = "encode failed"; free(buf); return NULL; }
    size_t unpacked = job->filter_class->filter(H5Z_FLAG_REVERSE, 1, &job->cd_value, packed, &buf_size, &buf);
    if (unpacked != CHUNK || memcmp(buf, job->original, CHUNK) != 0) job->failure = "the round trip changed the chunk";
    free(buf);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: plugin_unload PLUGIN.so CD_VALUE [CYCLES]\n");
        return 2;
    }
    const char *path = argv[1];
    unsigned cd_value = (unsigned)strtoul(argv[2], NULL, 10);
    int cycles = argc > 3 ? atoi(argv[3]) : 4;
    float *original = malloc(CHUNK);
    if (!original) return 1;
    for (size_t i = 0; i < CHUNK / sizeof(float); i++)
        original[i] = 280.0f + 20.0f * (float)((i * 2654435761u) % 1000) / 1000.0f + (float)(i % 613) * 0.01f;

    int most_threads = 0, unmapped_cycles = 0;
    for (int cycle = 0; cycle < cycles; cycle++) {
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
        const void *(*info)(void) = (const void *(*)(void))dlsym(handle, "H5PLget_plugin_info");
        if (!info) { fprintf(stderr, "no H5PLget_plugin_info in %s\n", path); return 1; }
        struct round_trip job = {info(), cd_value, original, 0, NULL};
        pthread_t thread;
        if (pthread_create(&thread, NULL, round_trip, &job) != 0 || pthread_join(thread, NULL) != 0) return 1;
        if (job.failure) { fprintf(stderr, "cycle %d: %s\n", cycle, job.failure); return 1; }
        int during = job.threads_while_compressing;
        if (dlclose(handle) != 0) { fprintf(stderr, "dlclose: %s\n", dlerror()); return 1; }
        int mapped = is_mapped(path);
        if (during > most_threads) most_threads = during;
        int after = settled_thread_count(mapped ? most_threads : 1);
        if (!mapped) {
            unmapped_cycles++;
            if (after != 1) {
                fprintf(stderr, "cycle %d: %s was unmapped but %d threads remain\n", cycle, path, after);
                return 1;
            }
        } else if (cycle > 0 && after > most_threads) {
            fprintf(stderr, "cycle %d: threads grew to %d (at most %d while compressing)\n", cycle, after, most_threads);
            return 1;
        }
    }
    printf("PASS plugin_unload %s: %d cycles, up to %d threads while compressing, unmapped by dlclose in %d cycles, "
           "%d thread(s) left\n", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, cycles, most_threads,
           unmapped_cycles, settled_thread_count(1));
    free(original);
    return 0;
}
