/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_seeds_windows.c: the seeds of the fuzz target of the sliding-window
 * HyperLogLog (make_seeds.c writes them with the rest), from real sketches
 * of the library, and of the module's WHLL.* commands and type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "make_seeds.h"
#include "module_harness.h"
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

/* The module's WHLL.* seeds: the values its commands make, saved through
 * the type's rdb_save (module_rdb_whll; control 1 asks for an encoding
 * version the module does not know), and command sequences of
 * fuzz_module_commands.c (command and token indices of its tables). */
void whll_module_seeds(void)
{
    harness_init();
    /* WHLL.RESERVE k1 1000000 RESOLUTION 1000 PRECISION 4, WHLL.ADDAT k1
     * 1700000000000 a b c, WHLL.ADD k1 a b, WHLL.ADD k2 a, WHLL.ADDAT k1
     * 1699999000000 c, WHLL.ADDAT k1 0 a, WHLL.COUNT k1 1000, WHLL.COUNT k1
     * 1000000 TIME 1700000000000, WHLL.INFO k1, WHLL.EXPORT k1, WHLL.MERGE
     * k3 k1, WHLL.MERGE k3 k2, WHLL.COUNT k2 86400000 */
    static const uint8_t commands[] = {
        81, 6, 0, 14, 79, 13, 80, 7,  83, 5, 0, 76, 43, 44, 45,  82, 3, 0, 43, 44,
        82, 2, 1, 43,  83, 3, 0, 86, 45,  83, 3, 0, 3, 43,  84, 2, 0, 13,
        84, 4, 0, 14, 81, 76,  86, 1, 0,  87, 1, 0,  85, 2, 2, 0,  85, 2, 2, 1,
        84, 2, 1, 83};
    seed("module_commands", "whll-commands", commands, sizeof commands, "", 0);
    static const struct {
        int argc;
        const char *argv[7];
    } made[] = {
        {7, {"WHLL.RESERVE", "p4", "1000000", "RESOLUTION", "1000", "PRECISION", "4"}},
        {6, {"WHLL.ADDAT", "p4", "1700000000000", "a", "b", "c"}},
        {5, {"WHLL.ADDAT", "p4", "1699999500000", "d", "e"}},
        {4, {"WHLL.ADD", "default", "a", "b"}},
        {3, {"WHLL.RESERVE", "empty", "10"}},
    };
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        size_t lens[7];
        for (int a = 0; a < made[i].argc; a++)
            lens[a] = strlen(made[i].argv[a]);
        if (harness_command(made[i].argc, made[i].argv, lens) != 0)
            die(made[i].argv[0]);
    }
    static const char *const keys[] = {"p4", "default", "empty"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        void *v = harness_value(HARNESS_WHLL, keys[i]);
        if (v == NULL)
            die(keys[i]);
        struct harness_io *io = harness_io_writer();
        harness_type(HARNESS_WHLL)->rdb_save(HARNESS_IO(io), v);
        size_t len;
        const uint8_t *bytes = harness_io_bytes(io, &len);
        for (uint8_t control = 0; control < 2; control++) {
            char name[32];
            snprintf(name, sizeof name, "%s-%u", keys[i], control);
            seed("module_rdb_whll", name, &control, 1, bytes, len);
        }
        /* WHLL.IMPORT k1 <its bytes>, then WHLL.COUNT k1 1000 TIME
         * 1700000000000 */
        uint64_t size;
        size_t blen;
        if (sk_window_hll_serialized_size(v, &size) != SK_OK || size > 0xffff)
            die("sk_window_hll_serialized_size");
        uint8_t *import = malloc(size + 12);
        if (import == NULL)
            die("malloc");
        memcpy(import, (const uint8_t[]){88, 2, 0, 0xff, (uint8_t)size, (uint8_t)(size >> 8)}, 6);
        if (sk_window_hll_serialize(v, import + 6, size, &blen) != SK_OK)
            die("sk_window_hll_serialize");
        memcpy(import + 6 + blen, (const uint8_t[]){84, 4, 0, 13, 81, 76}, 6);
        char name[32];
        snprintf(name, sizeof name, "whll-import-%s", keys[i]);
        seed("module_commands", name, import, 6 + blen + 6, "", 0);
        free(import);
        harness_io_free(io);
    }
    harness_flush();
}
