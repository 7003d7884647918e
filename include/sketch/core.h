/*
 * sketch/core.h: what every part of libsketch shares: the version, the
 * status codes that every fallible function returns, and their messages.
 *
 * Conventions of the whole API:
 *  - every exported name starts with sk_ (or SK_ for macros and constants);
 *  - functions that can fail return an int: SK_OK (0) or a negative SK_E*
 *    code, and never print, abort or touch global state;
 *  - objects are opaque, created by sk_*_new or sk_*_deserialize and released
 *    by sk_*_free, which accepts NULL;
 *  - serialized forms are byte strings with a fixed little-endian layout, the
 *    same on every architecture (see docs/).
 */
#ifndef SKETCH_CORE_H
#define SKETCH_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

#define SK_VERSION_MAJOR 0
#define SK_VERSION_MINOR 1
#define SK_VERSION_PATCH 0
#define SK_VERSION_STRING "0.1.0"

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
    SK_EFULL = -11      /* a scalable filter reached its largest number of layers */
};

/* The library's version, "MAJOR.MINOR.PATCH", which may differ from the
 * SK_VERSION_STRING a program was compiled against. */
SK_API const char *sk_version(void);

/* A short English message for a status code; never NULL. */
SK_API const char *sk_strerror(int status);

#ifdef __cplusplus
}
#endif

#endif
