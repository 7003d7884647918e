/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdb_test_util.h: what the unit tests of RedisBloom's RDB values
 * (test_rdb_*.c) share, defined in rdb_test_util.c; include after <cmocka.h>.
 *
 * A value is an in-memory array of typed fields that stands for Redis's
 * RDB calls: a writer appends to it, a reader reads it back (refusing a
 * field of the wrong kind, as Redis's loader does, and stopping at a
 * limit). A family (struct family) puts a type's load, save and free
 * behind one face, and the checks below run over any of them: a load
 * saved back unchanged, every field changed in turn, every truncation,
 * budgets, encvers, and every allocation failing (with an allocator that
 * counts what it lends, struct tally).
 */
#ifndef SKETCH_TEST_RDB_TEST_UTIL_H
#define SKETCH_TEST_RDB_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "sketch.h"

/* ---- fields, a writer that appends them ----------------------------------- */

enum kind { K_U, K_S, K_D, K_STR };

struct field {
    enum kind kind;
    uint64_t u;
    int64_t s;
    double d;
    uint8_t *str;
    size_t len;
};

struct fields {
    struct field *f;
    size_t n, cap;
};

struct field *push(struct fields *fs, enum kind kind);
void w_unsigned(void *ctx, uint64_t v);
void w_signed(void *ctx, int64_t v);
void w_double(void *ctx, double v);
void w_string(void *ctx, const void *data, size_t len);
sk_rdb_writer writer(struct fields *fs);
void fields_free(struct fields *fs);
struct fields fields_copy(const struct fields *src);
int fields_equal(const struct fields *a, const struct fields *b);

/* ---- an allocator that counts, and fails when told ------------------------ */

struct tally {
    long calls, fail_at; /* fail_at < 0: never */
    long live;
    size_t bytes;
};

/* Resets *t and gives the allocator that counts in it. */
sk_allocator tally_allocator(struct tally *t);

/* ---- a family behind one face ----------------------------------------------- */

struct family {
    int encver;
    int (*load)(void **out, const sk_rdb_reader *r, int encver, uint64_t max,
                const sk_allocator *a);
    int (*save)(const void *x, const sk_rdb_writer *w);
    void (*destroy)(void *x);
    void (*normalize)(struct fields *fs); /* what a save may rewrite, as it would */
};

/* name_load and name_destroy of a family, over sk_<name>_load_redisbloom
 * and sk_<name>_free. */
#define LOADER(name, type)                                                                   \
    static int name##_load(void **out, const sk_rdb_reader *r, int encver, uint64_t max,     \
                           const sk_allocator *a)                                            \
    {                                                                                        \
        type *x = NULL;                                                                      \
        int rc = sk_##name##_load_redisbloom(&x, r, encver, max, a);                         \
        *out = x;                                                                            \
        return rc;                                                                           \
    }                                                                                        \
    static void name##_destroy(void *x) { sk_##name##_free(x); }

/* ---- the checks --------------------------------------------------------------- */

struct fields save_of(const struct family *fam, const void *x);

/* Loads fs, reading at most limit fields. */
int load_of(const struct family *fam, const struct fields *fs, size_t limit, int encver,
            uint64_t max, const sk_allocator *a, void **out);

/* Loads fs and saves it back: the fields must come back unchanged. */
void *load_resave(const struct family *fam, const struct fields *fs, int encver);

/* The fields with field i changed, loaded: refused, or accepted and saved
 * back to the same fields. Returns the load's status; nothing may leak. */
int try_mutated(const struct family *fam, const struct fields *m);

/* Every field changed in every way its kind allows, and to another kind;
 * every prefix of the fields; every allocation of a load failing. */
void sweep(const struct family *fam, const struct fields *good);

/* Field i set to u (s, d) or its string's length moved by delta: refused. */
void refuse(const struct family *fam, const struct fields *good, size_t i,
            void (*change)(struct field *f, double arg), double arg, int want);
void set_u(struct field *f, double v);
void add_u(struct field *f, double v);
void set_s(struct field *f, double v);
void set_d(struct field *f, double v);
void add_d(struct field *f, double v);
void cut(struct field *f, double v);
void flip(struct field *f, double at);

/* Budget: exactly `memory` loads, one byte less does not. */
void budget(const struct family *fam, const struct fields *fs, uint64_t memory);

void encvers_refused(const struct family *fam, const struct fields *fs, const int *bad,
                     size_t n);

#endif
