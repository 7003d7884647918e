/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_temp.h: the file a fuzz target writes its input to, for the code
 * under test to open by name: `name` in a new directory under $TMPDIR (or
 * /tmp), made on the first call and removed with its directory at exit.
 * Include after fuzz_util.h, with _GNU_SOURCE defined (mkdtemp).
 */
#ifndef SKETCH_FUZZ_TEMP_H
#define SKETCH_FUZZ_TEMP_H

#include <unistd.h>

static char fuzz_temp_path[4096];

static void fuzz_temp_remove(void)
{
    unlink(fuzz_temp_path);
    char *slash = strrchr(fuzz_temp_path, '/');
    if (slash != NULL) {
        *slash = '\0';
        rmdir(fuzz_temp_path);
    }
}

static inline char *fuzz_temp_file(const char *name)
{
    if (fuzz_temp_path[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_temp_path, sizeof fuzz_temp_path, "%s/sketch-fuzz-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        FUZZ_CHECK(mkdtemp(fuzz_temp_path) != NULL);
        FUZZ_CHECK(strlen(fuzz_temp_path) + 1 + strlen(name) < sizeof fuzz_temp_path);
        strcat(fuzz_temp_path, "/");
        strcat(fuzz_temp_path, name);
        atexit(fuzz_temp_remove);
    }
    return fuzz_temp_path;
}

#endif
