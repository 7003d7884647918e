/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay.c: runs a fuzz target's entry point on files and on every file of
 * directories, once each, without libFuzzer: the seed corpora and the
 * regression inputs become ordinary tests, under any compiler and any
 * sanitizer. Exit status 0 when every input ran; a crash is the failure.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    /* An exact-size copy, so that a read past the input is caught. */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        size_t size = strlen(path) + strlen(e->d_name) + 2;
        if (grown == NULL || (grown[n] = malloc(size)) == NULL) {
            closedir(d);
            return -1;
        }
        names = grown;
        snprintf(names[n++], size, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, compare);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0)
            rc = run_path(names[i], count);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue; /* libFuzzer-style flags are accepted and ignored */
        if (run_path(argv[i], &count) != 0)
            return 1;
    }
    printf("%s: replayed %d inputs\n", argv[0], count);
    return 0;
}
