/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_groups.h: what `sketch hll` does with group files, the sketches by
 * group that `sketch count --by -o` saves (hll_groups.c).
 */
#ifndef SKETCH_CLI_HLL_GROUPS_H
#define SKETCH_CLI_HLL_GROUPS_H

#include "sketch.h"

/* Whether the file at path starts as a group file does. */
int is_group_file(const char *path);

/* Loads the group files paths[0..count) and returns the union of each
 * group over them, at the smallest of their precisions; dies on a file
 * that cannot be read or is not a group file. */
sk_hll_map *load_groups_or_die(char **paths, int count);

void save_groups_or_die(const sk_hll_map *m, const char *path);

/* A group of a map as printers sort it: its key and its count. */
struct group_row {
    const uint8_t *key; /* valid while the map is unchanged */
    size_t key_len;
    uint64_t count;
};

/* Every group of m as a row, in the map's order (malloc'd; dies if out of
 * memory), and the bytewise order of two rows' keys (a prefix first). */
struct group_row *group_rows(const sk_hll_map *m);
int group_key_order(const struct group_row *a, const struct group_row *b);

/* `hll count` of group files: a line per group, "group<TAB>count", sorted
 * by group, or a JSON array; with group != NULL, that group's count. */
void print_group_counts(const sk_hll_map *m, const char *group, int json);

/* `hll export` of group files: a Redis SET command in RESP per group, the
 * key being prefix and group, for `redis-cli --pipe`; with group != NULL,
 * that group's sketch as a Redis string. Writes to out ("-" or NULL:
 * standard output, never a terminal). */
void export_groups(const sk_hll_map *m, const char *prefix, const char *group, const char *out);

/* `hll info` of a group file. */
void print_groups_info(const sk_hll_map *m, const char *path, int json);

#endif
