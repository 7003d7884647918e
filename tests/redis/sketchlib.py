# SPDX-License-Identifier: BSD-3-Clause
"""ctypes wrapper over libsketch.so for the Redis conformance tests.

The library is taken from the SKETCH_LIB environment variable, or else from
the default build tree (build/src/libsketch.so next to this checkout). Only
the HyperLogLog calls the tests need are bound; every one has its argtypes
and restype set, so 64-bit results are never truncated to a C int.

    h = Hll()                 # precision 14, Redis's
    h.add(b"alice")
    h.count()                 # same as PFCOUNT of the same items
    s = h.to_redis()          # string for SET
    Hll.load(s)               # raises SketchError(status) if rejected
"""
import ctypes
import os
from ctypes import (POINTER, byref, c_char_p, c_int, c_size_t, c_uint,
                    c_uint64, c_void_p, create_string_buffer)

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIB = os.path.normpath(
    os.path.join(_HERE, "..", "..", "build", "src", "libsketch.so"))
LIB_PATH = os.environ.get("SKETCH_LIB") or DEFAULT_LIB

# Status codes of sketch/core.h.
SK_OK = 0
SK_ENOMEM = -1
SK_EINVAL = -2
SK_EFORMAT = -3
SK_EVERSION = -4
SK_ETRUNCATED = -5
SK_ECORRUPT = -6
SK_ECHECKSUM = -7
SK_ENOSPACE = -8
SK_EINCOMPAT = -9

# sk_hll_format.
SK_HLL_NATIVE = 0
SK_HLL_REDIS = 1

REDIS_PRECISION = 14

_lib = ctypes.CDLL(LIB_PATH)
_hll_p = c_void_p  # opaque sk_hll *


def _bind(name, restype, argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


_new = _bind("sk_hll_new", c_int, [POINTER(_hll_p), c_uint])
_free = _bind("sk_hll_free", None, [_hll_p])
_add = _bind("sk_hll_add", c_int, [_hll_p, c_void_p, c_size_t])
_add_hash = _bind("sk_hll_add_hash", c_int, [_hll_p, c_uint64])
_count = _bind("sk_hll_count", c_uint64, [_hll_p])
_merge = _bind("sk_hll_merge", c_int, [_hll_p, _hll_p])
_fold = _bind("sk_hll_fold", c_int, [_hll_p, c_uint])
_serialized_size = _bind("sk_hll_serialized_size", c_int, [_hll_p, c_int, POINTER(c_uint64)])
_serialize = _bind("sk_hll_serialize", c_int,
                   [_hll_p, c_int, c_void_p, c_size_t, POINTER(c_size_t)])
_deserialize = _bind("sk_hll_deserialize", c_int,
                     [POINTER(_hll_p), c_void_p, c_size_t, POINTER(c_int), c_void_p])
_hash = _bind("sk_hll_hash", c_uint64, [c_void_p, c_size_t])
_strerror = _bind("sk_strerror", c_char_p, [c_int])
_precision = _bind("sk_hll_precision", c_uint, [_hll_p])


class _HllInfo(ctypes.Structure):
    """sk_hll_info of sketch/hll.h."""
    _fields_ = [("precision", c_uint), ("registers", ctypes.c_uint32), ("encoding", c_int),
                ("memory", c_size_t)]


_get_info = _bind("sk_hll_get_info", None, [_hll_p, POINTER(_HllInfo)])
SK_HLL_SPARSE = 0


def strerror(status):
    return _strerror(status).decode()


def hash64(data):
    """sk_hll_hash: Redis's MurmurHash64A of the bytes."""
    data = bytes(data)
    return _hash(data, len(data))


class SketchError(Exception):
    """A libsketch call returned a negative status; .status holds it."""

    def __init__(self, status, what=""):
        self.status = status
        msg = "%s: %s (%d)" % (what, strerror(status), status) if what else \
            "%s (%d)" % (strerror(status), status)
        super().__init__(msg)


def _check(status, what):
    if status < 0:
        raise SketchError(status, what)
    return status


class Hll:
    """One sk_hll, freed when the Python object goes away."""

    def __init__(self, precision=REDIS_PRECISION, _handle=None):
        self._h = None
        if _handle is not None:
            self._h = _handle
            return
        h = _hll_p()
        _check(_new(byref(h), precision), "sk_hll_new")
        self._h = h

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            _free(self._h)
            self._h = None

    # -- items ---------------------------------------------------------------
    def add(self, item):
        """Adds one item (bytes); returns 1 if a register changed, else 0."""
        item = bytes(item)
        return _check(_add(self._h, item, len(item)), "sk_hll_add")

    def add_many(self, items):
        """Adds every item (bytes); returns how many of them changed a register."""
        h, add = self._h, _add
        changed = 0
        for item in items:
            rc = add(h, item, len(item))
            if rc < 0:
                raise SketchError(rc, "sk_hll_add")
            changed += rc
        return changed

    def add_hash(self, value):
        return _check(_add_hash(self._h, value), "sk_hll_add_hash")

    # -- queries -------------------------------------------------------------
    def count(self):
        return int(_count(self._h))

    @property
    def precision(self):
        return int(_precision(self._h))

    @property
    def is_sparse(self):
        info = _HllInfo()
        _get_info(self._h, byref(info))
        return info.encoding == SK_HLL_SPARSE

    # -- combining -----------------------------------------------------------
    def merge(self, other):
        """Makes self the union of self and other (in place); returns self."""
        _check(_merge(self._h, other._h), "sk_hll_merge")
        return self

    def fold(self, precision):
        _check(_fold(self._h, precision), "sk_hll_fold")
        return self

    # -- serialization -------------------------------------------------------
    def serialized_size(self, fmt):
        """sk_hll_serialized_size, or 0 where it refuses the format (the Redis
        format below precision 14)."""
        size = c_uint64(0)
        return int(size.value) if _serialized_size(self._h, fmt, byref(size)) == 0 else 0

    def serialize(self, fmt):
        """The serialized bytes, or SketchError with sk_hll_serialize's status.

        The buffer is sized by sk_hll_serialized_size when that is known, else
        (where it refuses the format) by a fixed generous size, so that the
        status comes from sk_hll_serialize itself.
        """
        cap = self.serialized_size(fmt) or 1 << 17
        buf = create_string_buffer(cap)
        out_len = c_size_t(0)
        _check(_serialize(self._h, fmt, buf, cap, byref(out_len)),
               "sk_hll_serialize")
        assert out_len.value <= cap
        return buf.raw[:out_len.value]

    def to_redis(self):
        return self.serialize(SK_HLL_REDIS)

    def to_native(self):
        return self.serialize(SK_HLL_NATIVE)

    @classmethod
    def load(cls, data):
        """sk_hll_deserialize of any bytes; SketchError(status) if rejected."""
        data = bytes(data)
        h = _hll_p()
        fmt = c_int(-1)
        status = _deserialize(byref(h), data, len(data), byref(fmt), None)
        if status != SK_OK:
            assert not h.value, "a failed deserialize left a sketch behind"
            raise SketchError(status, "sk_hll_deserialize")
        obj = cls(_handle=h)
        obj.loaded_format = fmt.value
        return obj

    @classmethod
    def of(cls, items, precision=REDIS_PRECISION):
        h = cls(precision)
        h.add_many(items)
        return h
