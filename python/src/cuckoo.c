/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo.c: the CuckooFilter class, a thin shell over sk_cuckoo
 * (sketch/cuckoo.h): set membership with deletes, in about a byte per
 * item, the same slots as RedisBloom's CF.* commands (the Redis module's
 * cf_commands.c maps the same calls).
 */
#include "common.h"
#include "sketch/cuckoo.h"

#include <string.h>

SKPY_FAMILY(cuckoo, "CuckooFilter");

#define CF(o) ((sk_cuckoo *)SKPY_OBJ(o))
#define LOCK(o) SKPY_LOCK(o)

static PyObject *cuckoo_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"capacity", "bucket_size", "max_iterations", "expansion",
                             "max_memory", NULL};
    PyObject *obj[5] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOO:CuckooFilter", kwlist, &obj[0],
                                     &obj[1], &obj[2], &obj[3], &obj[4]))
        return NULL;
    /* Each field's own range; the library checks its limits within it. */
    static const uint64_t max[5] = {UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX};
    uint64_t v[5] = {0};
    for (int i = 0; i < 5; i++)
        if (obj[i] && skpy_uint_arg(obj[i], kwlist[i], max[i], &v[i]) < 0)
            return NULL;
    sk_cuckoo_options o = {.capacity = v[0], .bucket_size = (uint32_t)v[1],
                           .max_iterations = (uint32_t)v[2], .expansion = (uint32_t)v[3],
                           .max_memory = v[4]};
    sk_cuckoo *c;
    int rc = sk_cuckoo_create(&c, &o);
    if (rc != SK_OK)
        return skpy_error(rc, "CuckooFilter");
    return skpy_object_new(type, c, &cuckoo_family);
}

/* ---- one item ------------------------------------------------------------------ */

typedef int (*item_fn)(sk_cuckoo *c, const void *data, size_t len);

/* Runs fn on one item under the lock: its result (>= 0), or -1 with the
 * library's error. */
static int on_item(PyObject *self, PyObject *obj, item_fn fn, const char *what)
{
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return -1;
    skpy_lock_enter(LOCK(self));
    int rc = fn(CF(self), item.data, item.len);
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    if (rc < 0) {
        /* The library's message for SK_EFULL speaks of growth, which a
         * fixed filter never tries: say first that it is full. */
        if (rc == SK_EFULL) {
            char full[128];
            PyOS_snprintf(full, sizeof full, "%s: the filter is full", what);
            skpy_error(rc, full);
        } else {
            skpy_error(rc, what);
        }
        return -1;
    }
    return rc;
}

static PyObject *cuckoo_add(PyObject *self, PyObject *obj)
{
    int rc = on_item(self, obj, sk_cuckoo_add, "CuckooFilter.add");
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *cuckoo_add_unique(PyObject *self, PyObject *obj)
{
    int rc = on_item(self, obj, sk_cuckoo_add_unique, "CuckooFilter.add_unique");
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *cuckoo_delete(PyObject *self, PyObject *obj)
{
    int rc = on_item(self, obj, sk_cuckoo_delete, "CuckooFilter.delete");
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static int contains_one(sk_cuckoo *c, const void *data, size_t len)
{
    return sk_cuckoo_contains(c, data, len);
}

static PyObject *cuckoo_contains(PyObject *self, PyObject *obj)
{
    int rc = on_item(self, obj, contains_one, "CuckooFilter.contains");
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static int cuckoo_sq_contains(PyObject *self, PyObject *obj)
{
    return on_item(self, obj, contains_one, "CuckooFilter.__contains__");
}

static PyObject *cuckoo_count(PyObject *self, PyObject *obj)
{
    skpy_item item;
    if (skpy_item_get(obj, &item) < 0)
        return NULL;
    skpy_lock_enter(LOCK(self));
    uint64_t n = sk_cuckoo_count(CF(self), item.data, item.len);
    skpy_lock_leave(LOCK(self));
    skpy_item_release(&item);
    return PyLong_FromUnsignedLongLong(n);
}

/* ---- many items ---------------------------------------------------------------- */

static int add_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = sk_cuckoo_add(ctx, items[i], lens[i]);
        if (rc < 0)
            return rc;
    }
    return SK_OK;
}

static PyObject *cuckoo_update(PyObject *self, PyObject *items)
{
    if (skpy_each_batch(items, LOCK(self), add_batch, CF(self), "CuckooFilter.update") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int contains_batch(void *ctx, const void *const *items, const size_t *lens, size_t n,
                          uint8_t *answers)
{
    sk_cuckoo_contains_many(ctx, items, lens, n, answers);
    return SK_OK;
}

static PyObject *cuckoo_contains_many(PyObject *self, PyObject *obj)
{
    return skpy_query_many(obj, LOCK(self), contains_batch, CF(self), "CuckooFilter.contains_many");
}

/* ---- whole filters ------------------------------------------------------------- */

static PyObject *cuckoo_compact(PyObject *self, PyObject *unused)
{
    (void)unused;
    skpy_lock_enter(LOCK(self));
    int rc = sk_cuckoo_compact(CF(self));
    skpy_lock_leave(LOCK(self));
    if (rc < 0)
        return skpy_error(rc, "CuckooFilter.compact");
    return PyBool_FromLong(rc);
}

static PyObject *cuckoo_set_max_memory(PyObject *self, PyObject *obj)
{
    uint64_t bytes;
    if (skpy_uint_arg(obj, "max_memory", UINT64_MAX, &bytes) < 0)
        return NULL;
    skpy_lock_enter(LOCK(self));
    sk_cuckoo_set_max_memory(CF(self), bytes);
    skpy_lock_leave(LOCK(self));
    Py_RETURN_NONE;
}

/* ---- what it holds ------------------------------------------------------------- */

static PyObject *cuckoo_repr(PyObject *self)
{
    sk_cuckoo_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    return PyUnicode_FromFormat("CuckooFilter(buckets=%llu, bucket_size=%u, max_iterations=%u, "
                                "expansion=%u, filters=%u, items=%llu)",
                                (unsigned long long)i.buckets,
                                (unsigned)i.bucket_size, (unsigned)i.max_iterations,
                                (unsigned)i.expansion, (unsigned)i.filters,
                                (unsigned long long)i.items);
}

static PyObject *get_info_field(PyObject *self, void *closure)
{
    sk_cuckoo_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromUnsignedLongLong(i.buckets);
    case 1: return PyLong_FromUnsignedLong(i.filters);
    case 2: return PyLong_FromUnsignedLongLong(i.slots);
    case 3: return PyLong_FromUnsignedLongLong(i.items);
    case 4: return PyLong_FromUnsignedLongLong(i.deletes);
    case 5: return PyLong_FromUnsignedLong(i.bucket_size);
    case 6: return PyLong_FromUnsignedLong(i.max_iterations);
    case 7: return PyLong_FromUnsignedLong(i.expansion);
    default: return PyLong_FromSize_t(i.memory);
    }
}

static PyMethodDef cuckoo_methods[] = {
    {"add", cuckoo_add, METH_O,
     "add(item) -> bool\n\nAdds item (a str, bytes-like object, int, float or bool); True when\n"
     "added, as CF.ADD. An item may be added more than once (count() counts\n"
     "its copies). When it finds no room, the filter is left as it was and\n"
     "the library's status is raised: ValueError for a fixed filter\n"
     "(expansion 0) that is full or a growth past the limits or max_memory,\n"
     "MemoryError when memory runs out."},
    {"add_unique", cuckoo_add_unique, METH_O,
     "add_unique(item) -> bool\n\nAdds item unless it may be present (CF.ADDNX): True if added,\n"
     "False if not; errors as add()."},
    {"update", cuckoo_update, METH_O,
     "update(items) -> None\n\nAdds every item of an iterable, numpy array or pandas Series, as add()\n"
     "does. On an error (a full filter) the items before it stay added."},
    {"contains", cuckoo_contains, METH_O,
     "contains(item) -> bool\n\nFalse if item is surely absent, True if it may be present (CF.EXISTS)."},
    {"contains_many", cuckoo_contains_many, METH_O,
     "contains_many(items) -> list[bool] | numpy.ndarray\n\ncontains() of every item (CF.MEXISTS): "
     "a list for an iterable, a numpy\nbool array for an array or pandas Series."},
    {"count", cuckoo_count, METH_O,
     "count(item) -> int\n\nThe slots holding item's fingerprint (CF.COUNT): at least the copies\n"
     "added and not deleted, more where other items share the fingerprint."},
    {"delete", cuckoo_delete, METH_O,
     "delete(item) -> bool\n\nRemoves one copy of item's fingerprint (CF.DEL): True if one was\n"
     "there. Delete only what was added: deleting an item never added may\nremove another's."},
    {"compact", cuckoo_compact, METH_NOARGS,
     "compact() -> bool\n\nMoves fingerprints into older sub-filters and frees the newest ones it\n"
     "empties (CF.COMPACT): True if anything changed."},
    {"set_max_memory", cuckoo_set_max_memory, METH_O,
     "set_max_memory(bytes) -> None\n\nThe budget growth is held to from now on (0: none)."},
    {"clear", skpy_clear, METH_NOARGS, "clear() -> None\n\nBack to one empty sub-filter."},
    {"copy", skpy_copy, METH_NOARGS, "copy() -> CuckooFilter\n\nAn independent copy."},
    {"__copy__", skpy_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", skpy_deepcopy, METH_O, "An independent copy."},
    {"to_bytes", skpy_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe filter in the library's format (docs/cuckoo-format.md)."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> CuckooFilter\n\nReads what to_bytes wrote; ValueError for any other bytes.\n"
     "The filter has no memory budget (see set_max_memory)."},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, "Pickles through to_bytes."},
    {NULL, NULL, 0, NULL},
};

#define FIELD(name, n, doc) {name, get_info_field, NULL, doc, (void *)(intptr_t)(n)}
static PyGetSetDef cuckoo_getset[] = {
    FIELD("buckets", 0, "Buckets of the first sub-filter."),
    FIELD("filters", 1, "Sub-filters."),
    FIELD("slots", 2, "Slots of all the sub-filters."),
    FIELD("items", 3, "Items added less items deleted."),
    FIELD("deletes", 4, "Deletes since the last compaction."),
    FIELD("bucket_size", 5, "Slots per bucket."),
    FIELD("max_iterations", 6, "Moves an add tries before it gives up on a sub-filter."),
    FIELD("expansion", 7, "0: a fixed size; n: a new sub-filter has n**i times the buckets."),
    FIELD("memory", 8, "Bytes the filter holds."),
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods cuckoo_as_sequence = {
    .sq_contains = cuckoo_sq_contains,
};

PyDoc_STRVAR(cuckoo_doc,
             "CuckooFilter(capacity, *, bucket_size=2, max_iterations=20, expansion=0, "
             "max_memory=0)\n\n"
             "A cuckoo filter: set membership with deletes, an 8-bit fingerprint per\n"
             "item in buckets of bucket_size slots (capacity / bucket_size buckets,\n"
             "rounded up to a power of 2), the same slots as RedisBloom's CF.*\n"
             "commands. An add moves up to max_iterations fingerprints before it\n"
             "gives up; expansion 0 keeps one fixed sub-filter (an add past its room\n"
             "raises ValueError), n >= 1 adds sub-filters of n**i times the buckets\n"
             "(n rounded up to a power of 2). max_memory (bytes, 0: none) bounds the\n"
             "filter, growth included. `item in f` is f.contains(item).");

static PyTypeObject cuckoo_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sketch.CuckooFilter",
    .tp_basicsize = sizeof(skpy_object),
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = cuckoo_repr,
    .tp_as_sequence = &cuckoo_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = cuckoo_doc,
    .tp_methods = cuckoo_methods,
    .tp_getset = cuckoo_getset,
    .tp_new = cuckoo_new,
};

int skpy_add_cuckoo(PyObject *module)
{
    return skpy_add_type(module, &cuckoo_type, &cuckoo_family);
}
