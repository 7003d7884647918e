/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/core.h: what every part of libsketch shares: the version, the
 * status codes that every fallible function returns, the caller's
 * allocator, and the words the whole API uses in one sense.
 *
 * Conventions:
 *  - every exported name starts with sk_ (or SK_ for macros and constants);
 *  - functions that can fail return an int: SK_OK (0) or a negative SK_E*
 *    code, and never print, abort or touch global state;
 *  - objects are opaque, created by sk_*_new (defaults) or sk_*_create
 *    (every option), or read by sk_*_deserialize, sk_*_load or sk_*_open,
 *    and released by sk_*_free, which accepts NULL;
 *  - serialized forms are byte strings with a fixed little-endian layout, the
 *    same on every architecture (see docs/).
 *
 * Vocabulary, the same for every structure:
 *  - merge: dst becomes the union of dst and src, in place;
 *  - clear: forget every item, keeping the parameters;
 *  - count: for a HyperLogLog, the estimated distinct items; for a Bloom
 *    filter, the items whose add set at least one bit (an item whose bits
 *    were all set already, by itself or by others, is not counted), which
 *    is what decides when a scalable filter grows;
 *  - memory: every byte the object holds, from the allocator or mapped: the
 *    object itself, its tables and its registers or bit arrays;
 *  - capacity: the items a Bloom filter holds at its false-positive rate.
 */
#ifndef SKETCH_CORE_H
#define SKETCH_CORE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one definition of the project's version: CMake reads these three lines
 * for the soname, pkg-config, the CMake package, the Redis module and the
 * PostgreSQL extension, and tests/version checks that they all agree. */
#define SK_VERSION_MAJOR 0
#define SK_VERSION_MINOR 3
#define SK_VERSION_PATCH 0
#define SK_VERSION_STRING SK_VERSION_TEXT_(SK_VERSION_MAJOR, SK_VERSION_MINOR, SK_VERSION_PATCH)
#define SK_VERSION_TEXT_(major, minor, patch) SK_VERSION_QUOTE_(major.minor.patch)
#define SK_VERSION_QUOTE_(text) #text

#if defined(_WIN32)
#define SK_API
#else
#define SK_API __attribute__((visibility("default")))
#endif

enum sk_status {
    SK_OK = 0,
    SK_ENOMEM = -1,     /* an allocation failed; the object is unchanged */
    SK_EINVAL = -2,     /* an argument is out of its documented range */
    SK_EFORMAT = -3,    /* the bytes are not a serialized sketch of any known kind */
    SK_EVERSION = -4,   /* a format version this library does not read */
    SK_ETRUNCATED = -5, /* the serialized sketch ends early or has bytes left over */
    SK_ECORRUPT = -6,   /* the serialized sketch contradicts itself */
    SK_ECHECKSUM = -7,  /* the stored checksum does not match the contents */
    SK_ENOSPACE = -8,   /* the output buffer is too small */
    SK_EINCOMPAT = -9,  /* the operation does not apply to this sketch */
    SK_EIO = -10,       /* a system call failed; errno says why */
    SK_EFULL = -11,     /* it cannot grow: a scalable filter's next layer, a map's next group, is past the limits */
    SK_ETOOLARGE = -12, /* the size asked for is past a limit (SK_BLOOM_MAX_BITS, ...) */
    SK_EBUDGET = -13    /* the memory budget given at creation does not allow it */
};

/* The library's version, "MAJOR.MINOR.PATCH", which may differ from the
 * SK_VERSION_STRING a program was compiled against. */
SK_API const char *sk_version(void);

/* A short English message for a status code; never NULL. */
SK_API const char *sk_strerror(int status);

/* The caller's memory, given when an object is created or read and used for
 * everything it allocates until it is freed. alloc returns size bytes (any
 * alignment malloc would give, or NULL); free receives the pointer and the
 * size that alloc was asked for. With SK_ALLOC_HUGE_PAGES the library may
 * advise transparent huge pages on the whole 2 MB pages inside large bit
 * arrays. A NULL allocator means malloc and free, and mmap with huge pages
 * for large arrays. */
typedef struct sk_allocator {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *ptr, size_t size);
    void *opaque;
    unsigned flags;
} sk_allocator;
#define SK_ALLOC_HUGE_PAGES 1u

#ifdef __cplusplus
}
#endif

#endif
