/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.h: the byte layouts of every serialized form, as named offsets,
 * and the little-endian loads and stores that read and write them, so that
 * the same bytes come out on every architecture.
 *
 * This header is the one description of the formats that code uses: the
 * library, the tests, the fuzz targets and the benchmarks include it, and
 * the Python test helpers read its #defines. docs/bloom-format.md and
 * docs/hll-format.md say the same in prose. Nothing here is exported.
 */
#ifndef SKETCH_FORMAT_H
#define SKETCH_FORMAT_H

#include <stdint.h>
#include <string.h>

/* ---- little-endian integers --------------------------------------------
 * Compilers turn these byte-wise forms into single moves on little-endian
 * machines. */

static inline uint32_t sk_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t sk_load_le64(const uint8_t *p)
{
    return (uint64_t)sk_load_le32(p) | (uint64_t)sk_load_le32(p + 4) << 32;
}

static inline void sk_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void sk_store_le64(uint8_t *p, uint64_t v)
{
    sk_store_le32(p, (uint32_t)v);
    sk_store_le32(p + 4, (uint32_t)(v >> 32));
}

/* A double as the 64 bits of its IEEE 754 form, little-endian. */
static inline double sk_load_le_double(const uint8_t *p)
{
    uint64_t bits = sk_load_le64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline void sk_store_le_double(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    sk_store_le64(p, bits);
}

/* ---- Bloom filter files (version 2) and dumps (version 1); split: 3 ------
 *
 *   header, SK_BF_HEADER_SIZE bytes
 *     0  4  magic "SKBF"
 *     4  1  version: 2 for files, 1 for dumps (and files of sketch 0.1), 3
 *           for files and dumps of the split layout (chunk sums as version 2
 *           in files, whole-array sums as version 1 in dumps)
 *     5  1  layout: 0 blocked, 1 classic, 2 split (version 3 only)
 *     6  1  hash: 1 = XXH3-128, seed 0
 *     7  1  arrays: 0 on page boundaries (files), 1 packed (dumps)
 *     8  4  number of layers L >= 1
 *    12  4  expansion; 0 for a filter of fixed size (then L = 1)
 *    16  8  requested false-positive rate, an IEEE-754 double; 0 if explicit
 *    24  1  files of version 2 or 3: log2 of the bytes of a checksummed
 *           chunk, 12..30; version 1 and dumps: 0
 *    25  7  0
 *    32  4  XXH32 (seed 0) of bytes 0..31 followed by the layer table
 *    36  4  0
 *   layer table, SK_BF_LAYER_SIZE bytes per layer
 *     0  8  bits m
 *     8  4  hashes k
 *    12  4  0
 *    16  8  capacity
 *    24  8  items added that set a bit
 *    32  8  offset of the bit array in the file or dump
 *    40  8  with chunk sums (byte 24 != 0): 0; else XXH3-64 (seed 0) of the
 *           bit array
 *   bit arrays, in layer order: ceil(m/64) 64-bit words (m/64 for blocked
 *   and split filters, m a multiple of 512), each at a multiple of SK_BF_FILE_ALIGN in
 *   files and right after the previous part, at a multiple of
 *   SK_BF_DUMP_ALIGN, in dumps; without chunk sums, the file or dump ends
 *   with the last. With chunk sums, right after the last array:
 *     chunk sums: for each layer in order, one 8-byte XXH3-64 (seed 0) of
 *       each chunk of its array (2^shift bytes; the last may be shorter)
 *     change marks: one bit per chunk (of all layers, in the order of the
 *       sums), in 8-byte words, bit i of word w for chunk 64w + i; a set bit
 *       says the chunk may have changed since its sum was written
 *   and the file ends there.
 */
#define SK_BF_MAGIC "SKBF"
#define SK_BF_VERSION_DUMP 1
#define SK_BF_VERSION_FILE 2
#define SK_BF_VERSION_SPLIT 3
#define SK_BF_LAYOUT_BLOCKED 0
#define SK_BF_LAYOUT_CLASSIC 1
#define SK_BF_LAYOUT_SPLIT 2
#define SK_BF_HASH_XXH3_128 1
#define SK_BF_ARRAYS_ALIGNED 0
#define SK_BF_ARRAYS_PACKED 1

#define SK_BF_OFF_MAGIC 0
#define SK_BF_OFF_VERSION 4
#define SK_BF_OFF_LAYOUT 5
#define SK_BF_OFF_HASH 6
#define SK_BF_OFF_PACKED 7
#define SK_BF_OFF_LAYERS 8
#define SK_BF_OFF_EXPANSION 12
#define SK_BF_OFF_FP_RATE 16
#define SK_BF_OFF_CHUNK_SHIFT 24
#define SK_BF_OFF_RESERVED 25
#define SK_BF_OFF_CHECKSUM 32
#define SK_BF_OFF_RESERVED2 36
#define SK_BF_HEADER_SIZE 40

#define SK_BF_LAYER_OFF_BITS 0
#define SK_BF_LAYER_OFF_HASHES 8
#define SK_BF_LAYER_OFF_RESERVED 12
#define SK_BF_LAYER_OFF_CAPACITY 16
#define SK_BF_LAYER_OFF_COUNT 24
#define SK_BF_LAYER_OFF_ARRAY 32
#define SK_BF_LAYER_OFF_CHECKSUM 40
#define SK_BF_LAYER_SIZE 48

#define SK_BF_FILE_ALIGN 4096
#define SK_BF_DUMP_ALIGN 8
#define SK_BF_BLOCK_BITS 512
#define SK_BF_SUM_SIZE 8
#define SK_BF_MARK_WORD 8
#define SK_BF_CHUNK_SHIFT 16
#define SK_BF_MIN_CHUNK_SHIFT 12
#define SK_BF_MAX_CHUNK_SHIFT 30

/* The header checksum covers the bytes before it and the layer table. */
#define SK_BF_CHECKSUMMED_HEADER SK_BF_OFF_CHECKSUM

_Static_assert(SK_BF_OFF_VERSION == SK_BF_OFF_MAGIC + 4, "magic is 4 bytes");
_Static_assert(SK_BF_OFF_LAYERS == SK_BF_OFF_PACKED + 1, "one byte each: version..packed");
_Static_assert(SK_BF_OFF_EXPANSION == SK_BF_OFF_LAYERS + 4, "layers is 4 bytes");
_Static_assert(SK_BF_OFF_FP_RATE == SK_BF_OFF_EXPANSION + 4, "expansion is 4 bytes");
_Static_assert(SK_BF_OFF_CHUNK_SHIFT == SK_BF_OFF_FP_RATE + 8, "the rate is a double");
_Static_assert(SK_BF_OFF_RESERVED == SK_BF_OFF_CHUNK_SHIFT + 1, "the shift is 1 byte");
_Static_assert(SK_BF_OFF_CHECKSUM == SK_BF_OFF_RESERVED + 7, "7 reserved bytes");
_Static_assert(SK_BF_HEADER_SIZE == SK_BF_OFF_RESERVED2 + 4, "the header ends after them");
_Static_assert(SK_BF_LAYER_OFF_RESERVED == SK_BF_LAYER_OFF_HASHES + 4, "hashes is 4 bytes");
_Static_assert(SK_BF_LAYER_OFF_CAPACITY == SK_BF_LAYER_OFF_RESERVED + 4, "4 reserved bytes");
_Static_assert(SK_BF_LAYER_SIZE == SK_BF_LAYER_OFF_CHECKSUM + 8, "the entry ends after them");
_Static_assert(SK_BF_HEADER_SIZE % SK_BF_DUMP_ALIGN == 0 && SK_BF_LAYER_SIZE % 8 == 0,
               "the arrays of a dump start 8-byte aligned");

/* ---- HyperLogLog, sketch's own format, version 1 -------------------------
 *
 *     0  4  magic "SKHL"
 *     4  1  format version, 1
 *     5  1  encoding: 0 dense, 1 sparse
 *     6  1  precision p, 4..18
 *     7  1  hash: 1 = MurmurHash64A with seed 0xadc83b19 (Redis's)
 *     8  4  sparse: number of entries n; dense: 0
 *    12  4  checksum: XXH32 of the body, seeded with XXH32 of bytes 0..11
 *    16     body: dense, m registers of 6 bits packed least-significant bit
 *           first (6m/8 bytes); sparse, n entries of 4 bytes,
 *           (index << 6 | value), strictly increasing
 */
#define SK_HLL_NATIVE_MAGIC "SKHL"
#define SK_HLL_NATIVE_VERSION 1
#define SK_HLL_NATIVE_DENSE 0
#define SK_HLL_NATIVE_SPARSE 1
#define SK_HLL_NATIVE_HASH_MURMUR64A_REDIS 1
#define SK_HLL_OFF_MAGIC 0
#define SK_HLL_OFF_VERSION 4
#define SK_HLL_OFF_ENCODING 5
#define SK_HLL_OFF_PRECISION 6
#define SK_HLL_OFF_HASH 7
#define SK_HLL_OFF_ENTRIES 8
#define SK_HLL_OFF_CHECKSUM 12
#define SK_HLL_NATIVE_HEADER_SIZE 16
#define SK_HLL_SPARSE_ENTRY_SIZE 4

_Static_assert(SK_HLL_OFF_ENTRIES == SK_HLL_OFF_HASH + 1, "one byte each: version..hash");
_Static_assert(SK_HLL_OFF_CHECKSUM == SK_HLL_OFF_ENTRIES + 4, "entries is 4 bytes");
_Static_assert(SK_HLL_NATIVE_HEADER_SIZE == SK_HLL_OFF_CHECKSUM + 4, "then the body");

/* ---- HyperLogLog sketches by key (group files), version 1 -----------------
 *
 *   header, SK_HG_HEADER_SIZE bytes
 *     0  4  magic "SKHG"
 *     4  1  format version, 1
 *     5  1  precision p of every sketch, 4..18
 *     6  2  0
 *     8  8  number of groups G
 *    16  4  XXH32 (seed 0) of bytes 0..15
 *    20  4  0
 *   G records, in the order the groups first came:
 *     0  4  key length k, 0..65535
 *     4  4  sketch length s
 *     8  k  the key
 *   8+k  s  the group's sketch in sketch's own format (above), precision p
 *   and the file ends with 8 bytes: XXH3-64 (seed 0) of all the records.
 */
#define SK_HG_MAGIC "SKHG"
#define SK_HG_VERSION 1
#define SK_HG_OFF_MAGIC 0
#define SK_HG_OFF_VERSION 4
#define SK_HG_OFF_PRECISION 5
#define SK_HG_OFF_RESERVED 6
#define SK_HG_OFF_GROUPS 8
#define SK_HG_OFF_CHECKSUM 16
#define SK_HG_OFF_RESERVED2 20
#define SK_HG_HEADER_SIZE 24
#define SK_HG_REC_OFF_KEY_LEN 0
#define SK_HG_REC_OFF_SKETCH_LEN 4
#define SK_HG_REC_OFF_KEY 8
#define SK_HG_TRAILER_SIZE 8

_Static_assert(SK_HG_OFF_RESERVED == SK_HG_OFF_PRECISION + 1, "one byte each");
_Static_assert(SK_HG_OFF_GROUPS == SK_HG_OFF_RESERVED + 2, "2 reserved bytes");
_Static_assert(SK_HG_OFF_CHECKSUM == SK_HG_OFF_GROUPS + 8, "the count is 8 bytes");
_Static_assert(SK_HG_HEADER_SIZE == SK_HG_OFF_RESERVED2 + 4, "then the records");
_Static_assert(SK_HG_REC_OFF_KEY == SK_HG_REC_OFF_SKETCH_LEN + 4, "then the key");

/* ---- count-min sketches (version 1) ---------------------------------------
 *
 *     0  4  magic "SKCM"
 *     4  1  format version, 1
 *     5  1  hash: 1 = MurmurHash2 (32-bit), seeded with the row's index
 *     6  2  0
 *     8  4  width w >= 1
 *    12  4  depth d >= 1, w x d <= SK_CMS_MAX_CELLS
 *    16  8  total of the counts added
 *    24  8  XXH3-64 (seed 0) of bytes 0..23 followed by the counters
 *    32     the counters: d rows of w 32-bit counts, row by row
 */
#define SK_CMS_MAGIC "SKCM"
#define SK_CMS_VERSION 1
#define SK_CMS_HASH_MURMUR2 1
#define SK_CMS_OFF_MAGIC 0
#define SK_CMS_OFF_VERSION 4
#define SK_CMS_OFF_HASH 5
#define SK_CMS_OFF_RESERVED 6
#define SK_CMS_OFF_WIDTH 8
#define SK_CMS_OFF_DEPTH 12
#define SK_CMS_OFF_TOTAL 16
#define SK_CMS_OFF_CHECKSUM 24
#define SK_CMS_HEADER_SIZE 32

_Static_assert(SK_CMS_OFF_WIDTH == SK_CMS_OFF_RESERVED + 2, "2 reserved bytes");
_Static_assert(SK_CMS_OFF_CHECKSUM == SK_CMS_OFF_TOTAL + 8, "the total is 8 bytes");
_Static_assert(SK_CMS_HEADER_SIZE == SK_CMS_OFF_CHECKSUM + 8, "then the counters");

/* ---- top-k (HeavyKeeper), version 1 ---------------------------------------
 *
 *     0  4  magic "SKTK"
 *     4  1  format version, 1
 *     5  1  hash: 1 = MurmurHash2 (32-bit): rows seeded with their index,
 *           fingerprints with SK_TOPK_FP_SEED
 *     6  2  0
 *     8  4  k >= 1, at most SK_TOPK_MAX_K
 *    12  4  width w >= 1
 *    16  4  depth d >= 1, w x d <= SK_TOPK_MAX_BUCKETS
 *    20  4  0
 *    24  8  decay in (0, 1], an IEEE 754 double's bits
 *    32  8  the state of the generator that decides decays
 *    40  8  XXH3-64 (seed 0) of bytes 0..39 followed by everything after
 *           the header
 *    48     the buckets: d rows of w, each a fingerprint and a count (4 + 4)
 *           the heap: k entries, each a fingerprint, a count and the item's
 *           length (4 + 4 + 4; SK_TOPK_NO_ITEM for an empty entry, whose
 *           fingerprint and count are 0)
 *           the items' bytes, in the heap's order
 */
#define SK_TOPK_MAGIC "SKTK"
#define SK_TOPK_VERSION 1
#define SK_TOPK_HASH_MURMUR2 1
#define SK_TOPK_OFF_MAGIC 0
#define SK_TOPK_OFF_VERSION 4
#define SK_TOPK_OFF_HASH 5
#define SK_TOPK_OFF_RESERVED 6
#define SK_TOPK_OFF_K 8
#define SK_TOPK_OFF_WIDTH 12
#define SK_TOPK_OFF_DEPTH 16
#define SK_TOPK_OFF_RESERVED2 20
#define SK_TOPK_OFF_DECAY 24
#define SK_TOPK_OFF_RNG 32
#define SK_TOPK_OFF_CHECKSUM 40
#define SK_TOPK_HEADER_SIZE 48
#define SK_TOPK_BUCKET_SIZE 8
#define SK_TOPK_BUCKET_OFF_FP 0
#define SK_TOPK_BUCKET_OFF_COUNT 4
#define SK_TOPK_ENTRY_SIZE 12
#define SK_TOPK_ENTRY_OFF_FP 0
#define SK_TOPK_ENTRY_OFF_COUNT 4
#define SK_TOPK_ENTRY_OFF_LEN 8
#define SK_TOPK_NO_ITEM 0xffffffffu

_Static_assert(SK_TOPK_OFF_K == SK_TOPK_OFF_RESERVED + 2, "2 reserved bytes");
_Static_assert(SK_TOPK_OFF_DECAY == SK_TOPK_OFF_RESERVED2 + 4, "4 reserved bytes");
_Static_assert(SK_TOPK_OFF_CHECKSUM == SK_TOPK_OFF_RNG + 8, "the state is 8 bytes");
_Static_assert(SK_TOPK_HEADER_SIZE == SK_TOPK_OFF_CHECKSUM + 8, "then the buckets");
_Static_assert(SK_TOPK_ENTRY_SIZE == SK_TOPK_ENTRY_OFF_LEN + 4, "then the next entry");

/* ---- Cuckoo filters, version 1 (docs/cuckoo-format.md) ---------------------
 *
 *     0  4  magic "SKCF"
 *     4  1  format version, 1
 *     5  1  hash: 1 = MurmurHash64A, seed 0, as RedisBloom's CF.*
 *     6  1  bucket size b, 1..SK_CUCKOO_MAX_BUCKET_SIZE
 *     7  1  0
 *     8  4  sub-filters n, 1..SK_CUCKOO_MAX_FILTERS
 *    12  4  expansion e: 0 (then n = 1) or a power of 2 up to
 *           SK_CUCKOO_MAX_EXPANSION
 *    16  4  max iterations, 1..SK_CUCKOO_MAX_ITERATIONS
 *    20  4  0
 *    24  8  buckets N of the first sub-filter, a power of 2; sub-filter i
 *           has N e^i, at most SK_CUCKOO_MAX_BUCKETS
 *    32  8  items (added less deleted)
 *    40  8  deletes since the last compaction
 *    48  8  bytes of slots a restore has brought so far; all of them when
 *           the filter is complete
 *    56  8  checksum: XXH3-64 (seed 0) of bytes 0..55 followed by the slots
 *    64     the slots: each sub-filter's buckets in order, b one-byte
 *           fingerprints each (0 empty), the sub-filters in order
 *
 *   The dump of CF.SCANDUMP (RedisBloom's) starts with this header, then
 *   gives the same slots:
 *     0  8  items      8  8  buckets N     16  8  deletes     24  8  n
 *    32  2  b         34  2  max iterations                  36  2  e
 */
#define SK_CUCKOO_MAGIC "SKCF"
#define SK_CUCKOO_VERSION 1
#define SK_CUCKOO_HASH_MURMUR64A 1
#define SK_CUCKOO_OFF_MAGIC 0
#define SK_CUCKOO_OFF_VERSION 4
#define SK_CUCKOO_OFF_HASH 5
#define SK_CUCKOO_OFF_BUCKET_SIZE 6
#define SK_CUCKOO_OFF_RESERVED 7
#define SK_CUCKOO_OFF_FILTERS 8
#define SK_CUCKOO_OFF_EXPANSION 12
#define SK_CUCKOO_OFF_ITERATIONS 16
#define SK_CUCKOO_OFF_RESERVED2 20
#define SK_CUCKOO_OFF_BUCKETS 24
#define SK_CUCKOO_OFF_ITEMS 32
#define SK_CUCKOO_OFF_DELETES 40
#define SK_CUCKOO_OFF_RESTORED 48
#define SK_CUCKOO_OFF_CHECKSUM 56
#define SK_CUCKOO_HEADER_SIZE 64

#define SK_CUCKOO_DUMP_OFF_ITEMS 0
#define SK_CUCKOO_DUMP_OFF_BUCKETS 8
#define SK_CUCKOO_DUMP_OFF_DELETES 16
#define SK_CUCKOO_DUMP_OFF_FILTERS 24
#define SK_CUCKOO_DUMP_OFF_BUCKET_SIZE 32
#define SK_CUCKOO_DUMP_OFF_ITERATIONS 34
#define SK_CUCKOO_DUMP_OFF_EXPANSION 36
#define SK_CUCKOO_DUMP_SIZE 38

_Static_assert(SK_CUCKOO_OFF_FILTERS == SK_CUCKOO_OFF_RESERVED + 1, "one byte each: version..");
_Static_assert(SK_CUCKOO_OFF_BUCKETS == SK_CUCKOO_OFF_RESERVED2 + 4, "4 reserved bytes");
_Static_assert(SK_CUCKOO_HEADER_SIZE == SK_CUCKOO_OFF_CHECKSUM + 8, "then the slots");
_Static_assert(SK_CUCKOO_DUMP_SIZE == SK_CUCKOO_DUMP_OFF_EXPANSION + 2, "RedisBloom's 38 bytes");

/* ---- t-digests, version 1 (docs/tdigest-format.md) -------------------------
 *
 *     0  4  magic "SKTD"
 *     4  1  format version, 1
 *     5  3  0
 *     8  4  compression c, 1..SK_TDIGEST_MAX_COMPRESSION
 *    12  4  centroids m
 *    16  4  buffered values u; m + u <= 6c + 10
 *    20  4  0
 *    24  8  compressions so far, >= 0
 *    32  8  weight of the centroids, >= 0
 *    40  8  weight of the buffer, the sum of its weights
 *    48  8  minimum, an IEEE 754 double's bits (DBL_MAX while empty)
 *    56  8  maximum (-DBL_MAX while empty)
 *    64  8  checksum: XXH3-64 (seed 0) of bytes 0..63 followed by the nodes
 *    72     the nodes, m centroids sorted by mean then u buffered values:
 *           each a mean (a double's bits: values near +-DBL_MAX may merge
 *           into infinities) and a weight (>= 1), 8 + 8
 */
#define SK_TDIGEST_MAGIC "SKTD"
#define SK_TDIGEST_VERSION 1
#define SK_TDIGEST_OFF_MAGIC 0
#define SK_TDIGEST_OFF_VERSION 4
#define SK_TDIGEST_OFF_RESERVED 5
#define SK_TDIGEST_OFF_COMPRESSION 8
#define SK_TDIGEST_OFF_MERGED 12
#define SK_TDIGEST_OFF_UNMERGED 16
#define SK_TDIGEST_OFF_RESERVED2 20
#define SK_TDIGEST_OFF_COMPRESSIONS 24
#define SK_TDIGEST_OFF_MERGED_WEIGHT 32
#define SK_TDIGEST_OFF_UNMERGED_WEIGHT 40
#define SK_TDIGEST_OFF_MIN 48
#define SK_TDIGEST_OFF_MAX 56
#define SK_TDIGEST_OFF_CHECKSUM 64
#define SK_TDIGEST_HEADER_SIZE 72
#define SK_TDIGEST_NODE_SIZE 16
#define SK_TDIGEST_NODE_OFF_MEAN 0
#define SK_TDIGEST_NODE_OFF_WEIGHT 8

_Static_assert(SK_TDIGEST_OFF_COMPRESSION == SK_TDIGEST_OFF_RESERVED + 3, "3 reserved bytes");
_Static_assert(SK_TDIGEST_OFF_COMPRESSIONS == SK_TDIGEST_OFF_RESERVED2 + 4, "4 reserved bytes");
_Static_assert(SK_TDIGEST_HEADER_SIZE == SK_TDIGEST_OFF_CHECKSUM + 8, "then the nodes");
_Static_assert(SK_TDIGEST_NODE_SIZE == SK_TDIGEST_NODE_OFF_WEIGHT + 8, "then the next node");

/* ---- sliding-window HyperLogLogs, version 1 (docs/window-hll-format.md) ---
 *
 *     0  4  magic "SKWH"
 *     4  1  format version, 1
 *     5  1  precision p, 4..18
 *     6  1  hash: 1 = MurmurHash64A with seed 0xadc83b19 (Redis's)
 *     7  1  flags: bit 0 set when nothing has been added (newest is then 0)
 *     8  8  resolution: time units a slot, >= 1
 *    16  8  horizon: the longest window, in time units; horizon / resolution
 *           rounded up is at most SK_WINDOW_HLL_MAX_SLOTS
 *    24  8  newest: the slot of the newest time added
 *    32  8  pairs in the body
 *    40  8  checksum: XXH3-64 of bytes 0..39 followed by the body
 *    48     body: for each of the m registers in order, one byte n (at most
 *           64 - p + 1), then n pairs of 4 bytes (age << 6 | rank), age =
 *           newest - slot below the horizon's slots, in decreasing age (so
 *           increasing time) and strictly decreasing rank, ranks 1..64 - p + 1
 */
#define SK_WH_MAGIC "SKWH"
#define SK_WH_VERSION 1
#define SK_WH_HASH_MURMUR64A_REDIS 1
#define SK_WH_FLAG_EMPTY 1u
#define SK_WH_OFF_MAGIC 0
#define SK_WH_OFF_VERSION 4
#define SK_WH_OFF_PRECISION 5
#define SK_WH_OFF_HASH 6
#define SK_WH_OFF_FLAGS 7
#define SK_WH_OFF_RESOLUTION 8
#define SK_WH_OFF_HORIZON 16
#define SK_WH_OFF_NEWEST 24
#define SK_WH_OFF_PAIRS 32
#define SK_WH_OFF_CHECKSUM 40
#define SK_WH_HEADER_SIZE 48
#define SK_WH_PAIR_SIZE 4
#define SK_WH_RANK_BITS 6

_Static_assert(SK_WH_OFF_RESOLUTION == SK_WH_OFF_FLAGS + 1, "one byte each: version..flags");
_Static_assert(SK_WH_OFF_CHECKSUM == SK_WH_OFF_PAIRS + 8, "eight bytes each: resolution..pairs");
_Static_assert(SK_WH_HEADER_SIZE == SK_WH_OFF_CHECKSUM + 8, "then the body");

/* ---- aging Bloom filters, version 1 (docs/aging-bloom.md) -----------------
 *
 *   header, SK_AB_HEADER_SIZE bytes
 *     0  4  magic "SKAB"
 *     4  1  format version, 1
 *     5  1  layout of the generations, as SK_BF_LAYOUT_*: 0 blocked, 1
 *           classic, 2 split
 *     6  1  generations g, 2..64
 *     7  1  the newest generation's index, E mod g
 *     8  8  capacity >= 1: the items of a window
 *    16  8  false-positive rate P of the whole, (0, 0.5], a double's bits
 *    24  8  window: 0 for a count window (the last `capacity` adds), else
 *           time units, at most 2^62
 *    32  8  span: what a generation is the newest for, ceil(capacity /
 *           (g - 1)) adds or ceil(window / (g - 1)) time units
 *    40  8  the newest epoch E: time / span of the newest add (time
 *           window), or (adds - 1) / span, 0 before any (count window)
 *    48  8  count window: adds so far; time window: 0
 *    56  8  XXH3-64 (seed 0) of bytes 0..55 followed by everything after
 *           the header
 *   then g records, generation 0 first:
 *     0  8  length L of the dump
 *     8  L  the generation, a Bloom filter dump (sk_bloom_serialize's, above):
 *           fixed, for ceil(capacity / (g - 1)) items at 1 - (1 - P)^(1/g),
 *           for a count window; scalable with expansion 2 from that, for a
 *           time window
 *   and nothing after the last.
 */
#define SK_AB_MAGIC "SKAB"
#define SK_AB_VERSION 1
#define SK_AB_OFF_MAGIC 0
#define SK_AB_OFF_VERSION 4
#define SK_AB_OFF_LAYOUT 5
#define SK_AB_OFF_GENERATIONS 6
#define SK_AB_OFF_NEWEST_INDEX 7
#define SK_AB_OFF_CAPACITY 8
#define SK_AB_OFF_FP_RATE 16
#define SK_AB_OFF_WINDOW 24
#define SK_AB_OFF_SPAN 32
#define SK_AB_OFF_NEWEST_EPOCH 40
#define SK_AB_OFF_ADDS 48
#define SK_AB_OFF_CHECKSUM 56
#define SK_AB_HEADER_SIZE 64
#define SK_AB_GEN_OFF_LENGTH 0
#define SK_AB_GEN_OFF_DUMP 8

_Static_assert(SK_AB_OFF_CAPACITY == SK_AB_OFF_NEWEST_INDEX + 1, "one byte each: version..index");
_Static_assert(SK_AB_OFF_CHECKSUM == SK_AB_OFF_ADDS + 8, "the adds are 8 bytes");
_Static_assert(SK_AB_HEADER_SIZE == SK_AB_OFF_CHECKSUM + 8, "then the generations");

/* ---- Redis's HyperLogLog strings -----------------------------------------
 *
 *     0  4  "HYLL"
 *     4  1  encoding: 0 dense, 1 sparse
 *     5  3  unused
 *     8  8  cached cardinality, little-endian; the top bit of byte 15 set
 *           means stale
 *    16     body: dense, 16384 registers of 6 bits (12288 bytes); sparse,
 *           the run-length opcodes of hll_redis.c
 */
#define SK_REDIS_HLL_MAGIC "HYLL"
#define SK_REDIS_HLL_DENSE 0
#define SK_REDIS_HLL_SPARSE 1
#define SK_REDIS_HLL_OFF_ENCODING 4
#define SK_REDIS_HLL_OFF_CARDINALITY 8
#define SK_REDIS_HLL_OFF_STALE 15
#define SK_REDIS_HLL_STALE_BIT 0x80
#define SK_REDIS_HLL_HEADER_SIZE 16
#define SK_REDIS_HLL_REGISTERS 16384

_Static_assert(SK_REDIS_HLL_OFF_STALE == SK_REDIS_HLL_OFF_CARDINALITY + 7,
               "the stale bit is the top bit of the cached cardinality");
_Static_assert(SK_REDIS_HLL_HEADER_SIZE == SK_REDIS_HLL_OFF_CARDINALITY + 8, "then the body");

#endif
