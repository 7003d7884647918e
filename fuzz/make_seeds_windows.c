/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_seeds_windows.c: the seeds of the fuzz target of the sliding-window
 * HyperLogLog (make_seeds.c writes them with the rest), from real sketches
 * of the library.
 */
#include <stdio.h>
#include <stdlib.h>

#include "make_seeds.h"
#include "sketch.h"

/* Empty; a few items in order; late items over many slots; a coarse
 * resolution at the lowest precision. The control byte is 0: the seeds
 * are as written. */
void window_hll_seeds(void)
{
    static const struct {
        const char *name;
        unsigned precision;
        uint64_t horizon, resolution;
        unsigned adds, late;
    } shapes[] = {{"empty", 4, 10, 1, 0, 0},
                  {"few", 6, 100, 1, 20, 0},
                  {"late", 8, 1000, 1, 3000, 300},
                  {"coarse", 4, 3600, 60, 500, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sk_window_hll *w;
        sk_window_hll_options o = {.precision = shapes[s].precision,
                                   .horizon = shapes[s].horizon,
                                   .resolution = shapes[s].resolution};
        if (sk_window_hll_create(&w, &o) != SK_OK)
            die("sk_window_hll_create");
        for (unsigned i = 0; i < shapes[s].adds; i++) {
            uint64_t t = 5000 + i / 3 - (shapes[s].late && i % 4 == 0 ? i % shapes[s].late : 0);
            if (sk_window_hll_add(w, &i, sizeof i, t) < 0)
                die("sk_window_hll_add");
        }
        uint64_t cap = 0;
        size_t len = 0;
        uint8_t *buf = sk_window_hll_serialized_size(w, &cap) == SK_OK ? malloc(cap) : NULL;
        if (buf == NULL || sk_window_hll_serialize(w, buf, cap, &len) != SK_OK)
            die("sk_window_hll_serialize");
        const uint8_t control = 0;
        seed("window_hll", shapes[s].name, &control, 1, buf + 4, len - 4);
        free(buf);
        sk_window_hll_free(w);
    }
}
