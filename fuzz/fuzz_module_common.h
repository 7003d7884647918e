/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_common.h: checks shared by the module's fuzz targets: a
 * value the module holds must save and load back to the same bytes, copy
 * to the same bytes, and rewrite through the AOF commands to the same bytes.
 */
#ifndef SKETCH_FUZZ_MODULE_COMMON_H
#define SKETCH_FUZZ_MODULE_COMMON_H

#include "fuzz_util.h"
#include "module_harness.h"

/* The RDB bytes of a value, malloc'ed. */
static inline uint8_t *module_save(int which, void *value, size_t *len)
{
    struct harness_io *io = harness_io_writer();
    harness_type(which)->rdb_save(HARNESS_IO(io), value);
    const uint8_t *bytes = harness_io_bytes(io, len);
    uint8_t *copy = malloc(*len ? *len : 1);
    FUZZ_CHECK(copy != NULL);
    if (*len > 0)
        memcpy(copy, bytes, *len);
    harness_io_free(io);
    return copy;
}

static inline void module_check_value(int which, void *value)
{
    const RedisModuleTypeMethods *t = harness_type(which);
    size_t usage = t->mem_usage(value);
    size_t len, len2;
    uint8_t *saved = module_save(which, value, &len);
    FUZZ_CHECK(len > 0);

    struct harness_io *in = harness_io_reader(saved, len);
    void *loaded = t->rdb_load(HARNESS_IO(in), harness_encver(which));
    FUZZ_CHECK(loaded != NULL && !harness_io_error(in));
    harness_io_free(in);
    uint8_t *again = module_save(which, loaded, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, saved, len) == 0);
    free(again);
    t->free(loaded);

    void *copy = t->copy(NULL, NULL, value);
    FUZZ_CHECK(copy != NULL);
    again = module_save(which, copy, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, saved, len) == 0);
    free(again);
    t->free(copy);

    if (usage <= (8u << 20)) {
        harness_aof_rewrite(which, "aof-copy", value);
        void *rewritten = harness_value(which, "aof-copy");
        FUZZ_CHECK(rewritten != NULL);
        again = module_save(which, rewritten, &len2);
        FUZZ_CHECK(len2 == len && memcmp(again, saved, len) == 0);
        free(again);
    }
    free(saved);
}

/* Loads a value of type `which` from stream with encver: a load must fail
 * when must_fail, and a value it gives must pass module_check_value. */
static inline void module_load_and_check(int which, const uint8_t *stream, size_t len,
                                         int encver, int must_fail)
{
    struct harness_io *io = harness_io_reader(stream, len);
    const RedisModuleTypeMethods *t = harness_type(which);
    void *value = t->rdb_load(HARNESS_IO(io), encver);
    if (must_fail)
        FUZZ_CHECK(value == NULL);
    if (value != NULL) {
        module_check_value(which, value);
        t->free(value);
    }
    harness_io_free(io);
    harness_flush();
}

#endif
