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

typedef struct {
    PyObject_HEAD
    sk_hll *h;
    skpy_lock lock;
} HllObject;

#define HLL(o) (((HllObject *)(o))->h)

static PyObject *hll_alloc(PyTypeObject *type, sk_hll *h)
{
    HllObject *self = (HllObject *)type->tp_alloc(type, 0);
    if (!self) {
        sk_hll_free(h);
        return NULL;
    }
    if (skpy_lock_init(&self->lock) < 0) {
        sk_hll_free(h);
        Py_DECREF(self);
        return NULL;
    }
    self->h = h;
    return (PyObject *)self;
}

PyObject *skpy_hll_wrap(sk_hll *h)
{
    return hll_alloc(&skpy_hll_type, h);
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
    unsigned precision = SK_HLL_DEFAULT_PRECISION;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|I:HyperLogLog", names, &precision))
        return NULL;
    sk_hll *h;
    sk_hll_options opts = {.precision = precision};
    int status = precision ? sk_hll_create(&h, &opts) : SK_EINVAL;
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog: precision 4 to 18");
    return hll_alloc(type, h);
}

static void hll_dealloc(PyObject *self)
{
    sk_hll_free(HLL(self));
    skpy_lock_free(&((HllObject *)self)->lock);
    Py_TYPE(self)->tp_free(self);
}

#define LOCK(self) skpy_lock_enter(&((HllObject *)(self))->lock)
#define UNLOCK(self) skpy_lock_leave(&((HllObject *)(self))->lock)

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
    if (skpy_each_batch(items, &((HllObject *)self)->lock, add_batch, HLL(self),
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
    /* Two locks, always taken in address order, so that a.merge(b) and
     * b.merge(a) at once cannot deadlock. */
    PyObject *first = self < other ? self : other, *second = self < other ? other : self;
    LOCK(first);
    LOCK(second);
    int status = sk_hll_merge(HLL(self), src);
    UNLOCK(second);
    UNLOCK(first);
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
    PyObject *first = self < other ? self : other, *second = self < other ? other : self;
    LOCK(first);
    if (second != first)
        LOCK(second);
    int status = sk_hll_compare(HLL(self), b, &c);
    if (second != first)
        UNLOCK(second);
    UNLOCK(first);
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
    unsigned long precision = PyLong_AsUnsignedLong(arg);
    if (precision == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    LOCK(self);
    int status = precision > SK_HLL_MAX_PRECISION ? SK_EINVAL
                                                  : sk_hll_fold(HLL(self), (unsigned)precision);
    UNLOCK(self);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog.fold: a precision from 4 to the sketch's own");
    Py_RETURN_NONE;
}

static PyObject *hll_clear(PyObject *self, PyObject *unused)
{
    (void)unused;
    LOCK(self);
    int status = sk_hll_clear(HLL(self));
    UNLOCK(self);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog.clear");
    Py_RETURN_NONE;
}

static PyObject *hll_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    sk_hll *h;
    LOCK(self);
    int status = sk_hll_copy(&h, HLL(self));
    UNLOCK(self);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLog.copy");
    return hll_alloc(Py_TYPE(self), h);
}

static PyObject *hll_deepcopy(PyObject *self, PyObject *memo)
{
    (void)memo;
    return hll_copy(self, NULL);
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
    LOCK(self);
    uint64_t size;
    int status = sk_hll_serialized_size(HLL(self), format, &size);
    PyObject *out = NULL;
    if (status == SK_OK && size <= PY_SSIZE_T_MAX)
        out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    size_t len = 0;
    if (out)
        status = sk_hll_serialize(HLL(self), format, PyBytes_AS_STRING(out), (size_t)size, &len);
    UNLOCK(self);
    if (status != SK_OK) {
        Py_XDECREF(out);
        return skpy_error(status, what);
    }
    if (out && len != size && _PyBytes_Resize(&out, (Py_ssize_t)len) < 0)
        return NULL;
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

/* Reads either format; with `want` set, only that one. */
static PyObject *deserialize(PyTypeObject *type, PyObject *data, int want, const char *what)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    sk_hll *h;
    sk_hll_format format;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sk_hll_deserialize(&h, view.buf, (size_t)view.len, &format, NULL);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (status != SK_OK)
        return skpy_error(status, what);
    if (want >= 0 && (int)format != want) {
        sk_hll_free(h);
        return skpy_error(SK_EFORMAT, what);
    }
    return hll_alloc(type, h);
}

static PyObject *hll_from_bytes(PyObject *cls, PyObject *data)
{
    return deserialize((PyTypeObject *)cls, data, -1, "HyperLogLog.from_bytes");
}

static PyObject *hll_from_redis(PyObject *cls, PyObject *data)
{
    if (data == Py_None)
        return PyObject_CallNoArgs(cls); /* redis-py's get() of a missing key */
    return deserialize((PyTypeObject *)cls, data, SK_HLL_REDIS, "HyperLogLog.from_redis");
}

static PyObject *hll_save(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"path", "format", NULL};
    PyObject *path_arg, *path;
    const char *name = NULL;
    sk_hll_format format;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|z:save", names, &path_arg, &name) ||
        format_of(name, &format) < 0 || !(path = skpy_path(path_arg)))
        return NULL;
    int status;
    LOCK(self);
    Py_BEGIN_ALLOW_THREADS
    status = sk_hll_save(HLL(self), format, PyBytes_AS_STRING(path));
    Py_END_ALLOW_THREADS
    UNLOCK(self);
    if (status != SK_OK) {
        skpy_error_path(status, "HyperLogLog.save", path_arg);
        Py_DECREF(path);
        return NULL;
    }
    Py_DECREF(path);
    Py_RETURN_NONE;
}

static PyObject *hll_open(PyObject *cls, PyObject *path_arg)
{
    PyObject *path = skpy_path(path_arg);
    if (!path)
        return NULL;
    sk_hll *h;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sk_hll_open(&h, PyBytes_AS_STRING(path), NULL, NULL);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (status != SK_OK)
        return skpy_error_path(status, "HyperLogLog.open", path_arg);
    return hll_alloc((PyTypeObject *)cls, h);
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

static void hll_info(PyObject *self, sk_hll_info *info)
{
    LOCK(self);
    sk_hll_get_info(HLL(self), info);
    UNLOCK(self);

}

static PyObject *get_precision(PyObject *self, void *unused)
{
    (void)unused;
    sk_hll_info info;
    hll_info(self, &info);
    return PyLong_FromUnsignedLong(info.precision);
}

static PyObject *get_registers(PyObject *self, void *unused)
{
    (void)unused;
    sk_hll_info info;
    hll_info(self, &info);
    return PyLong_FromUnsignedLong(info.registers);
}

static PyObject *get_encoding(PyObject *self, void *unused)
{
    (void)unused;
    sk_hll_info info;
    hll_info(self, &info);
    return PyUnicode_FromString(info.encoding == SK_HLL_SPARSE ? "sparse" : "dense");
}

static PyObject *get_memory(PyObject *self, void *unused)
{
    (void)unused;
    sk_hll_info info;
    hll_info(self, &info);
    return PyLong_FromSize_t(info.memory);
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
    {"estimate", (PyCFunction)(void (*)(void))hll_estimate, METH_VARARGS | METH_KEYWORDS,
     "estimate(sigmas=2) -> (int, float, float)\n\nThe count with lower and upper bounds at 1, 2 "
     "or 3 standard errors\n(about 68%, 95% and 99.7% confidence)."},
    {"merge", hll_merge, METH_O,
     "merge(other) -> None\n\nBecomes the union of both sketches, at the smaller precision."},
    {"compare", (PyCFunction)(void (*)(void))hll_compare, METH_VARARGS | METH_KEYWORDS,
     "compare(other, sigmas=2) -> dict\n\nWhat this sketch (A) and other (B) say of both sets by "
     "joint maximum\nlikelihood: 'either' |A u B|, 'both' |A n B|, 'a_only', 'b_only', "
     "'jaccard',\n'retained' (|A n B| / |A|), each (estimate, lower, upper); and 'precision'."},
    {"fold", hll_fold, METH_O,
     "fold(precision) -> None\n\nLowers the precision: the sketch the same items would build at it."},
    {"clear", hll_clear, METH_NOARGS, "clear() -> None\n\nForgets every item; keeps the precision."},
    {"copy", hll_copy, METH_NOARGS, "copy() -> HyperLogLog"},
    {"__copy__", hll_copy, METH_NOARGS, NULL},
    {"__deepcopy__", hll_deepcopy, METH_O, NULL},
    {"__reduce__", (PyCFunction)(void (*)(void))skpy_reduce, METH_NOARGS, NULL},
    {"to_bytes", (PyCFunction)(void (*)(void))hll_to_bytes, METH_VARARGS | METH_KEYWORDS,
     "to_bytes(format='native') -> bytes\n\nThe sketch in sketch's format (docs/hll-format.md), or "
     "with format='redis'\nthe string Redis keeps under a PF key."},
    {"from_bytes", hll_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> HyperLogLog\n\nReads either format; ValueError for bytes that are not a "
     "sketch."},
    {"to_redis", hll_to_redis, METH_NOARGS,
     "to_redis() -> bytes\n\nThe string of a Redis HyperLogLog key (precision 14; a finer sketch "
     "is\nfolded to 14): redis.set(key, h.to_redis()), then PFCOUNT key."},
    {"from_redis", hll_from_redis, METH_O | METH_CLASS,
     "from_redis(data) -> HyperLogLog\n\nA Redis PF key's string, as redis-py's get() returns it "
     "(None: an empty\nsketch)."},
    {"save", (PyCFunction)(void (*)(void))hll_save, METH_VARARGS | METH_KEYWORDS,
     "save(path, format='native') -> None\n\nWrites the file atomically (a crash leaves the old "
     "file or the new one),\nas `sketch hll` does."},
    {"open", hll_open, METH_O | METH_CLASS,
     "open(path) -> HyperLogLog\n\nReads a sketch file of the command (either format)."},
    {NULL}};

static PyGetSetDef hll_getset[] = {
    {"precision", get_precision, NULL, "p: the sketch has 2**p registers", NULL},
    {"registers", get_registers, NULL, "m = 2**precision", NULL},
    {"encoding", get_encoding, NULL, "'sparse' or 'dense', in memory", NULL},
    {"memory", get_memory, NULL, "every byte the sketch holds", NULL},
    {NULL}};

PyTypeObject skpy_hll_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sketch.HyperLogLog",
    .tp_basicsize = sizeof(HllObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "HyperLogLog(precision=14)\n\n"
              "The estimated number of distinct items, in 2**precision registers: a\n"
              "relative standard error of 1.04/sqrt(2**precision), 0.81% at 14. Items hash\n"
              "as everywhere in sketch, so the same items give the same sketch as\n"
              "`sketch count`, hll_agg in PostgreSQL and (at precision 14) PFADD.",
    .tp_new = hll_new,
    .tp_dealloc = hll_dealloc,
    .tp_repr = hll_repr,
    .tp_methods = hll_methods,
    .tp_getset = hll_getset,
};

int skpy_add_hll(PyObject *module)
{
    if (PyType_Ready(&skpy_hll_type) < 0)
        return -1;
    Py_INCREF(&skpy_hll_type);
    return PyModule_AddObject(module, "HyperLogLog", (PyObject *)&skpy_hll_type) < 0 ? -1 : 0;
}
