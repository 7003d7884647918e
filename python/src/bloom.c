/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom.c: BloomFilter, the set membership filter (sketch/bloom.h), as a
 * Python class. Its bits, dumps and files are the library's: a filter of
 * the same items is the same filter as `sketch bloom` builds, and a file
 * the command made opens here (mapped, or in place so that adds change the
 * file with the library's crash guarantee), and the other way round.
 *
 * The object's lock makes it one writer at a time, so the library's
 * concurrent_writers stays 0. A filter open in place is closed by close()
 * (or the end of a with block, or, last, its deallocation), which commits
 * its adds to the file first; a closed filter's calls raise ValueError.
 */
#include "common.h"

#include "bloom_object.h"

#include <string.h>

SKPY_FAMILY(bloom, "BloomFilter");

static PyTypeObject bloom_type;

static const char *const layout_names[] = {[SK_BLOOM_AUTO] = "auto",
                                           [SK_BLOOM_CLASSIC] = "classic",
                                           [SK_BLOOM_BLOCKED] = "blocked",
                                           [SK_BLOOM_SPLIT] = "split"};

/* An option left out (NULL) keeps its 0. */
static int get_uint(PyObject *obj, const char *name, uint64_t max, uint64_t *out)
{
    return obj ? skpy_uint_arg(obj, name, max, out) : 0;
}

static int layout_of(const char *name, sk_bloom_layout *out)
{
    for (size_t i = 0; i < sizeof layout_names / sizeof layout_names[0]; i++)
        if (strcmp(name, layout_names[i]) == 0) {
            *out = (sk_bloom_layout)i;
            return 0;
        }
    PyErr_Format(PyExc_ValueError,
                 "BloomFilter: layout is 'auto', 'classic', 'blocked' or 'split', not '%.50s'",
                 name);
    return -1;
}

static PyObject *bloom_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"capacity", "fp_rate", "layout", "expansion", "bits", "hashes",
                            "max_memory", "refuse_when_full", NULL};
    PyObject *capacity = NULL, *rate = NULL, *expansion = NULL, *bits = NULL, *hashes = NULL,
             *max_memory = NULL;
    const char *layout = "auto";
    int refuse = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO$sOOOOp:BloomFilter", names, &capacity,
                                     &rate, &layout, &expansion, &bits, &hashes, &max_memory,
                                     &refuse))
        return NULL;
    sk_bloom_options o = {.refuse_when_full = refuse};
    uint64_t e = 0, k = 0;
    /* fp_rate left out is the library's 0: 1% for a sized filter, and none
     * for explicit bits and hashes, which refuse a rate. */
    if ((rate && rate != Py_None && (o.fp_rate = PyFloat_AsDouble(rate)) == -1.0 &&
         PyErr_Occurred()) ||
        layout_of(layout, &o.layout) < 0 ||
        get_uint(capacity, "capacity", UINT64_MAX, &o.capacity) < 0 ||
        get_uint(expansion, "expansion", UINT32_MAX, &e) < 0 ||
        get_uint(bits, "bits", UINT64_MAX, &o.bits) < 0 ||
        get_uint(hashes, "hashes", UINT32_MAX, &k) < 0 ||
        get_uint(max_memory, "max_memory", UINT64_MAX, &o.max_memory) < 0)
        return NULL;
    o.expansion = (unsigned)e;
    o.hashes = (unsigned)k;
    sk_bloom *f;
    int status = sk_bloom_create(&f, &o);
    if (status != SK_OK)
        return skpy_error(status,
                          "BloomFilter: capacity and fp_rate (1e-15 to 0.5), or bits and hashes");
    return skpy_object_new(type, f, &bloom_family);
}

static void bloom_dealloc(PyObject *self)
{
    BloomObject *b = (BloomObject *)self;
    if (BF(b) && b->in_place) {
        /* Left open: its adds are in the file already (the crash
         * guarantee); the commit only saves the next open a re-sum. */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        int status = bloom_commit(b);
        if (status != SK_OK) {
            skpy_error_path(status, "BloomFilter: commit at deallocation", b->path);
            PyErr_WriteUnraisable(self);
        }
        PyErr_Restore(type, value, tb);
    }
    Py_XDECREF(b->path);
    skpy_object_dealloc(self);
}

/* ---- items ---------------------------------------------------------------------- */

/* add(item) or contains(item): the library's answer as a bool. */
static PyObject *one_item(PyObject *self, PyObject *item, int add)
{
    skpy_item it;
    if (skpy_item_get(item, &it) < 0)
        return NULL;
    sk_bloom *f = skpy_enter(self);
    int status = !f ? 0 : add ? sk_bloom_add(f, it.data, it.len)
                              : sk_bloom_contains(f, it.data, it.len);
    if (f)
        UNLOCK(self);
    skpy_item_release(&it);
    if (!f)
        return NULL;
    return status < 0 ? skpy_error(status, "BloomFilter.add") : PyBool_FromLong(status);
}

static PyObject *bloom_add(PyObject *self, PyObject *item)
{
    return one_item(self, item, 1);
}

static PyObject *bloom_contains(PyObject *self, PyObject *item)
{
    return one_item(self, item, 0);
}

static int bloom_sq_contains(PyObject *self, PyObject *item)
{
    PyObject *found = one_item(self, item, 0);
    int out = found ? found == Py_True : -1;
    Py_XDECREF(found);
    return out;
}

/* The batches of update() and contains_many(), called with the lock held:
 * the filter may have been closed by another thread since the call began. */
typedef struct batch_ctx {
    BloomObject *self;
    int closed;
    uint64_t added;
    uint8_t flags[SKPY_BATCH];
} batch_ctx;

static int add_batch(void *arg, const void *const *items, const size_t *lens, size_t n)
{
    batch_ctx *c = arg;
    if (!BF(c->self))
        return c->closed = 1, SK_EINCOMPAT;
    int status = sk_bloom_add_batch(BF(c->self), items, lens, n, c->flags);
    for (size_t i = 0; status >= 0 && i < n; i++)
        c->added += c->flags[i];
    return status;
}

static int contains_batch(void *arg, const void *const *items, const size_t *lens, size_t n,
                          uint8_t *found)
{
    batch_ctx *c = arg;
    if (!BF(c->self))
        return c->closed = 1, SK_EINCOMPAT;
    sk_bloom_contains_batch(BF(c->self), items, lens, n, found);
    return SK_OK;
}

static PyObject *bloom_update(PyObject *self, PyObject *items)
{
    batch_ctx *c = BF(self) ? PyMem_Calloc(1, sizeof *c) : NULL;
    if (!c)
        return BF(self) ? PyErr_NoMemory() : skpy_closed(self);
    c->self = (BloomObject *)self;
    PyObject *out = NULL;
    if (skpy_each_batch(items, SKPY_LOCK(self), add_batch, c, "BloomFilter.update") == 0)
        out = PyLong_FromUnsignedLongLong(c->added);
    else if (c->closed) /* by another thread meanwhile: that error, not the library's */
        PyErr_Clear(), skpy_closed(self);
    PyMem_Free(c);
    return out;
}

static PyObject *bloom_contains_many(PyObject *self, PyObject *items)
{
    batch_ctx c = {.self = (BloomObject *)self};
    if (!BF(self))
        return skpy_closed(self);
    PyObject *out = skpy_query_many(items, SKPY_LOCK(self), contains_batch, &c,
                                    "BloomFilter.contains_many");
    if (!out && c.closed) /* by another thread meanwhile: that error, not the library's */
        PyErr_Clear(), skpy_closed(self);
    return out;
}

/* ---- whole filters -------------------------------------------------------------- */

static PyObject *combine(PyObject *self, PyObject *other, int (*fn)(sk_bloom *, const sk_bloom *),
                         const char *what)
{
    if (!PyObject_TypeCheck(other, &bloom_type))
        return PyErr_Format(PyExc_TypeError, "%s: expected a BloomFilter, not %.100s", what,
                            Py_TYPE(other)->tp_name);
    skpy_lock_pair(self, other);
    int closed = !BF(self) || !BF(other);
    int status = closed || self == other ? SK_OK : fn(BF(self), BF(other));
    skpy_unlock_pair(self, other);
    if (closed)
        return skpy_closed(self);
    if (status != SK_OK)
        return skpy_error(status, what);
    Py_RETURN_NONE;
}

static PyObject *bloom_merge(PyObject *self, PyObject *other)
{
    return combine(self, other, sk_bloom_merge, "BloomFilter.merge");
}

static PyObject *bloom_intersect(PyObject *self, PyObject *other)
{
    return combine(self, other, sk_bloom_intersect, "BloomFilter.intersect");
}

/* ---- what it is ----------------------------------------------------------------- */

static PyObject *bloom_expected_fp_rate(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"items", NULL};
    PyObject *items = Py_None;
    uint64_t n = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:expected_fp_rate", names, &items) ||
        (items != Py_None && get_uint(items, "items", UINT64_MAX, &n) < 0))
        return NULL;
    sk_bloom *f = skpy_enter(self);
    if (!f)
        return NULL;
    if (items == Py_None) {
        sk_bloom_info info;
        sk_bloom_get_info(f, &info);
        n = info.count;
    }
    double rate = sk_bloom_expected_fp_rate(f, n);
    UNLOCK(self);
    return PyFloat_FromDouble(rate);
}

static PyObject *bloom_estimate_items(PyObject *self, PyObject *Py_UNUSED(unused))
{
    sk_bloom *f = skpy_enter(self);
    if (!f)
        return NULL;
    uint64_t n;
    Py_BEGIN_ALLOW_THREADS /* it reads every bit */
    n = sk_bloom_estimate_items(f);
    Py_END_ALLOW_THREADS
    UNLOCK(self);
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *bloom_repr(PyObject *self)
{
    sk_bloom_info i;
    if (skpy_info(self, &i) < 0) {
        PyErr_Clear();
        return PyUnicode_FromString("<closed BloomFilter>");
    }
    PyObject *rate = PyFloat_FromDouble(i.fp_rate);
    if (!rate)
        return NULL;
    PyObject *out = PyUnicode_FromFormat(
        "BloomFilter(layout='%s', bits=%llu, hashes=%u, capacity=%llu, fp_rate=%R, "
        "expansion=%u, layers=%u, count=%llu)",
        layout_names[i.layout], (unsigned long long)i.bits, i.hashes,
        (unsigned long long)i.capacity, rate, i.expansion, i.layers, (unsigned long long)i.count);
    Py_DECREF(rate);
    return out;
}

enum field { F_LAYOUT, F_BITS, F_HASHES, F_CAPACITY, F_FP_RATE, F_COUNT, F_LAYERS, F_EXPANSION,
             F_MAX_MEMORY, F_ARRAY_BYTES, F_MEMORY, F_INTERRUPTED, F_CLOSED, F_IN_PLACE };

static PyObject *get_field(PyObject *self, void *which)
{
    /* These two hold without the filter, also once it is closed. */
    if ((intptr_t)which == F_CLOSED)
        return PyBool_FromLong(BF(self) == NULL);
    if ((intptr_t)which == F_IN_PLACE)
        return PyBool_FromLong(((BloomObject *)self)->in_place);
    sk_bloom_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((enum field)(intptr_t)which) {
    case F_LAYOUT: return PyUnicode_FromString(layout_names[i.layout]);
    case F_BITS: return PyLong_FromUnsignedLongLong(i.bits);
    case F_HASHES: return PyLong_FromUnsignedLong(i.hashes);
    case F_CAPACITY: return PyLong_FromUnsignedLongLong(i.capacity);
    case F_FP_RATE: return PyFloat_FromDouble(i.fp_rate);
    case F_COUNT: return PyLong_FromUnsignedLongLong(i.count);
    case F_LAYERS: return PyLong_FromUnsignedLong(i.layers);
    case F_EXPANSION: return PyLong_FromUnsignedLong(i.expansion);
    case F_MAX_MEMORY: return PyLong_FromUnsignedLongLong(i.max_memory);
    case F_ARRAY_BYTES: return PyLong_FromUnsignedLongLong(i.array_bytes);
    case F_MEMORY: return PyLong_FromSize_t(i.memory);
    default: return PyLong_FromUnsignedLongLong(i.interrupted_chunks);
    }
}

static PyMethodDef bloom_methods[] = {
    {"add", SKPY_FN(bloom_add), METH_O, "add(item) -> bool\n\nAdds one item (str, bytes-like, int, "
     "float or bool); True if it was new\n(a bit changed), False if it may have been in."},
    {"update", SKPY_FN(bloom_update), METH_O, "update(items) -> int\n\nAdds every item of an "
     "iterable, a numpy array or a pandas Series, in C\n(arrays with the GIL released); "
     "returns how many were new."},
    {"contains", SKPY_FN(bloom_contains), METH_O, "contains(item) -> bool\n\nTrue if the item may "
     "be in the filter, False if it certainly is not\n(also `item in f`)."},
    {"contains_many", SKPY_FN(bloom_contains_many), METH_O, "contains_many(items) -> list[bool] | "
     "numpy.ndarray\n\ncontains() of every item: a list, or a numpy bool array for an "
     "array or\na pandas Series."},
    {"merge", SKPY_FN(bloom_merge), METH_O, "merge(other) -> None\n\nBecomes the union of both "
     "filters, of one layout, layers and size\n(ValueError otherwise); each layer's count "
     "becomes the estimate from its fill."},
    {"intersect", SKPY_FN(bloom_intersect), METH_O, "intersect(other) -> None\n\nBecomes the "
     "intersection of both filters, of one shape (not scalable)."},
    {"clear", SKPY_FN(skpy_clear), METH_NOARGS, "clear() -> None\n\nForgets every item; a "
     "scalable filter goes back to one layer."},
    {"copy", SKPY_FN(skpy_copy), METH_NOARGS, "copy() -> BloomFilter\n\nA copy, in memory."},
    {"__copy__", SKPY_FN(skpy_copy), METH_NOARGS, NULL},
    {"__deepcopy__", SKPY_FN(skpy_deepcopy), METH_O, NULL},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, NULL},
    {"to_bytes", SKPY_FN(skpy_to_bytes), METH_NOARGS, "to_bytes() -> bytes\n\nThe filter as one "
     "byte string, the dump form of docs/bloom-format.md."},
    {"from_bytes", SKPY_FN(skpy_from_bytes), METH_O | METH_CLASS, "from_bytes(data) -> "
     "BloomFilter\n\nReads a dump; ValueError for bytes that are not one."},
    {"save", SKPY_FN(bloom_save), METH_O, "save(path) -> None\n\nWrites a filter file of `sketch "
     "bloom` atomically (a temporary file, fsync,\nrename: a crash leaves the old file or "
     "the new one)."},
    {"open", SKPY_FN(bloom_open), METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "open(path, *, in_place=False, verify=False, mapped=True) -> BloomFilter\n\nA filter "
     "file of `sketch bloom`, mapped: only the pages queries touch are\nread, and the "
     "file must not shrink while open (a mapping past the end of\na file faults: the "
     "process dies of SIGBUS); mapped=False reads it whole\ninto memory instead. Adds "
     "change the memory only, unless in_place: then they "
     "change the file itself, as `sketch bloom add`\ndoes, and sync() or close() commits "
     "them (an add that returned survives\nthe process being killed). One process at a "
     "time holds a file in place\n(BlockingIOError). verify checks every array against its "
     "sums first."},
    {"sync", SKPY_FN(bloom_sync), METH_NOARGS, "sync() -> None\n\nCommits the adds to a filter "
     "opened in place: the sums of the chunks\nchanged, the counts, a flush to the disk."},
    {"close", SKPY_FN(bloom_close), METH_NOARGS, "close() -> None\n\nCommits a filter opened in "
     "place (as sync()) and releases the filter;\nfurther calls raise ValueError. Closing "
     "twice does nothing."},
    {"__enter__", SKPY_FN(bloom_enter), METH_NOARGS, NULL},
    {"__exit__", SKPY_FN(bloom_exit), METH_VARARGS, NULL},
    {"expected_fp_rate", SKPY_FN(bloom_expected_fp_rate), METH_VARARGS | METH_KEYWORDS,
     "expected_fp_rate(items=None) -> float\n\nThe false-positive rate after `items` "
     "distinct items (None: the count\nso far), by the exact formula of the layout."},
    {"estimate_items", SKPY_FN(bloom_estimate_items), METH_NOARGS, "estimate_items() -> int\n\n"
     "The number of distinct items, estimated from the bits set (reads every\nbit)."},
    {NULL}};

#define FIELD(name, which, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(which)}

static PyGetSetDef bloom_getset[] = {
    FIELD("layout", F_LAYOUT, "'classic', 'blocked' or 'split' ('auto' is chosen at creation)"),
    FIELD("bits", F_BITS, "bits of all layers"),
    FIELD("hashes", F_HASHES, "bits an item sets (in the first layer)"),
    FIELD("capacity", F_CAPACITY, "items the layers hold at their rates"),
    FIELD("fp_rate", F_FP_RATE, "the rate asked for at creation; 0.0 for explicit bits"),
    FIELD("count", F_COUNT, "items whose add set a bit"),
    FIELD("layers", F_LAYERS, "layers of a scalable filter (1 if fixed)"),
    FIELD("expansion", F_EXPANSION, "growth of a scalable filter; 0 if fixed"),
    FIELD("max_memory", F_MAX_MEMORY, "the memory budget; 0 for none"),
    FIELD("array_bytes", F_ARRAY_BYTES, "bytes of bit arrays"),
    FIELD("memory", F_MEMORY, "every byte the filter holds, allocated or mapped"),
    FIELD("interrupted_chunks", F_INTERRUPTED, "chunks an interrupted add in place left marked"),
    FIELD("closed", F_CLOSED, "True once close() has been called"),
    FIELD("in_place", F_IN_PLACE, "True if opened in place: adds change the file"),
    {NULL}};

static PySequenceMethods bloom_sequence = {.sq_contains = bloom_sq_contains};

static PyTypeObject bloom_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sketch.BloomFilter",
    .tp_basicsize = sizeof(BloomObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "BloomFilter(capacity=0, fp_rate=0.01, *, layout='auto', expansion=0, bits=0,\n"
              "            hashes=0, max_memory=0, refuse_when_full=False)\n\n"
              "Is an item in the set? 'maybe' (at most fp_rate wrongly) or 'definitely\n"
              "not', never a false negative, in about 10 bits per item at 1%. Sized for\n"
              "capacity items at fp_rate, or by explicit bits and hashes (then leave\n"
              "fp_rate out). layout: 'classic' (fewest bits), 'blocked' (one cache line\n"
              "per item), 'split' (the fastest) or 'auto' (the library's rule).\n"
              "expansion >= 1 makes a scalable filter, each new layer that many times\n"
              "larger; max_memory (bytes) is a budget; refuse_when_full makes a full\n"
              "fixed filter refuse new items. Items hash as everywhere in sketch: the\n"
              "same items make the same filter as `sketch bloom`, whose files open()\n"
              "and save() read and write.",
    .tp_new = bloom_new,
    .tp_dealloc = bloom_dealloc,
    .tp_repr = bloom_repr,
    .tp_as_sequence = &bloom_sequence,
    .tp_methods = bloom_methods,
    .tp_getset = bloom_getset,
};

int skpy_add_bloom(PyObject *module)
{
    return skpy_add_type(module, &bloom_type, &bloom_family);
}
