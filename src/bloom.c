/*
 * bloom.c: Bloom filters, classic and cache-blocked, fixed and scalable.
 *
 * Hashing
 * -------
 * An item is hashed once with XXH3-128; its two 64-bit halves h1 and h2 are
 * independent, so every position comes from 64 bits that do not overlap:
 * 32-bit hashes, or positions taken from the same bits, make the false-
 * positive rate climb far above its target past tens of millions of items.
 * A 64-bit value x is reduced to [0, n) by the multiply-high (x * n) >> 64,
 * which needs no division and no modulo bias.
 *
 * Classic layout: m bits; the k bits are reduce(x_i, m) for the 64-bit
 * linear congruential sequence x_0 = h1, x_(i+1) = x_i A + (h2 | 1), whose
 * top bits behave as independent draws. Plain double hashing, h1 + i h2,
 * was the first choice and is not good enough: its positions form an
 * arithmetic progression mod m, so two items with the same two residues
 * collide on all k bits, a floor of about n/m^2 under the rate that a
 * small filter at a low rate (100 items at 1e-6) misses fifty times over.
 * Its rate after n items is (1 - e^(-kn/m))^k.
 *
 * Blocked layout: m/512 blocks of one 64-byte cache line; the block is
 * reduce(h1, m/512) and the k bit positions in it are the top 9 bits of k
 * successive values of a 64-bit linear congruential sequence seeded with h2.
 * Blocks receive unequal numbers of items, which costs false positives:
 * with n/B items per block on average the rate is exactly
 *
 *     sum_j Poisson(j; n/B) sum_x P(x bits set after kj uniform draws) (x/512)^k
 *
 * (the occupancy law of kj draws into 512 bits, computed exactly; the usual
 * (1 - (1 - 1/512)^(kj))^k misses both that a query's positions may repeat
 * and that the bits set in one block are not independent, each worth 3% of
 * the rate at 1%),
 * and sk_bloom_size_for searches the smallest m (and its best k) for which
 * this is at most the requested rate, about 5% more bits than classic at 1%.
 *
 * Both layouts are sized by that search on their own exact formula, so a
 * filter meets its rate at capacity with integer k, not just approximately.
 *
 * Memory and threads
 * ------------------
 * Bit arrays are arrays of 64-bit words whose bytes are in little-endian
 * order on every machine, the order they have on disk, so a file maps into
 * memory as it is. A word is read with a relaxed atomic load and bits are
 * set with a relaxed atomic OR only when some are missing (a plain load is
 * cheaper than a locked OR, and most ORs of a full filter find their bits
 * already set). Bits are never cleared while the filter is shared, so no
 * stronger ordering is needed: whatever a thread sees set stays set.
 *
 * A locked OR costs far more than a plain store, even on a line already in
 * L1 (it drains the store buffer and holds back later loads): 10-20 ns of a
 * blocked add here. Filters with one writer therefore set bits with relaxed
 * loads and stores (plain moves), and readers still see each word either
 * before or after. A scalable filter, which needs exclusive access anyway,
 * stores only for an item that adds a bit, as the locked path does: such
 * filters live long (in the Redis module, forked for every save), and a
 * page written for nothing costs a copy there. A filter whose caller
 * promised one writer (sk_bloom_set_single_writer), typically to load many
 * new items, writes back every word an add touches, which needs no branch
 * and is 1.5 times faster again.
 *
 * A scalable filter is a chain of layers; an item is looked up in all of
 * them and added to the newest, and a new layer, `expansion` times larger at
 * half the false-positive rate, starts when the newest holds its capacity.
 * The first is built at half the requested rate, so the rates of the whole
 * chain sum to less than it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Inlined: the hash of a short item costs less than a call into the
 * shared library would (and XXH32_state_t can live on the stack). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "sketch/bloom.h"

#define BLOCK_BITS 512
#define BLOCK_WORDS (BLOCK_BITS / 64)
#define LCG_MUL UINT64_C(0x5851f42d4c957f2d)
#define LCG_ADD UINT64_C(0x14057b7ef767814f)
/* Filters this large get their bits from mmap, zeroed lazily by the kernel. */
#define MAP_THRESHOLD (1u << 20)
#define PAGE_SIZE_4K 4096u
#define HUGE_PAGE_SIZE ((size_t)2 << 20)

__extension__ typedef unsigned __int128 u128;

enum storage { STORAGE_HEAP, STORAGE_ANON_MAP, STORAGE_FILE };

struct layer {
    _Atomic uint64_t *words;
    uint64_t bits;
    uint64_t nwords;
    uint64_t capacity;
    _Atomic uint64_t count;
    double fp_rate;
    unsigned hashes;
    enum storage storage;
    uint64_t checksum; /* of the array, as a file or dump declared it */
};

struct sk_bloom {
    sk_bloom_layout layout;
    double fp_rate;
    unsigned expansion;
    unsigned nlayers;
    struct layer layers[SK_BLOOM_MAX_LAYERS];
    void *map; /* the file this filter was opened from */
    size_t map_len;
    int single_writer; /* sk_bloom_set_single_writer */
};

/* How adds set bits (see "Memory and threads" above). */
enum writers {
    WRITERS_MANY,         /* locked ORs of the missing bits */
    WRITERS_ONE,          /* plain stores, only for an item that adds a bit */
    WRITERS_ONE_PROMISED  /* plain stores of every word touched */
};

struct item_hash {
    uint64_t h1, h2;
};

static inline struct item_hash hash_item(const void *data, size_t len)
{
    XXH128_hash_t h = XXH3_128bits(data, len);
    return (struct item_hash){h.low64, h.high64};
}

static inline uint64_t reduce(uint64_t x, uint64_t n)
{
    return (uint64_t)(((u128)x * n) >> 64);
}

/* A mask of bit `bit` of a word stored little-endian in memory. */
static inline uint64_t word_bit(unsigned bit)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(UINT64_C(1) << bit);
#else
    return UINT64_C(1) << bit;
#endif
}

/* ---- false-positive rates and sizing ------------------------------------ */

/* The chance that k positions drawn uniformly with replacement from `bins`
 * all land on set bits, after `draws` such positions were set: the occupancy
 * law of the draws, computed one draw at a time, against (x/bins)^k. */
static double occupancy_fp_rate(unsigned bins, uint64_t draws, unsigned k)
{
    double *occupied = calloc((size_t)bins + 1, sizeof *occupied);
    if (occupied == NULL)
        return 1;
    occupied[0] = 1;
    unsigned top = 0;
    for (uint64_t d = 0; d < draws; d++) {
        if (top < bins)
            top++;
        for (unsigned x = top; x >= 1; x--)
            occupied[x] = (occupied[x] * x + occupied[x - 1] * (bins - x + 1)) / bins;
        occupied[0] = 0;
    }
    double rate = 0;
    for (unsigned x = 1; x <= top; x++)
        rate += occupied[x] * pow((double)x / bins, k);
    free(occupied);
    return rate;
}

/* Small classic filters get the exact occupancy law (the textbook formula
 * is off by O(k/m): a 10-bit filter for one item at 1% has 6%), large ones
 * the textbook (1 - e^(-kn/m))^k, exact in the limit. */
#define EXACT_CLASSIC_WORK 100000

static double classic_fp_rate(uint64_t bits, unsigned k, double n)
{
    double draws = round((double)k * n);
    if ((double)bits * draws <= EXACT_CLASSIC_WORK)
        return occupancy_fp_rate((unsigned)bits, (uint64_t)draws, k);
    return pow(-expm1(-(double)k * n / (double)bits), k);
}

/* The textbook approximation of the blocked rate, (fill of a block)^k
 * averaged over the Poisson law of items per block: within a few percent of
 * the exact rate and a hundred times cheaper, it guides the sizing search. */
static double blocked_fp_rate_approx(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    if (lambda <= 0)
        return 0;
    double log_unset = (double)k * log1p(-1.0 / BLOCK_BITS);
    double log_lambda = log(lambda), log_pmf = -lambda, sum = 0;
    uint64_t last = (uint64_t)(lambda + 12 * sqrt(lambda) + 30);
    for (uint64_t j = 1; j <= last; j++) {
        log_pmf += log_lambda - log((double)j);
        sum += exp(log_pmf + (double)k * log(-expm1(log_unset * (double)j)));
    }
    return sum;
}

/* The blocked rate in closed form, for k up to CLOSED_FORM_MAX_K. A query's
 * k positions, drawn with replacement, are u distinct bits with chance
 * distinct[u]; u given bits are all among the positions set by d draws with
 * chance sum_i (-1)^i C(u,i) (1 - i/512)^d (inclusion-exclusion), and with
 * d = kj over j ~ Poisson(lambda) items, E[(1 - i/512)^(kj)] is
 * exp(-lambda (1 - (1 - i/512)^k)). The alternating sum loses up to about
 * 2^k x 1e-16 to cancellation, so tiny rates and larger k take the occupancy
 * computation below, which has only positive terms but costs a thousand
 * times more. */
#define CLOSED_FORM_MAX_K 16

/* The closed form, or -1 where k or cancellation puts it out of reach. */
static double blocked_fp_rate_closed(unsigned k, double lambda)
{
    if (k > CLOSED_FORM_MAX_K)
        return -1;
    double distinct[CLOSED_FORM_MAX_K + 1] = {1};
    for (unsigned draw = 1; draw <= k; draw++) {
        for (unsigned u = draw; u >= 1; u--)
            distinct[u] = (distinct[u] * u + distinct[u - 1] * (BLOCK_BITS - u + 1)) /
                          BLOCK_BITS;
        distinct[0] = 0;
    }
    double hit_none[CLOSED_FORM_MAX_K + 1]; /* E[chance that i given bits stay clear] */
    for (unsigned i = 0; i <= k; i++)
        hit_none[i] = exp(-lambda * -expm1((double)k * log1p(-(double)i / BLOCK_BITS)));
    double rate = 0;
    for (unsigned u = 1; u <= k; u++) {
        double all_hit = 0, binom = 1;
        for (unsigned i = 0; i <= u; i++) {
            all_hit += (i % 2 ? -binom : binom) * hit_none[i];
            binom = binom * (u - i) / (i + 1);
        }
        rate += distinct[u] * all_hit;
    }
    return rate > ldexp(1e-10, (int)k) ? rate : -1; /* cancellation: under 1e-5 of it */
}

static double blocked_fp_rate(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    if (lambda <= 0)
        return 0;
    if (lambda > 10000) /* the Poisson law is then as narrow as one block */
        return pow(-expm1((double)k * log1p(-1.0 / BLOCK_BITS) * lambda), k);
    double closed = blocked_fp_rate_closed(k, lambda);
    if (closed >= 0)
        return closed;
    /* A block holding j items has received kj positions drawn uniformly with
     * replacement; occupied[x] is the chance that x distinct bits are set,
     * updated one draw at a time. A query's k positions, drawn the same way,
     * all find set bits with chance (x/512)^k. */
    double occupied[BLOCK_BITS + 1] = {1}, all_set[BLOCK_BITS + 1];
    for (unsigned x = 0; x <= BLOCK_BITS; x++)
        all_set[x] = pow((double)x / BLOCK_BITS, k);
    unsigned top = 0; /* the largest x with occupied[x] != 0 */
    double log_lambda = log(lambda), log_pmf = -lambda, sum = 0;
    uint64_t last = (uint64_t)(lambda + 12 * sqrt(lambda) + 30);
    for (uint64_t j = 0; j <= last; j++) {
        if (j > 0) {
            for (unsigned draw = 0; draw < k; draw++) {
                if (top < BLOCK_BITS)
                    top++;
                for (unsigned x = top; x >= 1; x--)
                    occupied[x] = (occupied[x] * x +
                                   occupied[x - 1] * (BLOCK_BITS - x + 1)) / BLOCK_BITS;
                occupied[0] = 0;
            }
            double given_j = 0;
            for (unsigned x = 1; x <= top; x++)
                given_j += occupied[x] * all_set[x];
            sum += exp(log_pmf) * given_j;
        }
        log_pmf += log_lambda - log((double)(j + 1));
    }
    return sum;
}

/* The sizing search's guide for blocked filters: the exact closed form where
 * it is reliable and cheap, else the Poisson approximation. */
static double blocked_fp_rate_coarse(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    double closed = lambda > 0 && lambda <= 10000 ? blocked_fp_rate_closed(k, lambda) : -1;
    return closed >= 0 ? closed : blocked_fp_rate_approx(bits, k, n);
}

static double layout_fp_rate(sk_bloom_layout layout, uint64_t bits, unsigned k, double n)
{
    return layout == SK_BLOOM_BLOCKED ? blocked_fp_rate(bits, k, n)
                                      : classic_fp_rate(bits, k, n);
}

/* Filters sized for a rate have at least one block of bits: 64 bytes are
 * nothing, and they keep tiny filters far from the regime where an item's
 * own positions collide. */
#define MIN_SIZED_BITS BLOCK_BITS

static uint64_t round_bits(sk_bloom_layout layout, uint64_t bits)
{
    if (bits == 0)
        bits = 1;
    if (layout == SK_BLOOM_BLOCKED)
        bits = (bits + BLOCK_BITS - 1) / BLOCK_BITS * BLOCK_BITS;
    return bits;
}

typedef double (*rate_fn)(uint64_t bits, unsigned k, double n);

/* The lowest rate of m bits at n items over k in [from, to], and its k. */
static double best_rate(rate_fn rate, uint64_t bits, double n, unsigned from, unsigned to,
                        unsigned *k_out)
{
    double best = 2;
    for (unsigned k = from; k <= to; k++) {
        double r = rate(bits, k, n);
        if (r < best) {
            best = r;
            *k_out = k;
        }
    }
    return best;
}

/* The smallest m in (lo, hi], to within `tolerance` bits, whose best rate
 * is at most fp_rate, given that hi meets it; its k in *k. */
static uint64_t search_bits(sk_bloom_layout layout, rate_fn rate, double n, double fp_rate,
                            uint64_t lo, uint64_t hi, unsigned from, unsigned to,
                            uint64_t tolerance, unsigned *k)
{
    while (hi - lo > tolerance) {
        uint64_t mid = round_bits(layout, lo + (hi - lo) / 2);
        if (mid >= hi || mid <= lo)
            break;
        if (best_rate(rate, mid, n, from, to, k) > fp_rate)
            lo = mid;
        else
            hi = mid;
    }
    best_rate(rate, hi, n, from, to, k);
    return hi;
}

static unsigned clamp_hashes(double k)
{
    return k < 1 ? 1 : k > SK_BLOOM_MAX_HASHES ? SK_BLOOM_MAX_HASHES : (unsigned)k;
}

/* Sizes a layer of `layout`. When the coarse search already finds more than
 * stop_above bits, that coarse size is returned unrefined: the caller has a
 * cheaper layout in hand. */
static int size_for_layout(uint64_t capacity, double fp_rate, sk_bloom_layout layout,
                           double stop_above, uint64_t *bits, unsigned *hashes)
{
    /* Requested rates lie in [SK_BLOOM_MIN_FP_RATE, SK_BLOOM_MAX_FP_RATE];
     * the later layers of a scalable filter go below: they get more bits. */
    if (capacity == 0 || !(fp_rate > 0) || !(fp_rate <= SK_BLOOM_MAX_FP_RATE) ||
        (layout != SK_BLOOM_BLOCKED && layout != SK_BLOOM_CLASSIC))
        return SK_EINVAL;
    double n = (double)capacity;
    double textbook = ceil(-n * log(fp_rate) / (M_LN2 * M_LN2));
    if (textbook > (double)SK_BLOOM_MAX_BITS)
        return SK_EINVAL;
    /* The rate falls as m grows. A coarse search with a cheap formula, k
     * free around its textbook optimum, then (blocked) an exact one near
     * it, with k within one of the coarse choice. */
    rate_fn coarse = layout == SK_BLOOM_BLOCKED ? blocked_fp_rate_coarse : classic_fp_rate;
    unsigned k0 = clamp_hashes(-log2(fp_rate)), k = k0;
    unsigned from = clamp_hashes(k0 / 2.0), to = clamp_hashes(k0 + 6.0);
    if (textbook < MIN_SIZED_BITS)
        textbook = MIN_SIZED_BITS;
    uint64_t lo = round_bits(layout, (uint64_t)textbook / 2);
    uint64_t hi = round_bits(layout, (uint64_t)textbook);
    while (best_rate(coarse, hi, n, from, to, &k) > fp_rate) {
        lo = hi;
        hi = round_bits(layout, hi + hi / 4 + BLOCK_BITS);
        if (hi > SK_BLOOM_MAX_BITS)
            return SK_EINVAL;
    }
    uint64_t m = search_bits(layout, coarse, n, fp_rate, lo, hi, from, to,
                             layout == SK_BLOOM_BLOCKED ? BLOCK_BITS : 1, &k);
    if (m < MIN_SIZED_BITS) {
        m = MIN_SIZED_BITS;
        best_rate(coarse, m, n, from, to, &k);
    }
    if (layout == SK_BLOOM_BLOCKED && (double)m <= stop_above) {
        from = clamp_hashes(k - 1.0);
        to = clamp_hashes(k + 1.0);
        lo = round_bits(layout, m - m / 16);
        hi = round_bits(layout, m + m / 16);
        while (best_rate(blocked_fp_rate, hi, n, from, to, &k) > fp_rate) {
            lo = hi;
            hi = round_bits(layout, hi + hi / 8);
            if (hi > SK_BLOOM_MAX_BITS)
                return SK_EINVAL;
        }
        /* A ten-thousandth of m is as close as the exact rate is worth. */
        uint64_t tolerance = hi / 10000 > BLOCK_BITS ? hi / 10000 : BLOCK_BITS;
        m = search_bits(layout, blocked_fp_rate, n, fp_rate, lo, hi, from, to, tolerance, &k);
    }
    *bits = m;
    *hashes = k;
    return SK_OK;
}

/* SK_BLOOM_AUTO: blocked while it needs at most 10% more bits than classic
 * (rates down to about 5e-4), classic below, where a block of 512 bits gets
 * too crowded to reach the rate economically. */
#define AUTO_MAX_EXTRA 1.10

static int resolve_layout(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                          uint64_t *bits, unsigned *hashes)
{
    if (*layout != SK_BLOOM_AUTO)
        return size_for_layout(capacity, fp_rate, *layout, INFINITY, bits, hashes);
    uint64_t classic_bits;
    unsigned classic_hashes;
    int rc = size_for_layout(capacity, fp_rate, SK_BLOOM_CLASSIC, INFINITY, &classic_bits,
                             &classic_hashes);
    if (rc != SK_OK)
        return rc;
    /* The coarse blocked size is within a fraction of a percent of the
     * exact one, so 5% over the limit settles the choice without refining. */
    rc = size_for_layout(capacity, fp_rate, SK_BLOOM_BLOCKED,
                         1.05 * AUTO_MAX_EXTRA * (double)classic_bits, bits, hashes);
    if (rc == SK_OK && (double)*bits <= AUTO_MAX_EXTRA * (double)classic_bits) {
        *layout = SK_BLOOM_BLOCKED;
        return SK_OK;
    }
    *layout = SK_BLOOM_CLASSIC;
    *bits = classic_bits;
    *hashes = classic_hashes;
    return SK_OK;
}

static int valid_rate(double fp_rate)
{
    return fp_rate >= SK_BLOOM_MIN_FP_RATE && fp_rate <= SK_BLOOM_MAX_FP_RATE;
}

int sk_bloom_size_for(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                      uint64_t *bits, unsigned *hashes)
{
    if (layout == NULL || bits == NULL || hashes == NULL)
        return SK_EINVAL;
    return resolve_layout(capacity, fp_rate, layout, bits, hashes);
}

/* ---- layers ----------------------------------------------------------- */

static uint64_t words_for(sk_bloom_layout layout, uint64_t bits)
{
    return layout == SK_BLOOM_BLOCKED ? bits / 64 : (bits + 63) / 64;
}

/* Maps zeroed memory for a large layer, aligned to a huge page and marked
 * for transparent huge pages: every query touches a random page, and with
 * 4 KB pages a 100 MB filter misses the TLB on nearly every access, which
 * costs as much as the cache miss itself. */
static void *map_huge_aligned(size_t bytes)
{
    size_t len = (bytes + PAGE_SIZE_4K - 1) & ~(size_t)(PAGE_SIZE_4K - 1);
    size_t padded = len + HUGE_PAGE_SIZE;
    if (padded < len)
        return NULL;
    char *raw = mmap(NULL, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + HUGE_PAGE_SIZE - 1) & ~(uintptr_t)(HUGE_PAGE_SIZE - 1);
    char *aligned = (char *)start;
    if (aligned > raw)
        munmap(raw, (size_t)(aligned - raw));
    size_t tail = (size_t)(raw + padded - (aligned + len));
    if (tail > 0)
        munmap(aligned + len, tail);
#ifdef MADV_HUGEPAGE
    madvise(aligned, len, MADV_HUGEPAGE); /* advisory: failure leaves 4 KB pages */
#endif
    return aligned;
}

static int layer_alloc(struct layer *l, sk_bloom_layout layout, uint64_t bits,
                       unsigned hashes, uint64_t capacity, double fp_rate)
{
    memset(l, 0, sizeof *l);
    l->bits = bits;
    l->nwords = words_for(layout, bits);
    l->hashes = hashes;
    l->capacity = capacity;
    l->fp_rate = fp_rate;
    size_t bytes = (size_t)l->nwords * 8;
    if (bytes >= MAP_THRESHOLD) {
        void *p = map_huge_aligned(bytes);
        if (p == NULL)
            return SK_ENOMEM;
        l->words = p;
        l->storage = STORAGE_ANON_MAP;
    } else {
        void *p = NULL;
        if (posix_memalign(&p, 64, bytes) != 0)
            return SK_ENOMEM;
        memset(p, 0, bytes);
        l->words = p;
        l->storage = STORAGE_HEAP;
    }
    return SK_OK;
}

static void layer_release(struct layer *l)
{
    if (l->storage == STORAGE_HEAP)
        free((void *)l->words);
    else if (l->storage == STORAGE_ANON_MAP)
        munmap((void *)l->words, (size_t)l->nwords * 8);
    l->words = NULL;
}

static inline _Atomic uint64_t *blocked_line(const struct layer *l, uint64_t h1)
{
    return l->words + reduce(h1, l->nwords / BLOCK_WORDS) * BLOCK_WORDS;
}

/* Sets the bits of mask in *word; 1 if some were missing. The locked OR's
 * result is left unused so that it compiles to a single `lock or` rather
 * than a compare-and-swap loop; two threads adding the same new item at the
 * same moment may then both report it new. With one writer a relaxed store
 * does: nobody else changes the word. */
static inline int set_bits(_Atomic uint64_t *word, uint64_t mask, enum writers writers)
{
    uint64_t have = atomic_load_explicit(word, memory_order_relaxed);
    if ((have & mask) == mask)
        return 0;
    if (writers != WRITERS_MANY)
        atomic_store_explicit(word, have | mask, memory_order_relaxed);
    else
        atomic_fetch_or_explicit(word, mask, memory_order_relaxed);
    return 1;
}

static inline int has_bits(const _Atomic uint64_t *word, uint64_t mask)
{
    return (atomic_load_explicit(word, memory_order_relaxed) & mask) == mask;
}

/* Bit by bit, stopping at the first that is clear: after the first load the
 * line is in L1, and most absent items stop within two. */
static int blocked_line_has(const _Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        unsigned pos = (unsigned)(x >> 55);
        if (!has_bits(&line[pos >> 6], word_bit(pos & 63)))
            return 0;
    }
    return 1;
}

/* The missing bits of an item in its line, bit i for its i-th position,
 * found without a branch per bit (whose outcome is random while the filter
 * fills); its positions are left in pos. */
static inline uint64_t blocked_missing(const _Atomic uint64_t *line, uint64_t h2, unsigned k,
                                       unsigned pos[SK_BLOOM_MAX_HASHES])
{
    uint64_t missing = 0, x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        pos[i] = (unsigned)(x >> 55);
        uint64_t have = atomic_load_explicit(&line[pos[i] >> 6], memory_order_relaxed);
        missing |= (uint64_t)((have & word_bit(pos[i] & 63)) == 0) << i;
    }
    return missing;
}

/* Sets an item's bits in its line; 1 if some were missing. Any number of
 * writers: each missing bit takes a locked OR (see set_bits). */
static int blocked_line_set_shared(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    unsigned pos[SK_BLOOM_MAX_HASHES];
    uint64_t missing = blocked_missing(line, h2, k, pos);
    for (uint64_t m = missing; m != 0; m &= m - 1) {
        unsigned p = pos[__builtin_ctzll(m)];
        atomic_fetch_or_explicit(&line[p >> 6], word_bit(p & 63), memory_order_relaxed);
    }
    return missing != 0;
}

/* One writer, storing only for an item that adds a bit: then every word is
 * written back with its bit set, one branch per item rather than per bit. */
static int blocked_line_set_if_new(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    unsigned pos[SK_BLOOM_MAX_HASHES];
    if (blocked_missing(line, h2, k, pos) == 0)
        return 0;
    for (unsigned i = 0; i < k; i++) {
        _Atomic uint64_t *word = &line[pos[i] >> 6];
        uint64_t have = atomic_load_explicit(word, memory_order_relaxed);
        atomic_store_explicit(word, have | word_bit(pos[i] & 63), memory_order_relaxed);
    }
    return 1;
}

/* One writer that promised so: every word is written back with its bit
 * set, present or not, in one pass with no branch and no locked
 * instruction, 1.5 to 2 times as fast as the locked ORs. */
static int blocked_line_set_always(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t missing = 0, x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        unsigned pos = (unsigned)(x >> 55);
        _Atomic uint64_t *word = &line[pos >> 6];
        uint64_t have = atomic_load_explicit(word, memory_order_relaxed);
        uint64_t bit = word_bit(pos & 63);
        missing |= bit & ~have;
        atomic_store_explicit(word, have | bit, memory_order_relaxed);
    }
    return missing != 0;
}

static inline int blocked_line_set(_Atomic uint64_t *line, uint64_t h2, unsigned k,
                                   enum writers writers)
{
    switch (writers) {
    case WRITERS_ONE_PROMISED: return blocked_line_set_always(line, h2, k);
    case WRITERS_ONE: return blocked_line_set_if_new(line, h2, k);
    default: return blocked_line_set_shared(line, h2, k);
    }
}

/* Sets an item's bits in a layer; 1 if any was missing. The caller counts. */
static int layer_set(struct layer *l, sk_bloom_layout layout, struct item_hash h,
                     enum writers writers)
{
    if (layout == SK_BLOOM_BLOCKED)
        return blocked_line_set(blocked_line(l, h.h1), h.h2, l->hashes, writers);
    int changed = 0;
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < l->hashes; i++, x = x * LCG_MUL + step) {
        uint64_t bit = reduce(x, l->bits);
        changed |= set_bits(&l->words[bit >> 6], word_bit(bit & 63), writers);
    }
    return changed;
}

static void layer_count(struct layer *l, uint64_t added, enum writers writers)
{
    if (added == 0)
        return;
    if (writers != WRITERS_MANY)
        atomic_store_explicit(&l->count,
                              atomic_load_explicit(&l->count, memory_order_relaxed) + added,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&l->count, added, memory_order_relaxed);
}

static int layer_add(struct layer *l, sk_bloom_layout layout, struct item_hash h,
                     enum writers writers)
{
    int changed = layer_set(l, layout, h, writers);
    layer_count(l, (uint64_t)changed, writers);
    return changed;
}

static int layer_contains(const struct layer *l, sk_bloom_layout layout, struct item_hash h)
{
    if (layout == SK_BLOOM_BLOCKED)
        return blocked_line_has(blocked_line(l, h.h1), h.h2, l->hashes);
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < l->hashes; i++, x = x * LCG_MUL + step) {
        uint64_t bit = reduce(x, l->bits);
        if (!has_bits(&l->words[bit >> 6], word_bit(bit & 63)))
            return 0;
    }
    return 1;
}

/* Starts loading the memory an item touches, without waiting for it. */
static inline void layer_prefetch(const struct layer *l, sk_bloom_layout layout,
                                  struct item_hash h, int for_write)
{
    if (layout == SK_BLOOM_BLOCKED) {
        if (for_write)
            __builtin_prefetch((const void *)blocked_line(l, h.h1), 1);
        else
            __builtin_prefetch((const void *)blocked_line(l, h.h1), 0);
        return;
    }
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < l->hashes; i++, x = x * LCG_MUL + step) {
        const void *p = (const void *)&l->words[reduce(x, l->bits) >> 6];
        if (for_write)
            __builtin_prefetch(p, 1);
        else
            __builtin_prefetch(p, 0);
    }
}

/* Advises the kernel how a layer's pages will be read, if they are mapped
 * from a file. */
static void advise(const struct layer *l, int advice)
{
    if (l->storage != STORAGE_FILE)
        return;
    uintptr_t start = (uintptr_t)l->words & ~(uintptr_t)4095;
    uintptr_t end = (uintptr_t)(l->words + l->nwords);
    madvise((void *)start, end - start, advice);
}

static uint64_t layer_bits_set(const struct layer *l)
{
    advise(l, MADV_SEQUENTIAL);
    uint64_t set = 0;
    for (uint64_t i = 0; i < l->nwords; i++)
        set += (uint64_t)__builtin_popcountll(
            atomic_load_explicit(&l->words[i], memory_order_relaxed));
    advise(l, MADV_RANDOM);
    return set;
}

/* Swamidass and Baldi's estimate n = -(m/k) ln(1 - X/m) from X bits set. */
static uint64_t layer_estimate_items(const struct layer *l)
{
    double x = (double)layer_bits_set(l), m = (double)l->bits;
    if (x >= m)
        return l->capacity > l->count ? l->capacity : l->count;
    return (uint64_t)llround(-m / l->hashes * log1p(-x / m));
}

/* ---- filters ------------------------------------------------------------ */

static sk_bloom *filter_alloc(sk_bloom_layout layout, double fp_rate, unsigned expansion)
{
    sk_bloom *f = calloc(1, sizeof *f);
    if (f != NULL) {
        f->layout = layout;
        f->fp_rate = fp_rate;
        f->expansion = expansion;
    }
    return f;
}

int sk_bloom_new_explicit(sk_bloom **out, uint64_t bits, unsigned hashes,
                          sk_bloom_layout layout)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (bits == 0 || bits > SK_BLOOM_MAX_BITS || hashes == 0 ||
        hashes > SK_BLOOM_MAX_HASHES ||
        (layout != SK_BLOOM_BLOCKED && layout != SK_BLOOM_CLASSIC))
        return SK_EINVAL;
    bits = round_bits(layout, bits);
    sk_bloom *f = filter_alloc(layout, 0, 0);
    if (f == NULL)
        return SK_ENOMEM;
    /* The capacity of explicit sizes: the items at which k is optimal. */
    uint64_t capacity = (uint64_t)((double)bits * M_LN2 / hashes);
    int rc = layer_alloc(&f->layers[0], layout, bits, hashes, capacity ? capacity : 1, 0);
    if (rc != SK_OK) {
        free(f);
        return rc;
    }
    f->nlayers = 1;
    *out = f;
    return SK_OK;
}

static int add_layer(sk_bloom *f, uint64_t capacity, double fp_rate)
{
    if (f->nlayers == SK_BLOOM_MAX_LAYERS)
        return SK_EFULL;
    uint64_t bits;
    unsigned hashes;
    int rc = resolve_layout(capacity, fp_rate, &f->layout, &bits, &hashes);
    if (rc != SK_OK)
        return f->nlayers > 0 ? SK_EFULL : rc;
    rc = layer_alloc(&f->layers[f->nlayers], f->layout, bits, hashes, capacity, fp_rate);
    if (rc != SK_OK)
        return rc;
    f->nlayers++;
    return SK_OK;
}

int sk_bloom_new(sk_bloom **out, uint64_t capacity, double fp_rate, sk_bloom_layout layout)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (!valid_rate(fp_rate))
        return SK_EINVAL;
    sk_bloom *f = filter_alloc(layout, fp_rate, 0);
    if (f == NULL)
        return SK_ENOMEM;
    int rc = add_layer(f, capacity, fp_rate);
    if (rc != SK_OK) {
        free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

int sk_bloom_new_scalable(sk_bloom **out, uint64_t capacity, double fp_rate,
                          unsigned expansion, sk_bloom_layout layout)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (expansion == 0 || expansion > 1024 || !valid_rate(fp_rate))
        return SK_EINVAL;
    sk_bloom *f = filter_alloc(layout, fp_rate, expansion);
    if (f == NULL)
        return SK_ENOMEM;
    int rc = add_layer(f, capacity, fp_rate / 2);
    if (rc != SK_OK) {
        free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

void sk_bloom_free(sk_bloom *f)
{
    if (f == NULL)
        return;
    for (unsigned i = 0; i < f->nlayers; i++)
        layer_release(&f->layers[i]);
    if (f->map != NULL)
        munmap(f->map, f->map_len);
    free(f);
}

static int grow(sk_bloom *f)
{
    const struct layer *last = &f->layers[f->nlayers - 1];
    if (last->capacity > UINT64_MAX / f->expansion)
        return SK_EFULL;
    return add_layer(f, last->capacity * f->expansion, last->fp_rate / 2);
}

static int filter_contains(const sk_bloom *f, struct item_hash h)
{
    for (unsigned i = f->nlayers; i-- > 0;)
        if (layer_contains(&f->layers[i], f->layout, h))
            return 1;
    return 0;
}

void sk_bloom_set_single_writer(sk_bloom *f, int on)
{
    f->single_writer = on != 0;
}

/* The writers of a filter of fixed size. */
static enum writers fixed_writers(const sk_bloom *f)
{
    return f->single_writer ? WRITERS_ONE_PROMISED : WRITERS_MANY;
}

static int filter_add(sk_bloom *f, struct item_hash h)
{
    if (f->expansion == 0)
        return layer_add(&f->layers[0], f->layout, h, fixed_writers(f));
    /* The older layers are looked up; the newest needs no lookup before the
     * add, which reports whether the item was there, unless it is full and
     * the item would otherwise start a new layer. */
    for (unsigned i = 0; i + 1 < f->nlayers; i++)
        if (layer_contains(&f->layers[i], f->layout, h))
            return 0;
    struct layer *last = &f->layers[f->nlayers - 1];
    if (atomic_load_explicit(&last->count, memory_order_relaxed) >= last->capacity) {
        if (layer_contains(last, f->layout, h))
            return 0;
        int rc = grow(f);
        if (rc != SK_OK)
            return rc;
        last = &f->layers[f->nlayers - 1];
    }
    /* One writer: a scalable filter needs exclusive access anyway. */
    return layer_add(last, f->layout, h, WRITERS_ONE);
}

int sk_bloom_add(sk_bloom *f, const void *data, size_t len)
{
    return filter_add(f, hash_item(data, len));
}

int sk_bloom_contains(const sk_bloom *f, const void *data, size_t len)
{
    return filter_contains(f, hash_item(data, len));
}

/* Items in flight at once: enough to cover a memory latency with the loads
 * of the others (64 outstanding lines measured twice as fast as 16 here),
 * few enough that their lines stay in the L1 cache. */
#define BATCH 64

/* The batch calls run as a ring: item i is hashed and its memory prefetched
 * while item i - BATCH, whose lines have had BATCH items' time to arrive, is
 * looked up or set. Unlike hashing a batch and then working through it, the
 * ring never waits with nothing in flight. A filter of one blocked layer,
 * the common large case, keeps only its cache-line pointer and second hash
 * per slot: at 100M items that halves the time per query here. */

static void blocked_add_ring(struct layer *l, const void *const *items, const size_t *lens,
                             size_t n, uint8_t *added, enum writers writers)
{
    _Atomic uint64_t *lines[BATCH];
    uint64_t h2[BATCH];
    uint64_t new_items = 0;
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH) {
            int changed = blocked_line_set(lines[slot], h2[slot], l->hashes, writers);
            new_items += (uint64_t)changed;
            if (added != NULL)
                added[i - BATCH] = (uint8_t)changed;
        }
        if (i < n) {
            struct item_hash h = hash_item(items[i], lens[i]);
            lines[slot] = blocked_line(l, h.h1);
            h2[slot] = h.h2;
            __builtin_prefetch((const void *)lines[slot], 1);
        }
    }
    layer_count(l, new_items, writers); /* once, not per item */
}

static void blocked_contains_ring(const struct layer *l, const void *const *items,
                                  const size_t *lens, size_t n, uint8_t *found)
{
    const _Atomic uint64_t *lines[BATCH];
    uint64_t h2[BATCH];
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH)
            found[i - BATCH] = (uint8_t)blocked_line_has(lines[slot], h2[slot], l->hashes);
        if (i < n) {
            struct item_hash h = hash_item(items[i], lens[i]);
            lines[slot] = blocked_line(l, h.h1);
            h2[slot] = h.h2;
            __builtin_prefetch((const void *)lines[slot], 0);
        }
    }
}

int sk_bloom_add_batch(sk_bloom *f, const void *const *items, const size_t *lens,
                       size_t n, uint8_t *added)
{
    if (f->expansion == 0 && f->layout == SK_BLOOM_BLOCKED) {
        blocked_add_ring(&f->layers[0], items, lens, n, added, fixed_writers(f));
        return SK_OK;
    }
    struct item_hash h[BATCH];
    uint64_t new_items = 0;
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH) {
            int rc;
            if (f->expansion == 0) {
                rc = layer_set(&f->layers[0], f->layout, h[slot], fixed_writers(f));
                new_items += (uint64_t)rc;
            } else {
                rc = filter_add(f, h[slot]);
                if (rc < 0)
                    return rc;
            }
            if (added != NULL)
                added[i - BATCH] = (uint8_t)rc;
        }
        if (i < n) {
            h[slot] = hash_item(items[i], lens[i]);
            /* A scalable filter's adds may grow it, so only its lookups are
             * worth prefetching, and those are spread over every layer. */
            if (f->expansion == 0)
                layer_prefetch(&f->layers[0], f->layout, h[slot], 1);
        }
    }
    if (f->expansion == 0)
        layer_count(&f->layers[0], new_items, fixed_writers(f));
    return SK_OK;
}

void sk_bloom_contains_batch(const sk_bloom *f, const void *const *items,
                             const size_t *lens, size_t n, uint8_t *found)
{
    if (f->nlayers == 1 && f->layout == SK_BLOOM_BLOCKED) {
        blocked_contains_ring(&f->layers[0], items, lens, n, found);
        return;
    }
    struct item_hash h[BATCH];
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH)
            found[i - BATCH] = (uint8_t)filter_contains(f, h[slot]);
        if (i < n) {
            h[slot] = hash_item(items[i], lens[i]);
            for (unsigned l = 0; l < f->nlayers; l++)
                layer_prefetch(&f->layers[l], f->layout, h[slot], 0);
        }
    }
}

static int same_shape(const sk_bloom *a, const sk_bloom *b)
{
    if (a->layout != b->layout || a->nlayers != b->nlayers || a->expansion != b->expansion)
        return 0;
    for (unsigned i = 0; i < a->nlayers; i++)
        if (a->layers[i].bits != b->layers[i].bits ||
            a->layers[i].hashes != b->layers[i].hashes)
            return 0;
    return 1;
}

static int combine(sk_bloom *dst, const sk_bloom *src, int intersect)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    /* The layers of two scalable filters hold the same item wherever its
     * insertion order put it, so only their union is layer by layer. */
    if (!same_shape(dst, src) || (intersect && dst->expansion != 0))
        return SK_EINCOMPAT;
    for (unsigned l = 0; l < dst->nlayers; l++) {
        struct layer *d = &dst->layers[l];
        const struct layer *s = &src->layers[l];
        for (uint64_t i = 0; i < d->nwords; i++) {
            uint64_t a = atomic_load_explicit(&d->words[i], memory_order_relaxed);
            uint64_t b = atomic_load_explicit(&s->words[i], memory_order_relaxed);
            atomic_store_explicit(&d->words[i], intersect ? a & b : a | b,
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&d->count, layer_estimate_items(d), memory_order_relaxed);
    }
    return SK_OK;
}

int sk_bloom_union(sk_bloom *dst, const sk_bloom *src)
{
    return combine(dst, src, 0);
}

int sk_bloom_intersect(sk_bloom *dst, const sk_bloom *src)
{
    return combine(dst, src, 1);
}

int sk_bloom_clear(sk_bloom *f)
{
    if (f == NULL)
        return SK_EINVAL;
    while (f->nlayers > 1)
        layer_release(&f->layers[--f->nlayers]);
    struct layer *l = &f->layers[0];
    memset((void *)l->words, 0, (size_t)l->nwords * 8);
    atomic_store_explicit(&l->count, 0, memory_order_relaxed);
    return SK_OK;
}

void sk_bloom_get_info(const sk_bloom *f, sk_bloom_info *info)
{
    memset(info, 0, sizeof *info);
    info->layout = f->layout;
    info->hashes = f->layers[0].hashes;
    info->fp_rate = f->fp_rate;
    info->layers = f->nlayers;
    info->expansion = f->expansion;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        info->bits += l->bits;
        info->capacity += l->capacity;
        info->count += atomic_load_explicit(&l->count, memory_order_relaxed);
        info->memory += (size_t)l->nwords * 8;
    }
}

double sk_bloom_expected_fp_rate(const sk_bloom *f, uint64_t items)
{
    /* Items fill the layers in order, each up to its capacity; the newest
     * takes the rest. An item is a false positive if any layer says so. */
    double remaining = (double)items, pass = 1;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        int last = i + 1 == f->nlayers;
        double n = last || remaining < (double)l->capacity ? remaining : (double)l->capacity;
        pass *= 1 - layout_fp_rate(f->layout, l->bits, l->hashes, n);
        remaining -= n;
    }
    return 1 - pass;
}

uint64_t sk_bloom_next_layer_bytes(const sk_bloom *f)
{
    if (f->expansion == 0 || f->nlayers == SK_BLOOM_MAX_LAYERS)
        return 0;
    const struct layer *last = &f->layers[f->nlayers - 1];
    if (last->capacity > UINT64_MAX / f->expansion)
        return 0;
    sk_bloom_layout layout = f->layout;
    uint64_t bits;
    unsigned hashes;
    if (resolve_layout(last->capacity * f->expansion, last->fp_rate / 2, &layout, &bits,
                       &hashes) != SK_OK)
        return 0;
    return words_for(layout, bits) * 8;
}

uint64_t sk_bloom_estimate_items(const sk_bloom *f)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < f->nlayers; i++)
        total += layer_estimate_items(&f->layers[i]);
    return total;
}

/* ---- files -------------------------------------------------------------
 *
 * Format version 1, all integers little-endian (docs/bloom-format.md):
 *
 *   header, 40 bytes
 *     0  4  magic "SKBF"
 *     4  1  version 1
 *     5  1  layout: 0 blocked, 1 classic
 *     6  1  hash: 1 = XXH3-128, seed 0
 *     7  1  arrays: 0 on page boundaries (files), 1 packed (dumps)
 *     8  4  number of layers L, 1..64
 *    12  4  expansion; 0 for a filter of fixed size (then L = 1)
 *    16  8  requested false-positive rate, an IEEE-754 double; 0 if explicit
 *    24  8  0
 *    32  4  XXH32 (seed 0) of bytes 0..31 followed by the layer table
 *    36  4  0
 *   layer table, 48 bytes per layer
 *     0  8  bits m
 *     8  4  hashes k
 *    12  4  0
 *    16  8  capacity
 *    24  8  items added
 *    32  8  offset of the bit array in the file, a multiple of 4096
 *    40  8  XXH3-64 (seed 0) of the bit array
 *   bit arrays, each at its offset, in layer order: ceil(m/64) 64-bit words
 *   (m/64 for blocked filters, m a multiple of 512), each on a page boundary
 *   in files and right after the previous part in dumps; the file or dump
 *   ends with the last one.
 *
 * The arrays sit on page boundaries so that the file maps into memory with
 * every word aligned; the header and table are checked on every open, the
 * arrays' checksums only when asked, since that reads the whole file.
 */

#define FILE_MAGIC "SKBF"
#define FILE_VERSION 1
#define FILE_HASH_XXH3_128 1
#define HEADER_SIZE 40
#define LAYER_ENTRY_SIZE 48
#define ARRAY_ALIGN 4096

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return SK_EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return SK_OK;
}

static int write_zeros(int fd, uint64_t count)
{
    static const uint8_t zeros[4096];
    while (count > 0) {
        size_t chunk = count < sizeof zeros ? (size_t)count : sizeof zeros;
        int rc = write_all(fd, zeros, chunk);
        if (rc != SK_OK)
            return rc;
        count -= chunk;
    }
    return SK_OK;
}

static size_t header_size(unsigned nlayers)
{
    return HEADER_SIZE + (size_t)LAYER_ENTRY_SIZE * nlayers;
}

/* Where the bit array of layer i starts: on a page boundary in files, right
 * after the previous one in dumps (every offset is then a multiple of 8). */
static uint64_t array_offset(const sk_bloom *f, unsigned i, int packed)
{
    uint64_t align = packed ? 8 : ARRAY_ALIGN;
    uint64_t offset = align_up(header_size(f->nlayers), align);
    for (unsigned j = 0; j < i; j++)
        offset = align_up(offset + f->layers[j].nwords * 8, align);
    return offset;
}

static uint32_t header_checksum(const uint8_t *head, unsigned nlayers)
{
    XXH32_state_t state;
    XXH32_reset(&state, 0);
    XXH32_update(&state, head, 32);
    XXH32_update(&state, head + HEADER_SIZE, header_size(nlayers) - HEADER_SIZE);
    return XXH32_digest(&state);
}

/* Writes the header and layer table, with the arrays' checksums. */
static void encode_header(const sk_bloom *f, uint8_t *head, int packed)
{
    memset(head, 0, header_size(f->nlayers));
    memcpy(head, FILE_MAGIC, 4);
    head[4] = FILE_VERSION;
    head[5] = (uint8_t)f->layout;
    head[6] = FILE_HASH_XXH3_128;
    head[7] = (uint8_t)(packed != 0);
    sk_store_le32(head + 8, f->nlayers);
    sk_store_le32(head + 12, f->expansion);
    sk_store_le64(head + 16, double_bits(f->fp_rate));
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        uint8_t *e = head + HEADER_SIZE + (size_t)LAYER_ENTRY_SIZE * i;
        sk_store_le64(e, l->bits);
        sk_store_le32(e + 8, l->hashes);
        sk_store_le64(e + 16, l->capacity);
        sk_store_le64(e + 24, atomic_load_explicit(&l->count, memory_order_relaxed));
        sk_store_le64(e + 32, array_offset(f, i, packed));
        sk_store_le64(e + 40, XXH3_64bits((const void *)l->words, (size_t)l->nwords * 8));
    }
    sk_store_le32(head + 32, header_checksum(head, f->nlayers));
}

static int write_filter(const sk_bloom *f, int fd)
{
    size_t table_end = header_size(f->nlayers);
    uint8_t *head = malloc(table_end);
    if (head == NULL)
        return SK_ENOMEM;
    encode_header(f, head, 0);
    int rc = write_all(fd, head, table_end);
    uint64_t written = table_end;
    free(head);
    for (unsigned i = 0; rc == SK_OK && i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        uint64_t offset = array_offset(f, i, 0);
        rc = write_zeros(fd, offset - written);
        if (rc == SK_OK)
            rc = write_all(fd, (const void *)l->words, (size_t)l->nwords * 8);
        written = offset + l->nwords * 8;
    }
    return rc;
}

int sk_bloom_save(const sk_bloom *f, const char *path)
{
    if (f == NULL || path == NULL)
        return SK_EINVAL;
    size_t len = strlen(path);
    char *tmp = malloc(len + sizeof ".tmp.XXXXXX");
    char *dir = malloc(len + 2);
    if (tmp == NULL || dir == NULL) {
        free(tmp);
        free(dir);
        return SK_ENOMEM;
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    /* The directory, to make the rename durable. */
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';

    mode_t mode;
    struct stat st;
    if (stat(path, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }

    int rc = SK_EIO, saved_errno = 0;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) {
        rc = write_filter(f, fd);
        if (rc == SK_OK && (fchmod(fd, mode) != 0 || fsync(fd) != 0))
            rc = SK_EIO;
        saved_errno = errno;
        if (close(fd) != 0 && rc == SK_OK) {
            rc = SK_EIO;
            saved_errno = errno;
        }
        if (rc == SK_OK && rename(tmp, path) != 0) {
            rc = SK_EIO;
            saved_errno = errno;
        }
        if (rc != SK_OK)
            unlink(tmp);
    } else {
        saved_errno = errno;
    }
    if (rc == SK_OK) {
        int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd >= 0) {
            fsync(dir_fd);
            close(dir_fd);
        }
    }
    free(tmp);
    free(dir);
    errno = saved_errno;
    return rc;
}

/* Validates a header and layer table of `available` bytes, for a file or
 * dump whose whole size is `total` (UINT64_MAX: not known yet), and sets up
 * the layers' shapes; *table_end receives the header's size. The layers'
 * arrays are not attached. */
static int decode_header(sk_bloom *f, const uint8_t *p, size_t available, uint64_t total,
                         size_t *table_end)
{
    if (available < 4 || memcmp(p, FILE_MAGIC, 4) != 0)
        return available < 4 && memcmp(p, FILE_MAGIC, available) == 0 ? SK_ETRUNCATED
                                                                        : SK_EFORMAT;
    if (available < HEADER_SIZE)
        return SK_ETRUNCATED;
    if (p[4] != FILE_VERSION)
        return SK_EVERSION;
    uint32_t nlayers = sk_load_le32(p + 8), expansion = sk_load_le32(p + 12);
    double fp_rate = bits_double(sk_load_le64(p + 16));
    if (p[5] > SK_BLOOM_CLASSIC || p[6] != FILE_HASH_XXH3_128 || p[7] > 1 ||
        nlayers == 0 || nlayers > SK_BLOOM_MAX_LAYERS ||
        (expansion == 0 && nlayers != 1) || expansion > 1024 ||
        sk_load_le64(p + 24) != 0 || sk_load_le32(p + 36) != 0 ||
        !(fp_rate == 0 || (fp_rate >= SK_BLOOM_MIN_FP_RATE && fp_rate <= SK_BLOOM_MAX_FP_RATE)))
        return SK_ECORRUPT;
    if (available < header_size(nlayers))
        return SK_ETRUNCATED;
    if (header_checksum(p, nlayers) != sk_load_le32(p + 32))
        return SK_ECHECKSUM;

    f->layout = (sk_bloom_layout)p[5];
    f->expansion = expansion;
    f->fp_rate = fp_rate;
    /* The layers' shapes come first: array offsets depend on all of them. */
    memset(f->layers, 0, sizeof f->layers);
    f->nlayers = nlayers;
    int packed = p[7];
    for (unsigned i = 0; i < nlayers; i++) {
        const uint8_t *e = p + HEADER_SIZE + (size_t)LAYER_ENTRY_SIZE * i;
        uint64_t bits = sk_load_le64(e);
        uint32_t hashes = sk_load_le32(e + 8);
        if (bits == 0 || bits > SK_BLOOM_MAX_BITS || hashes == 0 ||
            hashes > SK_BLOOM_MAX_HASHES ||
            (f->layout == SK_BLOOM_BLOCKED && bits % BLOCK_BITS != 0) ||
            sk_load_le32(e + 12) != 0)
            return SK_ECORRUPT;
        struct layer *l = &f->layers[i];
        l->bits = bits;
        l->nwords = words_for(f->layout, bits);
        l->hashes = hashes;
        l->capacity = sk_load_le64(e + 16);
        l->count = sk_load_le64(e + 24);
        l->checksum = sk_load_le64(e + 40);
        l->fp_rate = fp_rate == 0 || expansion == 0 ? fp_rate : ldexp(fp_rate, -1 - (int)i);
    }
    for (unsigned i = 0; i < nlayers; i++)
        if (sk_load_le64(p + HEADER_SIZE + (size_t)LAYER_ENTRY_SIZE * i + 32) !=
            array_offset(f, i, packed))
            return SK_ECORRUPT;
    uint64_t end = array_offset(f, nlayers - 1, packed) + f->layers[nlayers - 1].nwords * 8;
    if (total != UINT64_MAX && end != total)
        return SK_ETRUNCATED;
    *table_end = header_size(nlayers);
    return SK_OK;
}

/* Recomputes each layer's checksum against the one its header declared. */
static int verify_arrays(const sk_bloom *f)
{
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        advise(l, MADV_SEQUENTIAL);
        uint64_t sum = XXH3_64bits((const void *)l->words, (size_t)l->nwords * 8);
        advise(l, MADV_RANDOM);
        if (sum != l->checksum)
            return SK_ECHECKSUM;
    }
    return SK_OK;
}

static int parse_file(sk_bloom *f, uint8_t *p, uint64_t size, unsigned flags)
{
    size_t table_end;
    int rc = decode_header(f, p, size < SIZE_MAX ? (size_t)size : SIZE_MAX, size, &table_end);
    if (rc != SK_OK)
        return rc;
    int packed = p[7];
    for (unsigned i = 0; i < f->nlayers; i++) {
        f->layers[i].words = (_Atomic uint64_t *)(void *)(p + array_offset(f, i, packed));
        f->layers[i].storage = STORAGE_FILE;
    }
    return (flags & SK_BLOOM_VERIFY) ? verify_arrays(f) : SK_OK;
}

int sk_bloom_open(sk_bloom **out, const char *path, unsigned flags)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (path == NULL || (flags & ~SK_BLOOM_VERIFY) != 0)
        return SK_EINVAL;
    /* Non-blocking, so that a FIFO without a writer is refused, not waited on. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return SK_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return SK_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return SK_EIO;
    }
    if (st.st_size == 0) {
        close(fd);
        return SK_EFORMAT;
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED) {
        errno = e;
        return SK_EIO;
    }
    /* Queries touch scattered pages: read-ahead would read megabytes around
     * each one. Whole-filter scans ask for sequential reads while they run. */
    madvise(map, size, MADV_RANDOM);
    sk_bloom *f = calloc(1, sizeof *f);
    if (f == NULL) {
        munmap(map, size);
        return SK_ENOMEM;
    }
    f->map = map;
    f->map_len = size;
    int rc = parse_file(f, map, size, flags);
    if (rc != SK_OK) {
        f->nlayers = 0; /* the layers point into the map */
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

/* ---- dumps ------------------------------------------------------------- */

uint64_t sk_bloom_dump_size(const sk_bloom *f)
{
    return array_offset(f, f->nlayers - 1, 1) + f->layers[f->nlayers - 1].nwords * 8;
}

size_t sk_bloom_dump_header_size(const sk_bloom *f)
{
    return header_size(f->nlayers);
}

/* Visits the parts of layer arrays that bytes [offset, offset + len) of a
 * dump cover, in order: fn(layer, byte offset in its array, length, the
 * position in the caller's buffer). SK_EINVAL if the range is not within
 * the arrays. */
typedef void (*span_fn)(struct layer *l, uint64_t at, size_t len, uint8_t *buf);

static int for_each_span(const sk_bloom *f, uint64_t offset, size_t len, span_fn fn,
                         uint8_t *buf)
{
    if (offset < header_size(f->nlayers) || len > sk_bloom_dump_size(f) - offset ||
        offset > sk_bloom_dump_size(f))
        return SK_EINVAL;
    for (unsigned i = 0; i < f->nlayers && len > 0; i++) {
        struct layer *l = (struct layer *)&f->layers[i];
        uint64_t start = array_offset(f, i, 1), size = l->nwords * 8;
        if (offset >= start + size)
            continue;
        uint64_t at = offset - start;
        size_t chunk = size - at < len ? (size_t)(size - at) : len;
        fn(l, at, chunk, buf);
        buf += chunk;
        offset += chunk;
        len -= chunk;
    }
    return SK_OK;
}

static void copy_out(struct layer *l, uint64_t at, size_t len, uint8_t *buf)
{
    memcpy(buf, (const uint8_t *)(const void *)l->words + at, len);
}

static void copy_in(struct layer *l, uint64_t at, size_t len, uint8_t *buf)
{
    memcpy((uint8_t *)(void *)l->words + at, buf, len);
}

int sk_bloom_dump_read(const sk_bloom *f, uint64_t offset, void *buf, size_t len)
{
    if (f == NULL || (buf == NULL && len > 0))
        return SK_EINVAL;
    size_t head_len = header_size(f->nlayers);
    uint8_t *out = buf;
    if (offset < head_len && len > 0) {
        uint8_t *head = malloc(head_len);
        if (head == NULL)
            return SK_ENOMEM;
        encode_header(f, head, 1);
        size_t chunk = head_len - (size_t)offset < len ? head_len - (size_t)offset : len;
        memcpy(out, head + offset, chunk);
        free(head);
        out += chunk;
        offset += chunk;
        len -= chunk;
    }
    return len == 0 ? SK_OK : for_each_span(f, offset, len, copy_out, out);
}

int sk_bloom_restore_begin(sk_bloom **out, const void *header, size_t len,
                           size_t *header_len)
{
    if (out == NULL || header == NULL || header_len == NULL)
        return SK_EINVAL;
    *out = NULL;
    sk_bloom *f = calloc(1, sizeof *f);
    if (f == NULL)
        return SK_ENOMEM;
    int rc = decode_header(f, header, len, UINT64_MAX, header_len);
    if (rc == SK_OK && ((const uint8_t *)header)[7] != 1)
        rc = SK_ECORRUPT; /* a file's header, not a dump's */
    unsigned shaped = f->nlayers;
    f->nlayers = 0;
    for (unsigned i = 0; rc == SK_OK && i < shaped; i++) {
        struct layer shape = f->layers[i];
        rc = layer_alloc(&f->layers[i], f->layout, shape.bits, shape.hashes, shape.capacity,
                         shape.fp_rate);
        if (rc != SK_OK)
            break;
        f->layers[i].count = atomic_load(&shape.count);
        f->layers[i].checksum = shape.checksum;
        f->nlayers = i + 1;
    }
    if (rc != SK_OK) {
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

int sk_bloom_restore_chunk(sk_bloom *f, uint64_t offset, const void *data, size_t len)
{
    if (f == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    return len == 0 ? SK_OK : for_each_span(f, offset, len, copy_in, (uint8_t *)data);
}

int sk_bloom_restore_finish(const sk_bloom *f)
{
    return f == NULL ? SK_EINVAL : verify_arrays(f);
}
