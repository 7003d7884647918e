/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_seeds.h: what the seed writer's files share (make_seeds.c,
 * make_seeds_families.c, make_seeds_redisbloom.c).
 */
#ifndef SKETCH_FUZZ_MAKE_SEEDS_H
#define SKETCH_FUZZ_MAKE_SEEDS_H

#include <stddef.h>

/* Prints what failed, with errno's text, and exits 1. */
void die(const char *what);
/* Writes the seed DIR/<target>/<name>: prefix, then data. */
void seed(const char *target, const char *name, const void *prefix, size_t plen,
          const void *data, size_t len);

void cms_seeds(void);
void topk_seeds(void);
void cuckoo_seeds(void);
void tdigest_seeds(void);
void window_hll_seeds(void);
void whll_module_seeds(void);
void redisbloom_seeds(void);

#endif
