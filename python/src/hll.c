/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll.c: HyperLogLog, the distinct counter (sketch/hll.h), as a Python
 * class. Its registers, bytes and counts are the library's: a sketch of
 * the same items is the same sketch as `sketch count` builds, as hll_agg in
 * PostgreSQL and, at precision 14, as a Redis PF key.
 */
#include "common.h"

#include "sketch/hll.h"
#include "sketch/hll_extra.h"

#include <string.h>

#define HLL(o) ((sk_hll *)SKPY_OBJ(o))
#define LOCK(self) skpy_lock_enter(SKPY_LOCK(self))
#define UNLOCK(self) skpy_lock_leave(SKPY_LOCK(self))

/* The family by hand: the library's serialization takes a format. Bytes
 * are written in the native format and read in either (sk_hll_deserialize
 * tells which); to_redis and from_redis ask for Redis's. */
SKPY_FAMILY_CALLS(hll)

static int size_native(const void *h, uint64_t *size)
{
    return sk_hll_serialized_size(h, SK_HLL_NATIVE, size);
}

static int size_redis(const void *h, uint64_t *size)
{
    return sk_hll_serialized_size(h, SK_HLL_REDIS, size);
}

static int write_native(const void *h, void *buf, size_t cap, size_t *len)
{
    return sk_hll_serialize(h, SK_HLL_NATIVE, buf, cap, len);
}

static int write_redis(const void *h, void *buf, size_t cap, size_t *len)
{
    return sk_hll_serialize(h, SK_HLL_REDIS, buf, cap, len);
}

/* Reads either format; with `want` >= 0, SK_EFORMAT for the other. */
static int read_as(void **out, const void *buf, size_t len, const sk_allocator *alloc, int want)
{
    sk_hll *h;
    sk_hll_format format;
    int status = sk_hll_deserialize(&h, buf, len, &format, alloc);
    if (status == SK_OK && want >= 0 && (int)format != want) {
        sk_hll_free(h);
        status = SK_EFORMAT;
    }
    if (status == SK_OK)
        *out = h;
    return status;
}

static int read_any(void **out, const void *buf, size_t len, const sk_allocator *alloc)
{
    return read_as(out, buf, len, alloc, -1);
}

static int read_redis(void **out, const void *buf, size_t len, const sk_allocator *alloc)
{
    return read_as(out, buf, len, alloc, SK_HLL_REDIS);
}

static const skpy_family hll_family = {
    .name = "HyperLogLog", .free = hll_free_any, .copy = hll_copy_any, .clear = hll_clear_any,
    .get_info = hll_info_any, .serialized_size = size_native, .serialize = write_native,
    .deserialize = read_any};

PyObject *skpy_hll_wrap(sk_hll *h)
{
    return skpy_object_new(&skpy_hll_type, h, &hll_family);
}

sk_hll *skpy_hll_of(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &skpy_hll_type)) {
        PyErr_Format(PyExc_TypeError, "expected a HyperLogLog, not %.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return HLL(obj);
}

static PyObject *hll_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"precision", NULL};
    PyObject *arg = NULL;
    uint64_t precision = SK_HLL_DEFAULT_PRECISION;
    /* Checked, not wrapped: 2**32 + 14 is no precision. */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:HyperLogLog", names, &arg) ||
        (arg && skpy_uint_arg(arg, "precision", UINT32_MAX, &precision) < 0))
        return NULL;
    sk_hll *h;
    sk_hll_options opts = {.precision = (unsigned)precision};
    int status = precision ? sk_hll_create(&h, &opts) : SK_EINVAL;
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog: precision 4 to 18");
    return skpy_object_new(type, h, &hll_family);
}

static PyObject *hll_add(PyObject *self, PyObject *item)
{
    skpy_item it;
    if (skpy_item_get(item, &it) < 0)
        return NULL;
    LOCK(self);
    int status = sk_hll_add(HLL(self), it.data, it.len);
    UNLOCK(self);
    skpy_item_release(&it);
    if (status < 0)
        return skpy_error(status, "HyperLogLog.add");
    return PyBool_FromLong(status);
}

static int add_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    return sk_hll_add_batch(ctx, items, lens, n);
}

static PyObject *hll_update(PyObject *self, PyObject *items)
{
    if (skpy_each_batch(items, SKPY_LOCK(self), add_batch, HLL(self),
                        "HyperLogLog.update") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *hll_count(PyObject *self, PyObject *unused)
{
    (void)unused;
    LOCK(self);
    uint64_t n = sk_hll_count(HLL(self));
    UNLOCK(self);
    return PyLong_FromUnsignedLongLong(n);
}

static int sigmas_index(int sigmas)
{
    if (sigmas < 1 || sigmas > 3) {
        PyErr_SetString(PyExc_ValueError, "sigmas is 1, 2 or 3");
        return -1;
    }
    return sigmas - 1;
}

static PyObject *hll_estimate(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"sigmas", NULL};
    int sigmas = 2;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i:estimate", names, &sigmas))
        return NULL;
    int i = sigmas_index(sigmas);
    if (i < 0)
        return NULL;
    sk_hll_estimate e;
    LOCK(self);
    sk_hll_estimate_with_bounds(HLL(self), &e);
    UNLOCK(self);
    return Py_BuildValue("(Kdd)", (unsigned long long)e.count, e.lower[i], e.upper[i]);
}

static PyObject *hll_merge(PyObject *self, PyObject *other)
{
    sk_hll *src = skpy_hll_of(other);
    if (!src)
        return NULL;
    if (other == self)
        Py_RETURN_NONE;
    skpy_lock_pair(self, other);
    int status = sk_hll_merge(HLL(self), src);
    skpy_unlock_pair(self, other);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog.merge");
    Py_RETURN_NONE;
}

static PyObject *part_tuple(const sk_hll_part *p, int i)
{
    return Py_BuildValue("(ddd)", p->estimate, p->lower[i], p->upper[i]);
}

static PyObject *hll_compare(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"other", "sigmas", NULL};
    PyObject *other;
    int sigmas = 2;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i:compare", names, &other, &sigmas))
        return NULL;
    sk_hll *b = skpy_hll_of(other);
    int i = b ? sigmas_index(sigmas) : -1;
    if (i < 0)
        return NULL;
    sk_hll_comparison c;
    skpy_lock_pair(self, other);
    int status = sk_hll_compare(HLL(self), b, &c);
    skpy_unlock_pair(self, other);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog.compare");
    return Py_BuildValue("{sI sN sN sN sN sN sN}", "precision", c.precision,
                         "either", part_tuple(&c.either, i), "both", part_tuple(&c.both, i),
                         "a_only", part_tuple(&c.a_only, i), "b_only", part_tuple(&c.b_only, i),
                         "jaccard", part_tuple(&c.jaccard, i),
                         "retained", part_tuple(&c.retained, i));
}

static PyObject *hll_fold(PyObject *self, PyObject *arg)
{
    uint64_t precision;
    if (skpy_uint_arg(arg, "precision", UINT32_MAX, &precision) < 0)
        return NULL;
    LOCK(self);
    int status = precision > SK_HLL_MAX_PRECISION ? SK_EINVAL
                                                  : sk_hll_fold(HLL(self), (unsigned)precision);
    UNLOCK(self);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog.fold: a precision from 4 to the sketch's own");
    Py_RETURN_NONE;
}

/* "native" or "redis" (None: native); -1 with ValueError. */
static int format_of(const char *name, sk_hll_format *out)
{
    if (!name || strcmp(name, "native") == 0)
        *out = SK_HLL_NATIVE;
    else if (strcmp(name, "redis") == 0)
        *out = SK_HLL_REDIS;
    else {
        PyErr_Format(PyExc_ValueError, "format is 'native' or 'redis', not '%.50s'", name);
        return -1;
    }
    return 0;
}

static PyObject *serialize(PyObject *self, sk_hll_format format, const char *what)
{
    int redis = format == SK_HLL_REDIS;
    LOCK(self);
    PyObject *out = skpy_serialize(HLL(self), redis ? size_redis : size_native,
                                   redis ? write_redis : write_native, what);
    UNLOCK(self);
    return out;
}

static PyObject *hll_to_bytes(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"format", NULL};
    const char *name = NULL;
    sk_hll_format format;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|z:to_bytes", names, &name) ||
        format_of(name, &format) < 0)
        return NULL;
    return serialize(self, format, "HyperLogLog.to_bytes");
}

static PyObject *hll_to_redis(PyObject *self, PyObject *unused)
{
    (void)unused;
    return serialize(self, SK_HLL_REDIS, "HyperLogLog.to_redis");
}

static PyObject *hll_from_redis(PyObject *cls, PyObject *data)
{
    if (data == Py_None)
        return PyObject_CallNoArgs(cls); /* redis-py's get() of a missing key */
    return skpy_deserialize((PyTypeObject *)cls, data, &hll_family, read_redis, "from_redis");
}

static int save_file(const void *h, const char *path, int format)
{
    return sk_hll_save(h, (sk_hll_format)format, path);
}

static PyObject *hll_save(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"path", "format", NULL};
    PyObject *path;
    const char *name = NULL;
    sk_hll_format format;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|z:save", names, &path, &name) ||
        format_of(name, &format) < 0)
        return NULL;
    return skpy_save(self, path, save_file, (int)format);
}

static int open_file(void **out, const char *path, int unused)
{
    (void)unused;
    sk_hll *h;
    int status = sk_hll_open(&h, path, NULL, NULL);
    if (status == SK_OK)
        *out = h;
    return status;
}

static PyObject *hll_open(PyObject *cls, PyObject *path)
{
    return skpy_open(cls, path, open_file, 0);
}

static PyObject *hll_repr(PyObject *self)
{
    LOCK(self);
    unsigned precision = sk_hll_precision(HLL(self));
    uint64_t n = sk_hll_count(HLL(self));
    UNLOCK(self);
    return PyUnicode_FromFormat("HyperLogLog(precision=%u, count=%llu)", precision,
                                (unsigned long long)n);
}

enum field { F_PRECISION, F_REGISTERS, F_ENCODING, F_MEMORY };

static PyObject *get_field(PyObject *self, void *which)
{
    sk_hll_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((enum field)(intptr_t)which) {
    case F_PRECISION: return PyLong_FromUnsignedLong(i.precision);
    case F_REGISTERS: return PyLong_FromUnsignedLong(i.registers);
    case F_ENCODING: return PyUnicode_FromString(i.encoding == SK_HLL_SPARSE ? "sparse" : "dense");
    default: return PyLong_FromSize_t(i.memory);
    }
}

static PyMethodDef hll_methods[] = {
    {"add", hll_add, METH_O,
     "add(item) -> bool\n\nAdds one item (str, bytes-like, int, float or bool); True if a\n"
     "register changed, as Redis's PFADD answers."},
    {"update", hll_update, METH_O,
     "update(items) -> None\n\nAdds every item of an iterable, a numpy array or a pandas Series,\n"
     "in C; arrays of numbers, bytes or str are read without a Python object per item,\n"
     "with the GIL released."},
    {"count", hll_count, METH_NOARGS, "count() -> int\n\nThe estimated number of distinct items."},
    {"estimate", SKPY_FN(hll_estimate), METH_VARARGS | METH_KEYWORDS,
     "estimate(sigmas=2) -> (int, float, float)\n\nThe count with lower and upper bounds at 1, 2 "
     "or 3 standard errors\n(about 68%, 95% and 99.7% confidence)."},
    {"merge", hll_merge, METH_O,
     "merge(other) -> None\n\nBecomes the union of both sketches, at the smaller precision."},
    {"compare", SKPY_FN(hll_compare), METH_VARARGS | METH_KEYWORDS,
     "compare(other, sigmas=2) -> dict\n\nWhat this sketch (A) and other (B) say of both sets by "
     "joint maximum\nlikelihood: 'either' |A u B|, 'both' |A n B|, 'a_only', 'b_only', "
     "'jaccard',\n'retained' (|A n B| / |A|), each (estimate, lower, upper); and 'precision'."},
    {"fold", hll_fold, METH_O,
     "fold(precision) -> None\n\nLowers the precision: the sketch the same items would build at it."},
    {"clear", skpy_clear, METH_NOARGS, "clear() -> None\n\nForgets every item; keeps the precision."},
    {"copy", skpy_copy, METH_NOARGS, "copy() -> HyperLogLog"},
    {"__copy__", skpy_copy, METH_NOARGS, NULL},
    {"__deepcopy__", skpy_deepcopy, METH_O, NULL},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, NULL},
    {"to_bytes", SKPY_FN(hll_to_bytes), METH_VARARGS | METH_KEYWORDS,
     "to_bytes(format='native') -> bytes\n\nThe sketch in sketch's format (docs/hll-format.md), or "
     "with format='redis'\nthe string Redis keeps under a PF key."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> HyperLogLog\n\nReads either format; ValueError for bytes that are not a "
     "sketch."},
    {"to_redis", hll_to_redis, METH_NOARGS,
     "to_redis() -> bytes\n\nThe string of a Redis HyperLogLog key (precision 14; a finer sketch "
     "is\nfolded to 14): redis.set(key, h.to_redis()), then PFCOUNT key."},
    {"from_redis", hll_from_redis, METH_O | METH_CLASS,
     "from_redis(data) -> HyperLogLog\n\nA Redis PF key's string, as redis-py's get() returns it "
     "(None: an empty\nsketch)."},
    {"save", SKPY_FN(hll_save), METH_VARARGS | METH_KEYWORDS,
     "save(path, format='native') -> None\n\nWrites the file atomically (a crash leaves the old "
     "file or the new one),\nas `sketch hll` does."},
    {"open", hll_open, METH_O | METH_CLASS,
     "open(path) -> HyperLogLog\n\nReads a sketch file of the command (either format)."},
    {NULL}};

#define FIELD(name, which, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(which)}

static PyGetSetDef hll_getset[] = {
    FIELD("precision", F_PRECISION, "p: the sketch has 2**p registers"),
    FIELD("registers", F_REGISTERS, "m = 2**precision"),
    FIELD("encoding", F_ENCODING, "'sparse' or 'dense', in memory"),
    FIELD("memory", F_MEMORY, "every byte the sketch holds"),
    {NULL}};

PyTypeObject skpy_hll_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sketch.HyperLogLog",
    .tp_basicsize = sizeof(skpy_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "HyperLogLog(precision=14)\n\n"
              "The estimated number of distinct items, in 2**precision registers: a\n"
              "relative standard error of 1.04/sqrt(2**precision), 0.81% at 14. Items hash\n"
              "as everywhere in sketch, so the same items give the same sketch as\n"
              "`sketch count`, hll_agg in PostgreSQL and (at precision 14) PFADD.",
    .tp_new = hll_new,
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = hll_repr,
    .tp_methods = hll_methods,
    .tp_getset = hll_getset,
};

int skpy_add_hll(PyObject *module)
{
    return skpy_add_type(module, &skpy_hll_type, &hll_family);
}
