/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fastfilter_bench.cc: sketch's default Bloom filter against FastFilter's
 * split block filter (SimdBlockFilterFixed of fastfilter_cpp), side by side
 * in one run, on the same 8-byte keys. FastFilter is built beside the
 * project: its headers come from the checkout that -DSKETCH_FASTFILTER_DIR
 * names, and none of its code is in this repository. It is the one C++ file
 * of the project, because FastFilter is header-only C++.
 *
 * Filters. sketch: sk_bloom_create with capacity n and rate 1%, every other
 * option its default (the split layout). FastFilter: SimdBlockFilterFixed
 * constructed from n, the size its own benchmark uses for 1% (n / 24
 * buckets of 32 bytes), with its hash (murmur64 finalizer of key + seed)
 * under a fixed seed, so that the prefetch rows can find a key's bucket.
 *
 * Rows, each timed over one pass of Q queries or of n adds:
 *   contains, 1 call        sk_bloom_contains on one key at a time
 *   contains, batch B       sk_bloom_contains_batch, B keys a call
 *   contains, hash batch B  sk_bloom_contains_hash_batch on hashes computed
 *                           (untimed) with sk_bloom_hash_bytes
 *   Find, 1 call            FastFilter's Find behind a call that is not
 *                           inlined, as its own benchmark calls it
 *   Find, prefetch D        Find inlined in a loop that prefetches the bucket
 *                           D keys ahead
 *   add, 1 call / add, batch B / the same on a filter made for concurrent
 *                           writers (locked ORs instead of plain stores)
 *   Add, 1 call / Add, prefetch D   FastFilter's, as for Find
 * Present queries ask for Q added keys in a random order, absent ones for Q
 * keys never added (bit 63 set; added keys have it clear). Adds go into a
 * fresh filter each round, made and its pages touched before the timing.
 *
 * Rounds are interleaved (round 1 of every row, then round 2, ...), so that
 * a noisy moment of a shared machine falls on every row; the table gives
 * the median and the minimum ns per operation, and each sketch row over the
 * FastFilter row of the same operation and key set. A second table gives
 * bits per item and the false-positive rate measured on the absent keys.
 *
 * Usage: fastfilter_bench [-n ITEMS] [-q QUERIES] [-b BATCH] [-d DISTANCE] [-r ROUNDS]
 * (defaults 100000000, 10000000, 1024, 16, 3)
 */
#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

/* simd-block-fixed-fpp.h names these unqualified, relying on its includer. */
using std::vector;
#include "simd-block-fixed-fpp.h"

#include "bench_util.h"
#include "sketch.h"

namespace {

/* FastFilter's hash with a seed of our choosing instead of a random one. */
struct FixedSeedMix {
    uint64_t seed = UINT64_C(0x2545f4914f6cdd1d);
    uint64_t operator()(uint64_t key) const
    {
        return hashing::SimpleMixSplit::murmur64(key + seed);
    }
};

using FastFilter = SimdBlockFilterFixed<FixedSeedMix>;

/* FastFilter keeps its bucket array private; the prefetch rows read its
 * address through this copy of the class's layout, which the static_assert
 * and layout_holds hold to the real one. */
struct FastFilterLayout {
    int bucket_count;
    uint32_t (*directory)[8];
    FixedSeedMix hasher;
};
static_assert(sizeof(FastFilterLayout) == sizeof(FastFilter), "FastFilter's layout changed");

const void *bucket_of(const FastFilter &ff, uint64_t key)
{
    const FastFilterLayout *l = reinterpret_cast<const FastFilterLayout *>(&ff);
    uint64_t hash = l->hasher(key);
    return l->directory[reduce((uint32_t)rotl64(hash, 32), (uint32_t)l->bucket_count)];
}

/* The layout copy reads the real filter: after a key's Add, each of the
 * eight lanes of the bucket bucket_of names has a bit set. */
bool layout_holds()
{
    FastFilter ff(24 * 4096);
    for (uint64_t key = 1; key <= 1000; key++) {
        ff.Add(key);
        const uint32_t *lanes = static_cast<const uint32_t *>(bucket_of(ff, key));
        for (int i = 0; i < 8; i++)
            if (lanes[i] == 0)
                return false;
    }
    return true;
}

__attribute__((noinline)) bool ff_find(const FastFilter &ff, uint64_t key)
{
    return ff.Find(key);
}

__attribute__((noinline)) void ff_add(FastFilter &ff, uint64_t key)
{
    ff.Add(key);
}

struct Config {
    uint64_t n = 100000000, q = 10000000;
    unsigned batch = 1024, distance = 16, rounds = 3;
};

struct Keys {
    vector<uint64_t> added, present, absent; /* present: Q added keys, shuffled */
    vector<sk_bloom_hash> present_hashes;
};

Keys make_keys(const Config &c)
{
    Keys k;
    uint64_t seed = 1;
    k.added.resize(c.n);
    for (auto &key : k.added)
        key = splitmix64(&seed) & ~(UINT64_C(1) << 63);
    k.present.resize(c.q);
    for (auto &key : k.present)
        key = k.added[splitmix64(&seed) % c.n];
    k.absent.resize(c.q);
    for (auto &key : k.absent)
        key = splitmix64(&seed) | UINT64_C(1) << 63;
    for (uint64_t key : k.present)
        k.present_hashes.push_back(sk_bloom_hash_bytes(&key, sizeof key));
    return k;
}

sk_bloom *new_sketch(const Config &c, bool many_writers)
{
    sk_bloom_options o = {};
    o.capacity = c.n;
    o.fp_rate = 0.01;
    o.concurrent_writers = many_writers;
    sk_bloom *f = nullptr;
    if (sk_bloom_create(&f, &o) != SK_OK) {
        fprintf(stderr, "fastfilter_bench: sk_bloom_create failed\n");
        exit(1);
    }
    /* Touches every page, as FastFilter's constructor does with memset, so
     * that no add row times the kernel's first-touch page faults. */
    sk_bloom_clear(f);
    return f;
}

/* Timed kernels: each runs one pass and returns how many keys it found or
 * added, which goes to the sink. */
uint64_t sk_contains_1(const sk_bloom *f, const vector<uint64_t> &keys)
{
    uint64_t found = 0;
    for (uint64_t key : keys)
        found += (uint64_t)sk_bloom_contains(f, &key, sizeof key);
    return found;
}

uint64_t sk_contains_b(const sk_bloom *f, const vector<uint64_t> &keys, unsigned b)
{
    vector<const void *> items(b);
    vector<size_t> lens(b, sizeof(uint64_t));
    vector<uint8_t> out(b);
    uint64_t found = 0;
    for (size_t i = 0; i < keys.size(); i += b) {
        size_t m = std::min<size_t>(b, keys.size() - i);
        for (size_t j = 0; j < m; j++)
            items[j] = &keys[i + j];
        sk_bloom_contains_batch(f, items.data(), lens.data(), m, out.data());
        for (size_t j = 0; j < m; j++)
            found += out[j];
    }
    return found;
}

uint64_t sk_contains_hb(const sk_bloom *f, const vector<sk_bloom_hash> &hashes, unsigned b)
{
    vector<uint8_t> out(b);
    uint64_t found = 0;
    for (size_t i = 0; i < hashes.size(); i += b) {
        size_t m = std::min<size_t>(b, hashes.size() - i);
        sk_bloom_contains_hash_batch(f, &hashes[i], m, out.data());
        for (size_t j = 0; j < m; j++)
            found += out[j];
    }
    return found;
}

uint64_t sk_add_1(sk_bloom *f, const vector<uint64_t> &keys)
{
    uint64_t added = 0;
    for (uint64_t key : keys)
        added += (uint64_t)sk_bloom_add(f, &key, sizeof key);
    return added;
}

uint64_t sk_add_b(sk_bloom *f, const vector<uint64_t> &keys, unsigned b)
{
    vector<const void *> items(b);
    vector<size_t> lens(b, sizeof(uint64_t));
    for (size_t i = 0; i < keys.size(); i += b) {
        size_t m = std::min<size_t>(b, keys.size() - i);
        for (size_t j = 0; j < m; j++)
            items[j] = &keys[i + j];
        sk_bloom_add_batch(f, items.data(), lens.data(), m, nullptr);
    }
    return keys.size();
}

uint64_t ff_find_1(const FastFilter &ff, const vector<uint64_t> &keys)
{
    uint64_t found = 0;
    for (uint64_t key : keys)
        found += ff_find(ff, key);
    return found;
}

uint64_t ff_find_p(const FastFilter &ff, const vector<uint64_t> &keys, unsigned d)
{
    uint64_t found = 0;
    size_t n = keys.size();
    for (size_t i = 0; i < n; i++) {
        if (i + d < n)
            __builtin_prefetch(bucket_of(ff, keys[i + d]), 0, 3);
        found += ff.Find(keys[i]);
    }
    return found;
}

uint64_t ff_add_1(FastFilter &ff, const vector<uint64_t> &keys)
{
    for (uint64_t key : keys)
        ff_add(ff, key);
    return keys.size();
}

uint64_t ff_add_p(FastFilter &ff, const vector<uint64_t> &keys, unsigned d)
{
    size_t n = keys.size();
    for (size_t i = 0; i < n; i++) {
        if (i + d < n)
            __builtin_prefetch(bucket_of(ff, keys[i + d]), 1, 3);
        ff.Add(keys[i]);
    }
    return n;
}

enum Op { PRESENT, ABSENT, ADD };
const char *const op_names[] = {"present", "absent", "add"};

struct Row {
    std::string name;
    Op op;
    int peer;                      /* the FastFilter row to compare with, or -1 */
    std::function<uint64_t()> run; /* one timed pass */
    bool many_writers;             /* sketch add rows: concurrent_writers */
    vector<double> ns;
};

} // namespace

static void usage(void)
{
    fprintf(stderr, "usage: fastfilter_bench [-n ITEMS] [-q QUERIES] [-b BATCH] "
                    "[-d DISTANCE] [-r ROUNDS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    Config c;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || argv[i][0] != '-' || argv[i][1] == '\0' || argv[i][2] != '\0')
            usage();
        uint64_t v = bench_parse_u64(argv[i + 1], usage);
        if (v == 0)
            usage();
        switch (argv[i][1]) {
        case 'n': c.n = std::min<uint64_t>(v, INT_MAX); break; /* FastFilter's size is an int */
        case 'q': c.q = v; break;
        case 'b': c.batch = (unsigned)std::min<uint64_t>(v, 1u << 20); break;
        case 'd': c.distance = (unsigned)std::min<uint64_t>(v, 1024); break;
        case 'r': c.rounds = (unsigned)std::min<uint64_t>(v, 99); break;
        default: usage();
        }
    }
    if (!__builtin_cpu_supports("avx2")) {
        fprintf(stderr, "fastfilter_bench: FastFilter's filter needs AVX2\n");
        return 2;
    }
    if (!layout_holds()) {
        fprintf(stderr, "fastfilter_bench: FastFilter's layout is not the one this copies\n");
        return 1;
    }
    Keys k = make_keys(c);

    /* The filters the queries ask, built once. */
    sk_bloom *sq = new_sketch(c, false);
    sk_add_b(sq, k.added, 1024);
    FastFilter fq((int)c.n);
    fq.AddAll(k.added, 0, k.added.size());
    for (uint64_t key : k.present)
        if (!fq.Find(key) || sk_bloom_contains(sq, &key, sizeof key) != 1) {
            fprintf(stderr, "fastfilter_bench: a false negative\n");
            return 1;
        }

    /* The filter an add row fills, made fresh (untimed) before each pass. */
    sk_bloom *sa = nullptr;
    FastFilter *fa = nullptr;
    const std::string b = "batch " + std::to_string(c.batch),
                      d = "prefetch " + std::to_string(c.distance);
    const vector<uint64_t> &pk = k.present, &ak = k.absent, &added = k.added;
    const unsigned bs = c.batch, dist = c.distance;
    vector<Row> rows = {
        {"Find, 1 call", PRESENT, -1, [&] { return ff_find_1(fq, pk); }, false, {}},
        {"Find, " + d, PRESENT, -1, [&] { return ff_find_p(fq, pk, dist); }, false, {}},
        {"Find, 1 call", ABSENT, -1, [&] { return ff_find_1(fq, ak); }, false, {}},
        {"Find, " + d, ABSENT, -1, [&] { return ff_find_p(fq, ak, dist); }, false, {}},
        {"Add, 1 call", ADD, -1, [&] { return ff_add_1(*fa, added); }, false, {}},
        {"Add, " + d, ADD, -1, [&] { return ff_add_p(*fa, added, dist); }, false, {}},
        {"contains, 1 call", PRESENT, 0, [&] { return sk_contains_1(sq, pk); }, false, {}},
        {"contains, " + b, PRESENT, 1, [&] { return sk_contains_b(sq, pk, bs); }, false, {}},
        {"contains, hash " + b, PRESENT, 1,
         [&] { return sk_contains_hb(sq, k.present_hashes, bs); }, false, {}},
        {"contains, 1 call", ABSENT, 2, [&] { return sk_contains_1(sq, ak); }, false, {}},
        {"contains, " + b, ABSENT, 3, [&] { return sk_contains_b(sq, ak, bs); }, false, {}},
        {"add, 1 call", ADD, 4, [&] { return sk_add_1(sa, added); }, false, {}},
        {"add, " + b, ADD, 5, [&] { return sk_add_b(sa, added, bs); }, false, {}},
        {"add, 1 call, locked", ADD, 4, [&] { return sk_add_1(sa, added); }, true, {}},
        {"add, " + b + ", locked", ADD, 5, [&] { return sk_add_b(sa, added, bs); }, true,
         {}},
    };
    for (unsigned r = 0; r < c.rounds; r++) {
        for (Row &row : rows) {
            if (row.op == ADD && row.peer < 0)
                fa = new FastFilter((int)c.n);
            else if (row.op == ADD)
                sa = new_sketch(c, row.many_writers);
            double t0 = now_ns();
            sink += row.run();
            double t = now_ns() - t0;
            row.ns.push_back(t / (double)(row.op == ADD ? c.n : c.q));
            delete fa;
            fa = nullptr;
            sk_bloom_free(sa);
            sa = nullptr;
        }
    }

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    printf("sketch (default filter) against FastFilter SimdBlockFilterFixed, one run\n");
    printf("machine: %s, %ld CPUs; %s %s (%s)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN),
           BENCH_COMPILER, BENCH_FLAGS, BENCH_CONFIG_NAME);
    printf("n = %llu items of 8 bytes, %llu present and %llu absent queries, %u rounds "
           "(interleaved)\n\n",
           (unsigned long long)c.n, (unsigned long long)c.q, (unsigned long long)c.q, c.rounds);
    printf("%-28s %-8s %10s %10s  %s\n", "row", "keys", "median ns", "min ns",
           "sketch / FastFilter (median)");
    vector<double> med(rows.size());
    for (size_t i = 0; i < rows.size(); i++) {
        Row &row = rows[i];
        vector<double> v = row.ns;
        double mn = *std::min_element(v.begin(), v.end());
        med[i] = median_of(v.data(), (int)v.size());
        printf("%-28s %-8s %10.2f %10.2f", row.name.c_str(), op_names[row.op], med[i], mn);
        if (row.peer >= 0)
            printf("  %.2fx %s", med[i] / med[(size_t)row.peer],
                   rows[(size_t)row.peer].name.c_str());
        printf("\n");
    }

    sk_bloom_info info;
    sk_bloom_get_info(sq, &info);
    uint64_t sk_fp = sk_contains_1(sq, k.absent), ff_fp = 0;
    for (uint64_t key : k.absent)
        ff_fp += fq.Find(key);
    printf("\n%-28s %12s %14s\n", "filter", "bits/item", "measured FPR");
    static const char *const layouts[] = {"sketch", "sketch (classic)", "sketch (blocked)",
                                          "sketch (split)"};
    printf("%-28s %12.2f %13.4f%%\n", layouts[info.layout < 4 ? info.layout : 0],
           (double)info.bits / (double)c.n, 100.0 * (double)sk_fp / (double)c.q);
    printf("%-28s %12.2f %13.4f%%\n", "FastFilter", 8.0 * (double)fq.SizeInBytes() / (double)c.n,
           100.0 * (double)ff_fp / (double)c.q);
    sk_bloom_free(sq);
    return 0;
}
