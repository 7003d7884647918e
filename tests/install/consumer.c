/* SPDX-License-Identifier: BSD-3-Clause */
/* consumer.c: counts its arguments' distinct values with an installed
 * libsketch and prints the count and the library's version. */
#include <stdio.h>
#include <string.h>

#include <sketch.h>

int main(int argc, char **argv)
{
    sk_hll *h;
    if (sk_hll_new(&h, SK_HLL_DEFAULT_PRECISION) != SK_OK)
        return 1;
    for (int i = 1; i < argc; i++)
        sk_hll_add(h, argv[i], strlen(argv[i]));
    printf("%llu %s\n", (unsigned long long)sk_hll_count(h), sk_version());
    sk_hll_free(h);
    return 0;
}
