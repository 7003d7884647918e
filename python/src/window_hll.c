/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_hll.c: the WindowHyperLogLog class, a thin shell over
 * sk_window_hll (sketch/window_hll.h): the distinct items of any window up
 * to a horizon ending at a time, from one sketch. Its bytes and files are
 * the library's, so the same adds make the same file as `sketch hll add
 * --time` and the same string as the module's WHLL.EXPORT.
 */
#include "common.h"

#include "sketch/hll.h"
#include "sketch/window_hll.h"

SKPY_FAMILY(window_hll, "WindowHyperLogLog");

static PyTypeObject window_hll_type;

#define WH(o) ((sk_window_hll *)SKPY_OBJ(o))
#define LOCK(self) skpy_lock_enter(SKPY_LOCK(self))
#define UNLOCK(self) skpy_lock_leave(SKPY_LOCK(self))

static PyObject *window_hll_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"horizon", "resolution", "precision", "max_memory", NULL};
    PyObject *arg[4] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO$O:WindowHyperLogLog", names, &arg[0],
                                     &arg[1], &arg[2], &arg[3]))
        return NULL;
    uint64_t v[4] = {0, 1, SK_HLL_DEFAULT_PRECISION, 0};
    static const uint64_t max[4] = {UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT64_MAX};
    for (int i = 0; i < 4; i++)
        if (arg[i] && skpy_uint_arg(arg[i], names[i], max[i], &v[i]) < 0)
            return NULL;
    /* 0 would take the library's defaults: here it is a mistake. */
    if (v[0] == 0 || v[1] == 0 || v[2] == 0)
        return PyErr_Format(PyExc_ValueError, "WindowHyperLogLog: %s must be positive",
                            v[0] == 0 ? "horizon" : v[1] == 0 ? "resolution" : "precision");
    if (v[2] < SK_HLL_MIN_PRECISION || v[2] > SK_HLL_MAX_PRECISION)
        return PyErr_Format(PyExc_ValueError, "WindowHyperLogLog: precision must be from %d to %d",
                            SK_HLL_MIN_PRECISION, SK_HLL_MAX_PRECISION);
    sk_window_hll_options o = {.horizon = v[0], .resolution = v[1], .precision = (unsigned)v[2],
                               .max_memory = v[3]};
    sk_window_hll *w;
    int status = sk_window_hll_create(&w, &o);
    if (status != SK_OK)
        return skpy_error(status, "WindowHyperLogLog: the horizon is at most 2**24 resolutions");
    return skpy_object_new(type, w, &window_hll_family);
}

/* ---- adds ------------------------------------------------------------------------ */

static int time_arg(PyObject *obj, const char *name, uint64_t *out)
{
    return skpy_uint_arg(obj, name, SK_WINDOW_HLL_MAX_TIME, out);
}

static PyObject *window_hll_add(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"item", "time", NULL};
    PyObject *item, *time_obj;
    uint64_t time;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:add", names, &item, &time_obj) ||
        time_arg(time_obj, "time", &time) < 0)
        return NULL;
    skpy_item it;
    if (skpy_item_get(item, &it) < 0)
        return NULL;
    LOCK(self);
    int status = sk_window_hll_add(WH(self), it.data, it.len, time);
    UNLOCK(self);
    skpy_item_release(&it);
    if (status < 0)
        return skpy_error(status, "WindowHyperLogLog.add");
    return PyBool_FromLong(status);
}

struct timed {
    sk_window_hll *w;
    uint64_t time;
};

static int add_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    struct timed *t = ctx;
    for (size_t i = 0; i < n; i++) {
        int status = sk_window_hll_add(t->w, items[i], lens[i], t->time);
        if (status < 0)
            return status;
    }
    return SK_OK;
}

static PyObject *window_hll_update(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"items", "time", NULL};
    PyObject *items, *time_obj;
    struct timed t = {.w = WH(self)};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:update", names, &items, &time_obj) ||
        time_arg(time_obj, "time", &t.time) < 0)
        return NULL;
    if (skpy_each_batch(items, SKPY_LOCK(self), add_batch, &t, "WindowHyperLogLog.update") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- windows ----------------------------------------------------------------------- */

/* The window and its end, checked with messages that say what is wrong
 * (the library's SK_EINVAL would not say which); the lock is held. */
static int window_args(PyObject *self, PyObject *now_obj, const uint64_t *window, uint64_t *now,
                       const char *method)
{
    sk_window_hll_info info;
    sk_window_hll_get_info(WH(self), &info);
    if (*window == 0 || *window > info.horizon) {
        PyErr_Format(PyExc_ValueError,
                     "WindowHyperLogLog.%s: window must be from 1 to the horizon, %llu, not %llu",
                     method, (unsigned long long)info.horizon, (unsigned long long)*window);
        return -1;
    }
    if (now_obj == NULL || now_obj == Py_None) {
        *now = info.newest;
        return 0;
    }
    if (!info.empty && *now / info.resolution < info.newest / info.resolution) {
        PyErr_Format(PyExc_ValueError,
                     "WindowHyperLogLog.%s: now (%llu) is before the newest time added (%llu): "
                     "a window sketch counts only the windows that end at or after it",
                     method, (unsigned long long)*now, (unsigned long long)info.newest);
        return -1;
    }
    return 0;
}

/* Parses (window, now=None) outside the lock; the checks against the
 * sketch are window_args's, under it. */
static int parse_window(PyObject *args, PyObject *kwargs, const char *format, uint64_t *window,
                        uint64_t *now, PyObject **now_obj)
{
    static char *names[] = {"window", "now", NULL};
    PyObject *window_obj;
    *now_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, names, &window_obj, now_obj) ||
        skpy_uint_arg(window_obj, "window", UINT64_MAX, window) < 0)
        return -1;
    *now = 0;
    if (*now_obj && *now_obj != Py_None && time_arg(*now_obj, "now", now) < 0)
        return -1;
    return 0;
}

static PyObject *window_hll_count(PyObject *self, PyObject *args, PyObject *kwargs)
{
    uint64_t window, now, n = 0;
    PyObject *now_obj;
    if (parse_window(args, kwargs, "O|O:count", &window, &now, &now_obj) < 0)
        return NULL;
    LOCK(self);
    int status = window_args(self, now_obj, &window, &now, "count");
    if (status == 0)
        status = sk_window_hll_count(WH(self), window, now, &n);
    UNLOCK(self);
    if (status < 0)
        return PyErr_Occurred() ? NULL : skpy_error(status, "WindowHyperLogLog.count");
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *window_hll_snapshot(PyObject *self, PyObject *args, PyObject *kwargs)
{
    uint64_t window, now;
    PyObject *now_obj;
    if (parse_window(args, kwargs, "O|O:snapshot", &window, &now, &now_obj) < 0)
        return NULL;
    sk_window_hll_info info;
    if (skpy_info(self, &info) < 0)
        return NULL;
    sk_hll *h;
    sk_hll_options o = {.precision = info.precision};
    int status = sk_hll_create(&h, &o);
    if (status != SK_OK)
        return skpy_error(status, "WindowHyperLogLog.snapshot");
    LOCK(self);
    status = window_args(self, now_obj, &window, &now, "snapshot");
    if (status == 0)
        status = sk_window_hll_snapshot(WH(self), window, now, h);
    UNLOCK(self);
    if (status < 0) {
        sk_hll_free(h);
        return PyErr_Occurred() ? NULL : skpy_error(status, "WindowHyperLogLog.snapshot");
    }
    return skpy_hll_wrap(h);
}

static PyObject *window_hll_merge(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &window_hll_type))
        return PyErr_Format(PyExc_TypeError, "expected a WindowHyperLogLog, not %.100s",
                            Py_TYPE(other)->tp_name);
    if (other == self)
        Py_RETURN_NONE;
    skpy_lock_pair(self, other);
    int status = sk_window_hll_merge(WH(self), WH(other));
    skpy_unlock_pair(self, other);
    if (status != SK_OK)
        return skpy_error(status, "WindowHyperLogLog.merge (the same precision, horizon and "
                                  "resolution)");
    Py_RETURN_NONE;
}

static PyObject *window_hll_set_max_memory(PyObject *self, PyObject *arg)
{
    uint64_t bytes;
    if (skpy_uint_arg(arg, "bytes", UINT64_MAX, &bytes) < 0)
        return NULL;
    LOCK(self);
    sk_window_hll_set_max_memory(WH(self), bytes);
    UNLOCK(self);
    Py_RETURN_NONE;
}

/* ---- files -------------------------------------------------------------------------- */

static int save_file(const void *w, const char *path, int unused)
{
    (void)unused;
    return sk_window_hll_save(w, path);
}

static PyObject *window_hll_save(PyObject *self, PyObject *path)
{
    return skpy_save(self, path, save_file, 0);
}

static int open_file(void **out, const char *path, int unused)
{
    (void)unused;
    sk_window_hll *w;
    int status = sk_window_hll_open(&w, path, NULL);
    if (status == SK_OK)
        *out = w;
    return status;
}

static PyObject *window_hll_open(PyObject *cls, PyObject *path)
{
    return skpy_open(cls, path, open_file, 0);
}

/* ---- what it is ------------------------------------------------------------------------ */

static PyObject *window_hll_repr(PyObject *self)
{
    sk_window_hll_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    if (i.empty)
        return PyUnicode_FromFormat("WindowHyperLogLog(horizon=%llu, resolution=%llu, "
                                    "precision=%u, empty)",
                                    (unsigned long long)i.horizon,
                                    (unsigned long long)i.resolution, i.precision);
    return PyUnicode_FromFormat("WindowHyperLogLog(horizon=%llu, resolution=%llu, precision=%u, "
                                "newest=%llu, pairs=%llu)",
                                (unsigned long long)i.horizon, (unsigned long long)i.resolution,
                                i.precision, (unsigned long long)i.newest,
                                (unsigned long long)i.pairs);
}

enum field { F_PRECISION, F_HORIZON, F_RESOLUTION, F_NEWEST, F_PAIRS, F_MEMORY };

static PyObject *get_field(PyObject *self, void *which)
{
    sk_window_hll_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((enum field)(intptr_t)which) {
    case F_PRECISION: return PyLong_FromUnsignedLong(i.precision);
    case F_HORIZON: return PyLong_FromUnsignedLongLong(i.horizon);
    case F_RESOLUTION: return PyLong_FromUnsignedLongLong(i.resolution);
    case F_NEWEST:
        if (i.empty)
            Py_RETURN_NONE;
        return PyLong_FromUnsignedLongLong(i.newest);
    case F_PAIRS: return PyLong_FromUnsignedLongLong(i.pairs);
    default: return PyLong_FromSize_t(i.memory);
    }
}

static PyMethodDef window_hll_methods[] = {
    {"add", SKPY_FN(window_hll_add), METH_VARARGS | METH_KEYWORDS,
     "add(item, time) -> bool\n\nAdds one item (str, bytes-like, int, float or bool) seen at time (an\n"
     "int in the sketch's unit); True if some window's count may have changed.\n"
     "An item older than the horizon before the newest time is dropped (False)."},
    {"update", SKPY_FN(window_hll_update), METH_VARARGS | METH_KEYWORDS,
     "update(items, time) -> None\n\nAdds every item of an iterable, a numpy array or a pandas "
     "Series, all at\nthe same time, in C (the GIL released for arrays)."},
    {"count", SKPY_FN(window_hll_count), METH_VARARGS | METH_KEYWORDS,
     "count(window, now=None) -> int\n\nThe distinct items of the last `window` time units (1 to "
     "the horizon)\nending at now (default: the newest time added): the slots\n"
     "now // resolution back over ceil(window / resolution) slots. ValueError for\n"
     "a now before the newest time added or a window out of range."},
    {"snapshot", SKPY_FN(window_hll_snapshot), METH_VARARGS | METH_KEYWORDS,
     "snapshot(window, now=None) -> HyperLogLog\n\nThe same window as a plain HyperLogLog of the "
     "same precision: the\nregisters its items would have set (its count() is count()'s)."},
    {"merge", window_hll_merge, METH_O,
     "merge(other) -> None\n\nBecomes the union of both streams (the same precision, horizon and\n"
     "resolution, else ValueError)."},
    {"set_max_memory", window_hll_set_max_memory, METH_O,
     "set_max_memory(bytes) -> None\n\nThe budget adds are held to from now on (0: none)."},
    {"clear", skpy_clear, METH_NOARGS,
     "clear() -> None\n\nForgets every item; keeps the horizon, resolution and precision."},
    {"copy", skpy_copy, METH_NOARGS, "copy() -> WindowHyperLogLog\n\nAn independent copy."},
    {"__copy__", skpy_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", skpy_deepcopy, METH_O, "An independent copy."},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, "Pickles through to_bytes."},
    {"to_bytes", skpy_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe sketch in the library's format (docs/window-hll-format.md), as "
     "the\nmodule's WHLL.EXPORT gives it."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> WindowHyperLogLog\n\nReads what to_bytes wrote; ValueError for any "
     "other bytes. The sketch has\nno memory budget (see set_max_memory)."},
    {"save", window_hll_save, METH_O,
     "save(path) -> None\n\nWrites the file atomically, as `sketch hll add --time` does."},
    {"open", window_hll_open, METH_O | METH_CLASS,
     "open(path) -> WindowHyperLogLog\n\nReads a window sketch file (of `sketch hll add --time` "
     "or save())."},
    {NULL}};

#define FIELD(name, which, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(which)}

static PyGetSetDef window_hll_getset[] = {
    FIELD("precision", F_PRECISION, "p: a window's HyperLogLog has 2**p registers"),
    FIELD("horizon", F_HORIZON, "the longest window, in time units"),
    FIELD("resolution", F_RESOLUTION, "time units a slot"),
    FIELD("newest", F_NEWEST, "the start of the newest time's slot (None when empty)"),
    FIELD("pairs", F_PAIRS, "(time, rank) pairs held, some possibly expired"),
    FIELD("memory", F_MEMORY, "every byte the sketch holds"),
    {NULL}};

static PyTypeObject window_hll_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sketch.WindowHyperLogLog",
    .tp_basicsize = sizeof(skpy_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "WindowHyperLogLog(horizon, resolution=1, precision=14, *, max_memory=0)\n\n"
              "A sliding-window HyperLogLog: the distinct items whose times fall in the\n"
              "last w time units, for any w up to horizon, in slots of resolution units.\n"
              "Times are ints in the caller's unit (seconds, milliseconds). A window's\n"
              "count is the plain HyperLogLog's of its items (the same error);\n"
              "max_memory (bytes, 0: none) bounds the sketch.",
    .tp_new = window_hll_new,
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = window_hll_repr,
    .tp_methods = window_hll_methods,
    .tp_getset = window_hll_getset,
};

int skpy_add_window_hll(PyObject *module)
{
    return skpy_add_type(module, &window_hll_type, &window_hll_family);
}
