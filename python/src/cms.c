/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms.c: the CountMinSketch class, a thin shell over sk_cms
 * (sketch/cms.h): how often each item was seen, never below the truth, as
 * RedisBloom's CMS.* commands count (the Redis module's cms_commands.c
 * maps the same calls).
 */
#include "common.h"
#include "sketch/cms.h"

#include <stdlib.h>
#include <string.h>

SKPY_FAMILY(cms, "CountMinSketch");

static PyTypeObject cms_type;

#define CMS(o) ((sk_cms *)SKPY_OBJ(o))
#define LOCK(o) SKPY_LOCK(o)

static PyObject *cms_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"width", "depth", "error", "delta", "max_memory", NULL};
    PyObject *width = NULL, *depth = NULL, *max_memory = NULL;
    double error = 0, delta = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO$ddO:CountMinSketch", kwlist, &width,
                                     &depth, &error, &delta, &max_memory))
        return NULL;
    uint64_t w = 0, d = 0, budget = 0;
    if ((width && skpy_uint_arg(width, "width", UINT32_MAX, &w) < 0) ||
        (depth && skpy_uint_arg(depth, "depth", UINT32_MAX, &d) < 0) ||
        (max_memory && skpy_uint_arg(max_memory, "max_memory", UINT64_MAX, &budget) < 0))
        return NULL;
    sk_cms_options o = {.width = (uint32_t)w, .depth = (uint32_t)d, .error = error,
                        .delta = delta, .max_memory = budget};
    sk_cms *c;
    int rc = sk_cms_create(&c, &o);
    if (rc != SK_OK)
        return skpy_error(rc, "CountMinSketch");
    return skpy_object_new(type, c, &cms_family);
}

/* ---- counting ---------------------------------------------------------------- */

static PyObject *cms_add(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"item", "count", NULL};
    PyObject *obj, *count_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:add", kwlist, &obj, &count_obj))
        return NULL;
    uint64_t count = 1;
    if (count_obj && skpy_uint_arg(count_obj, "count", UINT64_MAX, &count) < 0)
        return NULL;
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return NULL;
    uint32_t estimate;
    skpy_lock_enter(LOCK(self));
    int rc = sk_cms_add(CMS(self), item.data, item.len, count, &estimate);
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    if (rc != SK_OK)
        return skpy_error(rc, "CountMinSketch.add");
    return PyLong_FromUnsignedLong(estimate);
}

static int add_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = sk_cms_add(ctx, items[i], lens[i], 1, NULL);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

static PyObject *cms_update(PyObject *self, PyObject *items)
{
    if (skpy_each_batch(items, LOCK(self), add_batch, CMS(self),
                        "CountMinSketch.update") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *cms_count(PyObject *self, PyObject *obj)
{
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return NULL;
    skpy_lock_enter(LOCK(self));
    uint32_t n = sk_cms_count(CMS(self), item.data, item.len);
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    return PyLong_FromUnsignedLong(n);
}

struct counts {
    const sk_cms *cms;
    skpy_bytes out; /* uint32 estimates */
};

static int count_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    struct counts *c = ctx;
    if (skpy_bytes_reserve(&c->out, n * sizeof(uint32_t)) != SK_OK)
        return SK_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = sk_cms_count(c->cms, items[i], lens[i]);
        memcpy(c->out.data + c->out.len, &v, sizeof v);
        c->out.len += sizeof v;
    }
    return SK_OK;
}

static PyObject *cms_counts_many(PyObject *self, PyObject *items)
{
    struct counts c = {.cms = CMS(self)};
    PyObject *list = NULL;
    if (skpy_each_batch(items, LOCK(self), count_batch, &c,
                        "CountMinSketch.counts_many") == 0) {
        size_t n = c.out.len / sizeof(uint32_t);
        list = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; list && i < n; i++) {
            uint32_t v;
            memcpy(&v, c.out.data + i * sizeof v, sizeof v);
            PyObject *value = PyLong_FromUnsignedLong(v);
            if (!value) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, value);
        }
    }
    skpy_bytes_free(&c.out);
    return list;
}

/* ---- merging ----------------------------------------------------------------- */

static int lock_order(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (skpy_lock *const *)a, y = (uintptr_t) * (skpy_lock *const *)b;
    return x < y ? -1 : x > y;
}

/* Takes the locks of the objects (self among them) in address order, each
 * once, so that two threads merging the same sketches cannot deadlock and
 * a sketch merged into itself is locked once; the order skpy_lock_pair
 * takes for merge(). Returns how many it took. */
static size_t lock_all(skpy_lock **locks, size_t n)
{
    qsort(locks, n, sizeof *locks, lock_order);
    size_t taken = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && locks[i] == locks[i - 1])
            continue;
        skpy_lock_enter(locks[i]);
        locks[taken++] = locks[i];
    }
    return taken;
}

static void leave_all(skpy_lock **locks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skpy_lock_leave(locks[i]);
}

static PyObject *cms_merge(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &cms_type))
        return PyErr_Format(PyExc_TypeError, "merge() takes a CountMinSketch, not %.100s",
                            Py_TYPE(other)->tp_name);
    skpy_lock_pair(self, other);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sk_cms_merge(CMS(self), CMS(other));
    Py_END_ALLOW_THREADS
    skpy_unlock_pair(self, other);
    if (rc != SK_OK)
        return skpy_error(rc, "CountMinSketch.merge");
    Py_RETURN_NONE;
}

static PyObject *cms_merge_weighted(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"sketches", "weights", NULL};
    PyObject *sketches_obj, *weights_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:merge_weighted", kwlist, &sketches_obj,
                                     &weights_obj))
        return NULL;
    /* A tuple of its own holds the sketches while their locks are awaited
     * with the GIL released, when another thread may empty a caller's list. */
    PyObject *sketches = PySequence_Tuple(sketches_obj);
    if (!sketches)
        return NULL;
    PyObject *weights = weights_obj == Py_None
                            ? NULL
                            : PySequence_Fast(weights_obj, "weights must be an iterable");
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sketches);
    const sk_cms **srcs = PyMem_Calloc((size_t)n + 1, sizeof *srcs);
    int64_t *w = PyMem_Calloc((size_t)n + 1, sizeof *w);
    skpy_lock **locks = PyMem_Calloc((size_t)n + 1, sizeof *locks);
    PyObject *result = NULL;
    if (weights_obj != Py_None && !weights)
        goto done;
    if (!srcs || !w || !locks) {
        PyErr_NoMemory();
        goto done;
    }
    if (weights && PySequence_Fast_GET_SIZE(weights) != n) {
        PyErr_SetString(PyExc_ValueError, "merge_weighted: as many weights as sketches");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(sketches, i);
        if (!PyObject_TypeCheck(s, &cms_type)) {
            PyErr_Format(PyExc_TypeError, "merge_weighted() takes CountMinSketch objects, not %.100s",
                         Py_TYPE(s)->tp_name);
            goto done;
        }
        srcs[i] = CMS(s);
        locks[i] = LOCK(s);
        w[i] = 1;
        if (weights) {
            PyObject *wi = PySequence_Fast_GET_ITEM(weights, i);
            if (!PyLong_Check(wi)) {
                PyErr_Format(PyExc_TypeError, "a weight is an int, not %.100s",
                             Py_TYPE(wi)->tp_name);
                goto done;
            }
            w[i] = PyLong_AsLongLong(wi);
            if (w[i] == -1 && PyErr_Occurred())
                goto done;
        }
    }
    locks[n] = LOCK(self);
    size_t taken = lock_all(locks, (size_t)n + 1);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sk_cms_merge_weighted(CMS(self), srcs, w, (size_t)n);
    Py_END_ALLOW_THREADS
    leave_all(locks, taken);
    if (rc != SK_OK)
        skpy_error(rc, "CountMinSketch.merge_weighted");
    else
        result = Py_NewRef(Py_None);
done:
    PyMem_Free(srcs);
    PyMem_Free(w);
    PyMem_Free(locks);
    Py_XDECREF(weights);
    Py_DECREF(sketches);
    return result;
}

/* ---- what it holds -------------------------------------------------------------- */

static PyObject *cms_repr(PyObject *self)
{
    sk_cms_info info;
    if (skpy_info(self, &info) < 0)
        return NULL;
    return PyUnicode_FromFormat("CountMinSketch(width=%lu, depth=%lu, total=%llu)",
                                (unsigned long)info.width, (unsigned long)info.depth,
                                (unsigned long long)info.total);
}

static PyObject *get_field(PyObject *self, void *closure)
{
    sk_cms_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromUnsignedLong(i.width);
    case 1: return PyLong_FromUnsignedLong(i.depth);
    case 2: return PyLong_FromUnsignedLongLong(i.total);
    default: return PyLong_FromSize_t(i.memory);
    }
}

static PyMethodDef cms_methods[] = {
    {"add", SKPY_FN(cms_add), METH_VARARGS | METH_KEYWORDS,
     "add(item, count=1) -> int\n\nAdds count sightings of item (a str, bytes-like object, int,\n"
     "float or bool) and returns its estimate afterwards, as CMS.INCRBY replies.\n"
     "A counter stops at 2**32-1 rather than wrap: an estimate of 4294967295\n"
     "is where CMS.INCRBY replies an overflow error."},
    {"update", cms_update, METH_O,
     "update(items) -> None\n\nAdds one sighting of every item of an iterable, numpy array or\n"
     "pandas Series. On an error the items before it stay added."},
    {"count", cms_count, METH_O,
     "count(item) -> int\n\nThe item's estimated count (CMS.QUERY): never below the truth."},
    {"counts_many", cms_counts_many, METH_O,
     "counts_many(items) -> list[int]\n\nThe estimated count of every item of an iterable or array."},
    {"merge", cms_merge, METH_O,
     "merge(other) -> None\n\nAdds the counts of another CountMinSketch of the same width and\n"
     "depth (ValueError otherwise)."},
    {"merge_weighted", SKPY_FN(cms_merge_weighted),
     METH_VARARGS | METH_KEYWORDS,
     "merge_weighted(sketches, weights=None) -> None\n\nMakes this sketch the sum of sketches[i] x "
     "weights[i] (weights None:\nall 1), as CMS.MERGE with WEIGHTS does: its own counts are replaced,\n"
     "so include it among the sketches to keep them. Every sketch must have\nthis one's width "
     "and depth; a counter or total out of range is a\nValueError and leaves this sketch "
     "unchanged."},
    {"clear", skpy_clear, METH_NOARGS, "clear() -> None\n\nForgets every count, keeping the dimensions."},
    {"copy", skpy_copy, METH_NOARGS, "copy() -> CountMinSketch\n\nAn independent copy."},
    {"__copy__", skpy_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", skpy_deepcopy, METH_O, "An independent copy."},
    {"to_bytes", skpy_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe sketch in the library's format (docs/cms-format.md)."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> CountMinSketch\n\nReads what to_bytes wrote; ValueError for any other bytes."},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, "Pickles through to_bytes."},
    {NULL, NULL, 0, NULL},
};

#define FIELD(name, n, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(n)}
static PyGetSetDef cms_getset[] = {
    FIELD("width", 0, "Counters per row."),
    FIELD("depth", 1, "Rows."),
    FIELD("total", 2, "The sum of every count added (CMS.INFO's count)."),
    FIELD("memory", 3, "Bytes the sketch holds."),
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(cms_doc,
             "CountMinSketch(width=0, depth=0, *, error=0.0, delta=0.0, max_memory=0)\n\n"
             "A count-min sketch: how often each item was seen, in depth rows of width\n"
             "32-bit counters, estimated never below the truth. Give width and depth,\n"
             "or error and delta (each in (0, 1)): then width = ceil(2/error) and the\n"
             "estimate passes the truth by more than error x total with probability\n"
             "at most delta (CMS.INITBYPROB). Items hash as RedisBloom's CMS.* commands\n"
             "hash them. max_memory (bytes, 0: none) refuses a larger sketch.");

static PyTypeObject cms_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sketch.CountMinSketch",
    .tp_basicsize = sizeof(skpy_object),
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = cms_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = cms_doc,
    .tp_methods = cms_methods,
    .tp_getset = cms_getset,
    .tp_new = cms_new,
};

int skpy_add_cms(PyObject *module)
{
    return skpy_add_type(module, &cms_type, &cms_family);
}
