/* SPDX-License-Identifier: BSD-3-Clause */
/* status.c: the library's version and the messages of its status codes. */
#include "sketch/core.h"

const char *sk_version(void)
{
    return SK_VERSION_STRING;
}

const char *sk_strerror(int status)
{
    switch (status) {
    case SK_OK: return "success";
    case SK_ENOMEM: return "out of memory";
    case SK_EINVAL: return "invalid argument";
    case SK_EFORMAT: return "not a sketch file or string";
    case SK_EVERSION: return "unsupported format version";
    case SK_ETRUNCATED: return "truncated or oversized data";
    case SK_ECORRUPT: return "corrupt data";
    case SK_ECHECKSUM: return "checksum mismatch";
    case SK_ENOSPACE: return "output buffer too small";
    case SK_EINCOMPAT: return "operation not possible for this sketch";
    case SK_EIO: return "input/output error";
    case SK_EFULL: return "it cannot grow: its next layer or group would be past the limits";
    case SK_ETOOLARGE: return "larger than the library's limits";
    case SK_EBUDGET: return "more memory than the filter's budget";
    }
    return "unknown error";
}
