/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_compare.h: `sketch hll compare` and `sketch hll retention`
 * (hll_compare.c), the overlap of sketches' sets.
 */
#ifndef SKETCH_CLI_HLL_COMPARE_H
#define SKETCH_CLI_HLL_COMPARE_H

extern const char hll_compare_usage[];
extern const char hll_retention_usage[];

/* Prints the comparison of the sketch files A and B (text or JSON). */
int hll_compare_files(const char *path_a, const char *path_b, int json);

/* Prints, for the cohort in paths[0], its overlap with each of
 * paths[1..count). */
int hll_retention_files(char **paths, int count, int json);

#endif
