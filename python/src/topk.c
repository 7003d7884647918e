/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk.c: the TopK class, a thin shell over sk_topk (sketch/topk.h): the
 * k heaviest items of a stream with their counts (HeavyKeeper, hash for
 * hash RedisBloom's TOPK.* commands; the Redis module's topk_commands.c
 * maps the same calls).
 *
 * The sketch keeps items as bytes; they come back as str, decoded from
 * UTF-8 with errors="surrogateescape", so that a str added comes back
 * equal and any other bytes come back losslessly
 * (item.encode("utf-8", "surrogateescape") gives them).
 */
#include "common.h"
#include "sketch/topk.h"

#include <string.h>

SKPY_FAMILY(topk, "TopK");

#define TOPK(o) ((sk_topk *)SKPY_OBJ(o))
#define LOCK(o) SKPY_LOCK(o)

static PyObject *item_str(const void *data, size_t len)
{
    return PyUnicode_DecodeUTF8(data, (Py_ssize_t)len, "surrogateescape");
}

static PyObject *topk_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"k", "width", "depth", "decay", "max_memory", NULL};
    PyObject *k_obj, *width = NULL, *depth = NULL, *max_memory = NULL;
    double decay = 0.9;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOdO:TopK", kwlist, &k_obj, &width, &depth,
                                     &decay, &max_memory))
        return NULL;
    uint64_t k, w = 8, d = 7, budget = 0;
    if (skpy_uint_arg(k_obj, "k", UINT32_MAX, &k) < 0 ||
        (width && skpy_uint_arg(width, "width", UINT32_MAX, &w) < 0) ||
        (depth && skpy_uint_arg(depth, "depth", UINT32_MAX, &d) < 0) ||
        (max_memory && skpy_uint_arg(max_memory, "max_memory", UINT64_MAX, &budget) < 0))
        return NULL;
    sk_topk_options o = {.k = (uint32_t)k, .width = (uint32_t)w, .depth = (uint32_t)d,
                         .decay = decay, .max_memory = budget};
    sk_topk *t;
    int rc = sk_topk_create(&t, &o);
    if (rc != SK_OK)
        return skpy_error(rc, "TopK");
    return skpy_object_new(type, t, &topk_family);
}

/* ---- adding ---------------------------------------------------------------------- */

static PyObject *topk_add(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"item", "increment", NULL};
    PyObject *obj, *inc_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:add", kwlist, &obj, &inc_obj))
        return NULL;
    uint64_t increment = 1;
    if (inc_obj && skpy_uint_arg(inc_obj, "increment", UINT32_MAX, &increment) < 0)
        return NULL;
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return NULL;
    const void *out = NULL;
    size_t out_len = 0;
    PyObject *result;
    skpy_lock_enter(LOCK(self));
    int rc = sk_topk_add(TOPK(self), item.data, item.len, (uint32_t)increment, &out, &out_len);
    /* The expelled bytes last until the next add: read them under the lock. */
    if (rc == 1)
        result = item_str(out, out_len);
    else if (rc == 0)
        result = Py_NewRef(Py_None);
    else
        result = skpy_error(rc, "TopK.add");
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    return result;
}

static int add_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    const void *out;
    size_t out_len;
    for (size_t i = 0; i < n; i++) {
        int rc = sk_topk_add(ctx, items[i], lens[i], 1, &out, &out_len);
        if (rc < 0)
            return rc;
    }
    return SK_OK;
}

static PyObject *topk_update(PyObject *self, PyObject *items)
{
    if (skpy_each_batch(items, LOCK(self), add_batch, TOPK(self), "TopK.update") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- queries --------------------------------------------------------------------- */

static int query_item(PyObject *self, PyObject *obj)
{
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return -1;
    skpy_lock_enter(LOCK(self));
    int rc = sk_topk_query(TOPK(self), item.data, item.len);
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    return rc;
}

static PyObject *topk_query(PyObject *self, PyObject *obj)
{
    int rc = query_item(self, obj);
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *topk_count(PyObject *self, PyObject *obj)
{
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return NULL;
    skpy_lock_enter(LOCK(self));
    uint32_t n = sk_topk_count(TOPK(self), item.data, item.len);
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    return PyLong_FromUnsignedLong(n);
}

static PyObject *topk_list(PyObject *self, PyObject *unused)
{
    (void)unused;
    sk_topk_info info;
    skpy_lock_enter(LOCK(self));
    sk_topk_get_info(TOPK(self), &info);
    sk_topk_entry *entries = PyMem_Malloc((size_t)info.k * sizeof *entries);
    int n = entries ? sk_topk_list(TOPK(self), entries, info.k) : SK_ENOMEM;
    /* The entries point into the sketch: their bytes are copied under the
     * lock, and the Python objects made after it, since making objects may
     * collect garbage whose finalizers could call this sketch. */
    skpy_bytes names = {0};
    for (int i = 0; i < n && n >= 0; i++)
        if (skpy_bytes_reserve(&names, entries[i].len + 1) != SK_OK) {
            n = SK_ENOMEM;
        } else {
            memcpy(names.data + names.len, entries[i].item, entries[i].len);
            names.len += entries[i].len;
        }
    skpy_lock_leave(LOCK(self));
    PyObject *list = n < 0 ? skpy_error(n, "TopK.list") : PyList_New(n);
    size_t at = 0;
    for (int i = 0; list && i < n; i++) {
        PyObject *name = item_str(names.data + at, entries[i].len);
        PyObject *pair = name ? Py_BuildValue("(Nk)", name, (unsigned long)entries[i].count)
                              : NULL;
        at += entries[i].len;
        if (!pair)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, pair);
    }
    skpy_bytes_free(&names);
    PyMem_Free(entries);
    return list;
}

/* ---- what it holds -------------------------------------------------------------- */

static PyObject *topk_repr(PyObject *self)
{
    sk_topk_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    PyObject *decay = PyFloat_FromDouble(i.decay);
    if (!decay)
        return NULL;
    PyObject *out = PyUnicode_FromFormat("TopK(k=%u, width=%u, depth=%u, decay=%R)",
                                         (unsigned)i.k, (unsigned)i.width, (unsigned)i.depth,
                                         decay);
    Py_DECREF(decay);
    return out;
}

static PyObject *get_field(PyObject *self, void *closure)
{
    sk_topk_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromUnsignedLong(i.k);
    case 1: return PyLong_FromUnsignedLong(i.width);
    case 2: return PyLong_FromUnsignedLong(i.depth);
    case 3: return PyFloat_FromDouble(i.decay);
    default: return PyLong_FromSize_t(i.memory);
    }
}

static PyMethodDef topk_methods[] = {
    {"add", SKPY_FN(topk_add), METH_VARARGS | METH_KEYWORDS,
     "add(item, increment=1) -> str | None\n\nAdds increment (0 to 100000) sightings of item (a str, "
     "bytes-like\nobject, int, float or bool), as TOPK.INCRBY: the item this pushed out\nof the top "
     "k (a str, decoded from UTF-8 with errors='surrogateescape'),\nor None."},
    {"update", topk_update, METH_O,
     "update(items) -> None\n\nAdds one sighting of every item of an iterable, numpy array or "
     "pandas\nSeries (TOPK.ADD), without reporting the items expelled."},
    {"query", topk_query, METH_O,
     "query(item) -> bool\n\nWhether item is in the top k now (TOPK.QUERY); also `item in topk`."},
    {"count", topk_count, METH_O,
     "count(item) -> int\n\nThe item's estimated count in the sketch (TOPK.COUNT): never above the "
     "truth."},
    {"list", topk_list, METH_NOARGS,
     "list() -> list[tuple[str, int]]\n\nThe top k, heaviest first, as (item, count) pairs (TOPK.LIST "
     "WITHCOUNT).\nItems are str, decoded from UTF-8 with errors='surrogateescape':\n"
     "item.encode('utf-8', 'surrogateescape') gives back the bytes added."},
    {"clear", skpy_clear, METH_NOARGS, "clear() -> None\n\nForgets every item, keeping the parameters."},
    {"copy", skpy_copy, METH_NOARGS,
     "copy() -> TopK\n\nAn independent copy: given the same adds, it stays the same (the\n"
     "generator of decays is copied too)."},
    {"__copy__", skpy_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", skpy_deepcopy, METH_O, "An independent copy."},
    {"to_bytes", skpy_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe sketch in the library's format (docs/topk-format.md)."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> TopK\n\nReads what to_bytes wrote; ValueError for any other bytes."},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, "Pickles through to_bytes."},
    {NULL, NULL, 0, NULL},
};

#define FIELD(name, n, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(n)}
static PyGetSetDef topk_getset[] = {
    FIELD("k", 0, "Items kept."),
    FIELD("width", 1, "Buckets per row."),
    FIELD("depth", 2, "Rows."),
    FIELD("decay", 3, "The base of the probability that a colliding count decays."),
    FIELD("memory", 4, "Bytes the sketch holds, items included."),
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods topk_as_sequence = {
    .sq_contains = query_item,
};

PyDoc_STRVAR(topk_doc,
             "TopK(k, *, width=8, depth=7, decay=0.9, max_memory=0)\n\n"
             "The k heaviest items of a stream with their counts, in fixed memory:\n"
             "HeavyKeeper, with depth rows of width buckets, hash for hash RedisBloom's\n"
             "TOPK.* (0 for width, depth or decay means its default). Counts are never\n"
             "above the truth. Where items meet in a bucket, decays are drawn from a\n"
             "generator the sketch carries and saves, so copies given the same adds\n"
             "stay the same. Items come back as str decoded from UTF-8 with\n"
             "errors='surrogateescape'. max_memory (bytes, 0: none) refuses a larger sketch.");

static PyTypeObject topk_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sketch.TopK",
    .tp_basicsize = sizeof(skpy_object),
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = topk_repr,
    .tp_as_sequence = &topk_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = topk_doc,
    .tp_methods = topk_methods,
    .tp_getset = topk_getset,
    .tp_new = topk_new,
};

int skpy_add_topk(PyObject *module)
{
    return skpy_add_type(module, &topk_type, &topk_family);
}
