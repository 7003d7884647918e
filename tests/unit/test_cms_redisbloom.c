/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cms_redisbloom.c: the count-min sketch gives RedisBloom's answers,
 * with cmocka. tests/fixtures/redisbloom-2.6.28/cms.txt holds what
 * RedisBloom 2.6.28 replied (its README says how it was made), one answer
 * per line:
 *
 *   dims ERROR DELTA WIDTH DEPTH   CMS.INITBYPROB ERROR DELTA made a sketch
 *                                  WIDTH wide and DEPTH deep (CMS.INFO)
 *   query ITEM COUNT               CMS.QUERY of ITEM after the stream below
 *                                  into CMS.INITBYDIM 2000 5
 *   total COUNT                    CMS.INFO's count after that stream
 *   incr ITEM VALUE REPLY          CMS.INCRBY ITEM VALUE, in order, on
 *                                  CMS.INITBYDIM 10 2, replied REPLY, or
 *                                  "overflow": the error RedisBloom gives
 *                                  when the estimate after the add is
 *                                  UINT32_MAX (the counters still stop there)
 *   small_query ITEM COUNT         CMS.QUERY on that sketch at that point
 *   small_total COUNT              its CMS.INFO count at that point
 *
 * The stream: for i in 0..199999, one CMS.INCRBY of the item "k" j, j =
 * (i^2 x 2654435761 mod 2^32) mod 3000, with increment 1.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sketch.h"

#ifndef SKETCH_FIXTURES_DIR
#error "SKETCH_FIXTURES_DIR names tests/fixtures"
#endif

#define FIXTURE SKETCH_FIXTURES_DIR "/redisbloom-2.6.28/cms.txt"
#define STREAM_ADDS 200000

static size_t stream_item(char *buf, uint64_t i)
{
    uint64_t j = ((i * i * UINT64_C(2654435761)) & UINT64_C(0xffffffff)) % 3000;
    return (size_t)snprintf(buf, 32, "k%" PRIu64, j);
}

static void test_same_answers_as_redisbloom(void **state)
{
    FILE *in = fopen(FIXTURE, "r");
    assert_non_null(in);
    sk_cms *stream, *small;
    assert_int_equal(sk_cms_new(&stream, 2000, 5), SK_OK);
    assert_int_equal(sk_cms_new(&small, 10, 2), SK_OK);
    char item[32];
    for (uint64_t i = 0; i < STREAM_ADDS; i++)
        assert_int_equal(sk_cms_add(stream, item, stream_item(item, i), 1, NULL), SK_OK);

    char line[256], word[64], reply[32];
    unsigned dims = 0, queries = 0, totals = 0, incrs = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        double error, delta;
        unsigned width, depth;
        uint64_t value, expected;
        if (sscanf(line, "dims %lf %lf %u %u", &error, &delta, &width, &depth) == 4) {
            sk_cms *c;
            sk_cms_info info;
            assert_int_equal(sk_cms_create(&c, &(sk_cms_options){.error = error, .delta = delta}),
                             SK_OK);
            sk_cms_get_info(c, &info);
            assert_int_equal(info.width, width);
            assert_int_equal(info.depth, depth);
            sk_cms_free(c);
            dims++;
        } else if (sscanf(line, "query %63s %" SCNu64, word, &expected) == 2) {
            assert_int_equal(sk_cms_count(stream, word, strlen(word)), expected);
            queries++;
        } else if (sscanf(line, "total %" SCNu64, &expected) == 1) {
            sk_cms_info info;
            sk_cms_get_info(stream, &info);
            assert_int_equal(info.total, expected);
            totals++;
        } else if (sscanf(line, "incr %63s %" SCNu64 " %31s", word, &value, reply) == 3) {
            uint32_t estimate;
            assert_int_equal(sk_cms_add(small, word, strlen(word), value, &estimate), SK_OK);
            if (strcmp(reply, "overflow") == 0)
                assert_int_equal(estimate, UINT32_MAX);
            else
                assert_int_equal(estimate, strtoull(reply, NULL, 10));
            incrs++;
        } else if (sscanf(line, "small_query %63s %" SCNu64, word, &expected) == 2) {
            assert_int_equal(sk_cms_count(small, word, strlen(word)), expected);
            queries++;
        } else if (sscanf(line, "small_total %" SCNu64, &expected) == 1) {
            sk_cms_info info;
            sk_cms_get_info(small, &info);
            assert_int_equal(info.total, expected);
            totals++;
        } else {
            fail_msg("unreadable fixture line: %s", line);
        }
    }
    fclose(in);
    printf("RedisBloom's answers matched: %u dimensions, %u queries, %u totals, %u adds\n", dims,
           queries, totals, incrs);
    assert_true(dims >= 4 && queries >= 3000 && totals == 2 && incrs >= 6);
    sk_cms_free(stream);
    sk_cms_free(small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_answers_as_redisbloom)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
