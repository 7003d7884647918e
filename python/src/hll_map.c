/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_map.c: HyperLogLogMap, a HyperLogLog per key (sketch/hll_map.h), the
 * distinct counter per group of `sketch count --by`, as a Python class
 * that reads like a dict from keys to counts. Every group's sketch is the
 * HyperLogLog of its items, byte for byte, and the map's bytes and files
 * are the command's group files (`count --by -o`, `sketch hll`).
 *
 * Keys are byte strings to the library. A key given as str is its UTF-8
 * with errors="surrogateescape", and keys come back as str decoded the
 * same way, so that any key, UTF-8 or not, goes round: k.encode("utf-8",
 * "surrogateescape") is its bytes. Other keys are items (bytes as they are,
 * numbers as their text).
 */
#include "common.h"

#include "sketch/hll_map.h"

#include <stdlib.h>
#include <string.h>

SKPY_FAMILY(hll_map, "HyperLogLogMap");

static PyTypeObject map_type;

#define MAP(o) ((sk_hll_map *)SKPY_OBJ(o))
#define LOCK(self) skpy_lock_enter(SKPY_LOCK(self))
#define UNLOCK(self) skpy_lock_leave(SKPY_LOCK(self))

static PyObject *map_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"precision", NULL};
    PyObject *arg = NULL;
    uint64_t precision = SK_HLL_DEFAULT_PRECISION;
    /* Checked, not wrapped: 2**32 + 14 is no precision. */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:HyperLogLogMap", names, &arg) ||
        (arg && skpy_uint_arg(arg, "precision", UINT32_MAX, &precision) < 0))
        return NULL;
    sk_hll_map *m;
    sk_hll_map_options opts = {.precision = (unsigned)precision};
    int status = precision ? sk_hll_map_create(&m, &opts) : SK_EINVAL;
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLogMap: precision 4 to 18");
    return skpy_object_new(type, m, &hll_map_family);
}

/* ---- keys ----------------------------------------------------------------------- */

/* A key's bytes: a str's UTF-8 with surrogateescape (held in `encoded`),
 * else the item's bytes. */
typedef struct map_key {
    skpy_item item;
    PyObject *encoded;
} map_key;

static int key_get(PyObject *obj, map_key *k)
{
    k->encoded = NULL;
    if (!PyUnicode_Check(obj))
        return skpy_item_get(obj, &k->item);
    k->encoded = PyUnicode_AsEncodedString(obj, "utf-8", "surrogateescape");
    if (!k->encoded)
        return -1;
    k->item.has_view = 0;
    k->item.data = PyBytes_AS_STRING(k->encoded);
    k->item.len = (size_t)PyBytes_GET_SIZE(k->encoded);
    return 0;
}

static void key_release(map_key *k)
{
    if (k->encoded)
        Py_DECREF(k->encoded);
    else
        skpy_item_release(&k->item);
}

static PyObject *key_str(const sk_hll_map_entry *e)
{
    return PyUnicode_DecodeUTF8(e->key, (Py_ssize_t)e->key_len, "surrogateescape");
}

/* The group of key: its entry (with the lock held by the caller), or -1
 * with no exception when absent, or -2 with an exception. */
static int64_t find(PyObject *self, PyObject *key, sk_hll_map_entry *e)
{
    map_key k;
    if (key_get(key, &k) < 0)
        return -2;
    LOCK(self);
    int64_t g = sk_hll_map_find(MAP(self), k.item.data, k.item.len);
    if (g >= 0)
        sk_hll_map_get(MAP(self), (size_t)g, e);
    UNLOCK(self);
    key_release(&k);
    return g;
}

/* ---- items ---------------------------------------------------------------------- */

static PyObject *map_add(PyObject *self, PyObject *args)
{
    PyObject *key, *item;
    if (!PyArg_ParseTuple(args, "OO:add", &key, &item))
        return NULL;
    map_key k;
    skpy_item it;
    if (key_get(key, &k) < 0)
        return NULL;
    if (skpy_item_get(item, &it) < 0) {
        key_release(&k);
        return NULL;
    }
    LOCK(self);
    int status = sk_hll_map_add(MAP(self), k.item.data, k.item.len, it.data, it.len);
    UNLOCK(self);
    skpy_item_release(&it);
    key_release(&k);
    if (status < 0)
        return skpy_error(status, "HyperLogLogMap.add");
    return PyBool_FromLong(status);
}

static int add_pairs(void *ctx, const void *const *keys, const size_t *key_lens,
                     const void *const *items, const size_t *item_lens, size_t n)
{
    return sk_hll_map_add_batch(ctx, keys, key_lens, items, item_lens, n);
}

static PyObject *map_update(PyObject *self, PyObject *args)
{
    PyObject *keys, *items;
    if (!PyArg_ParseTuple(args, "OO:update", &keys, &items) ||
        skpy_each_pair(keys, items, SKPY_LOCK(self), add_pairs, MAP(self),
                       "HyperLogLogMap.update") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- groups --------------------------------------------------------------------- */

static PyObject *map_subscript(PyObject *self, PyObject *key)
{
    sk_hll_map_entry e;
    int64_t g = find(self, key, &e);
    if (g == -1)
        PyErr_SetObject(PyExc_KeyError, key);
    return g < 0 ? NULL : PyLong_FromUnsignedLongLong(e.estimate.count);
}

static PyObject *map_get(PyObject *self, PyObject *args)
{
    PyObject *key, *dflt = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:get", &key, &dflt))
        return NULL;
    sk_hll_map_entry e;
    int64_t g = find(self, key, &e);
    if (g == -2)
        return NULL;
    if (g == -1) {
        Py_INCREF(dflt);
        return dflt;
    }
    return PyLong_FromUnsignedLongLong(e.estimate.count);
}

static int map_contains(PyObject *self, PyObject *key)
{
    sk_hll_map_entry e;
    int64_t g = find(self, key, &e);
    return g == -2 ? -1 : g >= 0;
}

static Py_ssize_t map_length(PyObject *self)
{
    LOCK(self);
    size_t n = sk_hll_map_size(MAP(self));
    UNLOCK(self);
    return (Py_ssize_t)n;
}

static PyObject *map_estimate(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"key", "sigmas", NULL};
    PyObject *key;
    int sigmas = 2;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i:estimate", names, &key, &sigmas))
        return NULL;
    if (sigmas < 1 || sigmas > 3) {
        PyErr_SetString(PyExc_ValueError, "sigmas is 1, 2 or 3");
        return NULL;
    }
    sk_hll_map_entry e;
    int64_t g = find(self, key, &e);
    if (g == -1)
        PyErr_SetObject(PyExc_KeyError, key);
    if (g < 0)
        return NULL;
    return Py_BuildValue("(Kdd)", (unsigned long long)e.estimate.count,
                         e.estimate.lower[sigmas - 1], e.estimate.upper[sigmas - 1]);
}

/* The groups as a list of keys (what 'k'), counts ('v') or pairs ('i'):
 * a snapshot copied under the lock, the Python objects made after it, since
 * making them may run a finalizer that uses this map. */
static PyObject *listing(PyObject *self, char what)
{
    LOCK(self);
    size_t n = sk_hll_map_size(MAP(self)), bytes = 0;
    sk_hll_map_entry *e = malloc((n ? n : 1) * sizeof *e);
    for (size_t i = 0; e && i < n; i++) {
        sk_hll_map_get(MAP(self), i, &e[i]);
        bytes += e[i].key_len;
    }
    char *keys = e ? malloc(bytes ? bytes : 1) : NULL;
    for (size_t i = 0, at = 0; keys && i < n; at += e[i].key_len, i++) {
        memcpy(keys + at, e[i].key, e[i].key_len);
        e[i].key = keys + at;
    }
    UNLOCK(self);
    PyObject *list = keys ? PyList_New((Py_ssize_t)n) : PyErr_NoMemory();
    for (size_t i = 0; list && i < n; i++) {
        PyObject *key = what == 'v' ? NULL : key_str(&e[i]), *count = NULL, *x;
        if (what != 'k')
            count = PyLong_FromUnsignedLongLong(e[i].estimate.count);
        if (what == 'i') {
            x = key && count ? PyTuple_Pack(2, key, count) : NULL;
            Py_XDECREF(key);
            Py_XDECREF(count);
        } else {
            x = what == 'k' ? key : count;
        }
        if (!x)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, x);
    }
    free(keys);
    free(e);
    return list;
}

static PyObject *map_keys(PyObject *self, PyObject *unused)
{
    (void)unused;
    return listing(self, 'k');
}

static PyObject *map_values(PyObject *self, PyObject *unused)
{
    (void)unused;
    return listing(self, 'v');
}

static PyObject *map_items(PyObject *self, PyObject *unused)
{
    (void)unused;
    return listing(self, 'i');
}

static PyObject *map_iter(PyObject *self)
{
    PyObject *keys = listing(self, 'k');
    if (!keys)
        return NULL;
    PyObject *it = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return it;
}

static PyObject *map_sketch(PyObject *self, PyObject *key)
{
    map_key k;
    if (key_get(key, &k) < 0)
        return NULL;
    sk_hll *h = NULL;
    LOCK(self);
    int64_t g = sk_hll_map_find(MAP(self), k.item.data, k.item.len);
    int status = g >= 0 ? sk_hll_map_sketch(MAP(self), (size_t)g, &h) : SK_OK;
    UNLOCK(self);
    key_release(&k);
    if (g < 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLogMap.sketch");
    return skpy_hll_wrap(h);
}

/* ---- whole maps ----------------------------------------------------------------- */

static PyObject *map_merge(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &map_type))
        return PyErr_Format(PyExc_TypeError, "expected a HyperLogLogMap, not %.100s",
                            Py_TYPE(other)->tp_name);
    if (other == self)
        Py_RETURN_NONE;
    skpy_lock_pair(self, other);
    int status = sk_hll_map_merge(MAP(self), MAP(other));
    skpy_unlock_pair(self, other);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLogMap.merge");
    Py_RETURN_NONE;
}

static PyObject *map_merge_sketch(PyObject *self, PyObject *args)
{
    PyObject *key, *hll;
    sk_hll *h;
    map_key k;
    if (!PyArg_ParseTuple(args, "OO:merge_sketch", &key, &hll) || !(h = skpy_hll_of(hll)) ||
        key_get(key, &k) < 0)
        return NULL;
    /* The sketch's lock too: another thread may be adding to it. */
    skpy_lock_pair(self, hll);
    int status = sk_hll_map_merge_sketch(MAP(self), k.item.data, k.item.len, h);
    skpy_unlock_pair(self, hll);
    key_release(&k);
    if (status != SK_OK)
        return skpy_error(status, "HyperLogLogMap.merge_sketch");
    Py_RETURN_NONE;
}

static int save_file(const void *m, const char *path, int unused)
{
    (void)unused;
    return sk_hll_map_save(m, path);
}

static PyObject *map_save(PyObject *self, PyObject *path)
{
    return skpy_save(self, path, save_file, 0);
}

static int open_file(void **out, const char *path, int unused)
{
    (void)unused;
    sk_hll_map *m;
    int status = sk_hll_map_open(&m, path, NULL);
    if (status == SK_OK)
        *out = m;
    return status;
}

static PyObject *map_open(PyObject *cls, PyObject *path)
{
    return skpy_open(cls, path, open_file, 0);
}

/* ---- what it is ----------------------------------------------------------------- */

static PyObject *map_repr(PyObject *self)
{
    sk_hll_map_info info;
    if (skpy_info(self, &info) < 0)
        return NULL;
    return PyUnicode_FromFormat("HyperLogLogMap(precision=%u, groups=%zu)", info.precision,
                                info.groups);
}

static PyObject *get_field(PyObject *self, void *memory)
{
    sk_hll_map_info info;
    if (skpy_info(self, &info) < 0)
        return NULL;
    return memory ? PyLong_FromSize_t(info.memory) : PyLong_FromUnsignedLong(info.precision);
}

static PyMethodDef map_methods[] = {
    {"add", SKPY_FN(map_add), METH_VARARGS,
     "add(key, item) -> bool\n\nAdds item to the group of key (created empty if new); True "
     "if a register\nof its sketch changed."},
    {"update", SKPY_FN(map_update), METH_VARARGS,
     "update(keys, items) -> None\n\nAdds items[i] to the group of keys[i], for two "
     "iterables, numpy arrays or\npandas Series of one length (ValueError otherwise), in C; "
     "arrays are read\nwith the GIL released. A str key here is strict UTF-8 (give bytes "
     "for\nothers)."},
    {"get", SKPY_FN(map_get), METH_VARARGS,
     "get(key, default=None) -> int | default\n\nThe estimated distinct items of key's "
     "group, or default."},
    {"estimate", SKPY_FN(map_estimate), METH_VARARGS | METH_KEYWORDS,
     "estimate(key, sigmas=2) -> (int, float, float)\n\nThe group's count with lower and "
     "upper bounds at 1, 2 or 3 standard\nerrors, as HyperLogLog.estimate; KeyError if "
     "absent."},
    {"keys", SKPY_FN(map_keys), METH_NOARGS,
     "keys() -> list[str]\n\nThe keys, in the order they first came, decoded from UTF-8 "
     "with\nerrors='surrogateescape'."},
    {"values", SKPY_FN(map_values), METH_NOARGS, "values() -> list[int]\n\nThe groups' counts."},
    {"items", SKPY_FN(map_items), METH_NOARGS,
     "items() -> list[tuple[str, int]]\n\n(key, count) of every group, in the order keys "
     "first came."},
    {"sketch", SKPY_FN(map_sketch), METH_O,
     "sketch(key) -> HyperLogLog\n\nA copy of the group's sketch: the HyperLogLog of its "
     "items; KeyError if\nabsent."},
    {"merge", SKPY_FN(map_merge), METH_O,
     "merge(other) -> None\n\nEvery group of another map, of the same precision, into the "
     "group of the\nsame key."},
    {"merge_sketch", SKPY_FN(map_merge_sketch), METH_VARARGS,
     "merge_sketch(key, hll) -> None\n\nA HyperLogLog into key's group (created if new)."},
    {"clear", SKPY_FN(skpy_clear), METH_NOARGS,
     "clear() -> None\n\nRemoves every group; keeps the precision."},
    {"copy", SKPY_FN(skpy_copy), METH_NOARGS, "copy() -> HyperLogLogMap"},
    {"__copy__", SKPY_FN(skpy_copy), METH_NOARGS, NULL},
    {"__deepcopy__", SKPY_FN(skpy_deepcopy), METH_O, NULL},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, NULL},
    {"to_bytes", SKPY_FN(skpy_to_bytes), METH_NOARGS,
     "to_bytes() -> bytes\n\nThe map in sketch's group format (docs/hll-format.md), a "
     "group file's bytes."},
    {"from_bytes", SKPY_FN(skpy_from_bytes), METH_O | METH_CLASS,
     "from_bytes(data) -> HyperLogLogMap\n\nReads the group format; ValueError for bytes "
     "that are not a map."},
    {"save", SKPY_FN(map_save), METH_O,
     "save(path) -> None\n\nWrites a group file atomically, as `sketch count --by -o` does "
     "(read by\n`sketch hll count`, `merge`, `export`)."},
    {"open", SKPY_FN(map_open), METH_O | METH_CLASS,
     "open(path) -> HyperLogLogMap\n\nReads a group file of the command."},
    {NULL}};

static PyGetSetDef map_getset[] = {
    {"precision", get_field, NULL, "p: each group's sketch has 2**p registers", NULL},
    {"memory", get_field, NULL, "every byte the map holds (visits every group)", (void *)1},
    {NULL}};

static PyMappingMethods map_mapping = {.mp_length = map_length, .mp_subscript = map_subscript};
static PySequenceMethods map_sequence = {.sq_length = map_length, .sq_contains = map_contains};

static PyTypeObject map_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sketch.HyperLogLogMap",
    .tp_basicsize = sizeof(skpy_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "HyperLogLogMap(precision=14)\n\n"
              "A HyperLogLog per key: the distinct items of each group in one pass, as\n"
              "`sketch count --by` counts them, with memory that follows the data (a\n"
              "small group costs bytes). Reads like a dict from keys to counts: m[key],\n"
              "get, len, in, iteration, keys(), values(), items(); each group's sketch is\n"
              "the HyperLogLog of its items, byte for byte.\n\n"
              "Keys are bytes to the library. A str key stands for its UTF-8 (encoded\n"
              "with errors='surrogateescape'), bytes for themselves, numbers for their\n"
              "text; keys come back as str decoded from UTF-8 with\n"
              "errors='surrogateescape', so a key that is not UTF-8 goes round:\n"
              "key.encode('utf-8', 'surrogateescape') gives its bytes back, and the str\n"
              "itself finds its group.",
    .tp_new = map_new,
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = map_repr,
    .tp_as_mapping = &map_mapping,
    .tp_as_sequence = &map_sequence,
    .tp_iter = map_iter,
    .tp_methods = map_methods,
    .tp_getset = map_getset,
};

int skpy_add_hll_map(PyObject *module)
{
    return skpy_add_type(module, &map_type, &hll_map_family);
}
