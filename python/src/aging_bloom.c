/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aging_bloom.c: the AgingBloomFilter class, a thin shell over
 * sk_aging_bloom (sketch/aging_bloom.h): "was this item added within the
 * last capacity adds" (window 0) or "within the last `window` time units",
 * at a false-positive rate that holds at every moment, older items
 * forgotten. Its bytes are the library's, as the module's ABF.EXPORT
 * gives them.
 */
#include "common.h"

#include "sketch/aging_bloom.h"

SKPY_FAMILY(aging_bloom, "AgingBloomFilter");

static PyTypeObject aging_bloom_type;

#define ABF(o) ((sk_aging_bloom *)SKPY_OBJ(o))
#define LOCK(self) skpy_lock_enter(SKPY_LOCK(self))
#define UNLOCK(self) skpy_lock_leave(SKPY_LOCK(self))
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)

static PyObject *aging_bloom_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"capacity", "fp_rate", "window", "generations", "max_memory", NULL};
    PyObject *capacity_obj, *window_obj = NULL, *generations_obj = NULL, *budget_obj = NULL;
    double fp_rate = SK_BLOOM_DEFAULT_FP_RATE;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|dOO$O:AgingBloomFilter", names,
                                     &capacity_obj, &fp_rate, &window_obj, &generations_obj,
                                     &budget_obj))
        return NULL;
    uint64_t capacity, window = 0, generations = SK_AGING_BLOOM_DEFAULT_GENERATIONS, budget = 0;
    if (skpy_uint_arg(capacity_obj, "capacity", UINT64_MAX, &capacity) < 0 ||
        (window_obj && skpy_uint_arg(window_obj, "window", UINT64_MAX, &window) < 0) ||
        (generations_obj &&
         skpy_uint_arg(generations_obj, "generations", UINT32_MAX, &generations) < 0) ||
        (budget_obj && skpy_uint_arg(budget_obj, "max_memory", UINT64_MAX, &budget) < 0))
        return NULL;
    /* The library reads 0 as "the default": here each is a mistake. */
    if (capacity == 0)
        return PyErr_Format(PyExc_ValueError, "AgingBloomFilter: capacity must be positive");
    if (generations < SK_AGING_BLOOM_MIN_GENERATIONS ||
        generations > SK_AGING_BLOOM_MAX_GENERATIONS)
        return PyErr_Format(PyExc_ValueError, "AgingBloomFilter: generations must be from %d to %d",
                            SK_AGING_BLOOM_MIN_GENERATIONS, SK_AGING_BLOOM_MAX_GENERATIONS);
    if (!(fp_rate > 0 && fp_rate <= SK_BLOOM_MAX_FP_RATE))
        return PyErr_Format(PyExc_ValueError, "AgingBloomFilter: fp_rate must be above 0 and at "
                            "most " TEXT(SK_BLOOM_MAX_FP_RATE));
    sk_aging_bloom_options o = {.capacity = capacity, .fp_rate = fp_rate,
                                .generations = (unsigned)generations, .window = window,
                                .max_memory = budget};
    sk_aging_bloom *f;
    int status = sk_aging_bloom_create(&f, &o);
    if (status != SK_OK)
        return skpy_error(status, "AgingBloomFilter");
    return skpy_object_new(type, f, &aging_bloom_family);
}

/* ---- items ------------------------------------------------------------------------ */

/* (item, now=0) of add() and contains(). */
static int item_args(PyObject *args, PyObject *kwargs, const char *format, skpy_item *it,
                     uint64_t *now)
{
    static char *names[] = {"item", "now", NULL};
    PyObject *item, *now_obj = NULL;
    *now = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, names, &item, &now_obj) ||
        (now_obj && skpy_uint_arg(now_obj, "now", UINT64_MAX, now) < 0))
        return -1;
    return skpy_item_get(item, it);
}

static PyObject *add_error(int status, const char *what)
{
    if (status == SK_EFULL)
        return PyErr_Format(PyExc_ValueError, "%s: a generation can grow no more (a burst past "
                            "the limits of its chain of filters)", what);
    return skpy_error(status, what);
}

static PyObject *aging_bloom_add(PyObject *self, PyObject *args, PyObject *kwargs)
{
    skpy_item it;
    uint64_t now;
    if (item_args(args, kwargs, "O|O:add", &it, &now) < 0)
        return NULL;
    LOCK(self);
    int status = sk_aging_bloom_add(ABF(self), it.data, it.len, now);
    UNLOCK(self);
    skpy_item_release(&it);
    if (status < 0)
        return add_error(status, "AgingBloomFilter.add");
    return PyBool_FromLong(status);
}

static PyObject *aging_bloom_contains(PyObject *self, PyObject *args, PyObject *kwargs)
{
    skpy_item it;
    uint64_t now;
    if (item_args(args, kwargs, "O|O:contains", &it, &now) < 0)
        return NULL;
    LOCK(self);
    int status = sk_aging_bloom_contains(ABF(self), it.data, it.len, now);
    UNLOCK(self);
    skpy_item_release(&it);
    if (status < 0)
        return skpy_error(status, "AgingBloomFilter.contains");
    return PyBool_FromLong(status);
}

/* `item in f`: at time 0, which the library reads as the newest add's. */
static int aging_bloom_sq_contains(PyObject *self, PyObject *item)
{
    skpy_item it;
    if (skpy_item_get(item, &it) < 0)
        return -1;
    LOCK(self);
    int status = sk_aging_bloom_contains(ABF(self), it.data, it.len, 0);
    UNLOCK(self);
    skpy_item_release(&it);
    if (status < 0) {
        skpy_error(status, "AgingBloomFilter.__contains__");
        return -1;
    }
    return status;
}

/* ---- many items --------------------------------------------------------------------- */

struct many {
    sk_aging_bloom *f;
    uint64_t now, added;
};

static int add_batch(void *ctx, const void *const *items, const size_t *lens, size_t n)
{
    struct many *m = ctx;
    for (size_t i = 0; i < n; i++) {
        int status = sk_aging_bloom_add(m->f, items[i], lens[i], m->now);
        if (status < 0)
            return status;
        m->added += (uint64_t)status;
    }
    return SK_OK;
}

static int contains_batch(void *ctx, const void *const *items, const size_t *lens, size_t n,
                          uint8_t *answers)
{
    struct many *m = ctx;
    for (size_t i = 0; i < n; i++) {
        int status = sk_aging_bloom_contains(m->f, items[i], lens[i], m->now);
        if (status < 0)
            return status;
        answers[i] = (uint8_t)status;
    }
    return SK_OK;
}

/* (items, now=0) of update() and contains_many(). */
static int many_args(PyObject *self, PyObject *args, PyObject *kwargs, const char *format,
                     PyObject **items, struct many *m)
{
    static char *names[] = {"items", "now", NULL};
    PyObject *now_obj = NULL;
    *m = (struct many){.f = ABF(self)};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, names, items, &now_obj) ||
        (now_obj && skpy_uint_arg(now_obj, "now", UINT64_MAX, &m->now) < 0))
        return -1;
    return 0;
}

static PyObject *aging_bloom_update(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *items;
    struct many m;
    if (many_args(self, args, kwargs, "O|O:update", &items, &m) < 0)
        return NULL;
    if (skpy_each_batch(items, SKPY_LOCK(self), add_batch, &m, "AgingBloomFilter.update") < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(m.added);
}

static PyObject *aging_bloom_contains_many(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *items;
    struct many m;
    if (many_args(self, args, kwargs, "O|O:contains_many", &items, &m) < 0)
        return NULL;
    return skpy_query_many(items, SKPY_LOCK(self), contains_batch, &m,
                           "AgingBloomFilter.contains_many");
}

/* ---- whole filters --------------------------------------------------------------------- */

static PyObject *aging_bloom_merge(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &aging_bloom_type))
        return PyErr_Format(PyExc_TypeError, "expected an AgingBloomFilter, not %.100s",
                            Py_TYPE(other)->tp_name);
    if (other == self)
        Py_RETURN_NONE;
    skpy_lock_pair(self, other);
    int status = sk_aging_bloom_merge(ABF(self), ABF(other));
    skpy_unlock_pair(self, other);
    if (status != SK_OK)
        return skpy_error(status, "AgingBloomFilter.merge (filters of the same sizes and time "
                                  "window; count windows do not merge)");
    Py_RETURN_NONE;
}

static PyObject *aging_bloom_set_max_memory(PyObject *self, PyObject *arg)
{
    uint64_t bytes;
    if (skpy_uint_arg(arg, "bytes", UINT64_MAX, &bytes) < 0)
        return NULL;
    LOCK(self);
    sk_aging_bloom_set_max_memory(ABF(self), bytes);
    UNLOCK(self);
    Py_RETURN_NONE;
}

static int save_file(const void *f, const char *path, int unused)
{
    (void)unused;
    return sk_aging_bloom_save(f, path);
}

static PyObject *aging_bloom_save(PyObject *self, PyObject *path)
{
    return skpy_save(self, path, save_file, 0);
}

static int open_file(void **out, const char *path, int unused)
{
    (void)unused;
    sk_aging_bloom *f;
    int status = sk_aging_bloom_open(&f, path, NULL);
    if (status == SK_OK)
        *out = f;
    return status;
}

static PyObject *aging_bloom_open(PyObject *cls, PyObject *path)
{
    return skpy_open(cls, path, open_file, 0);
}

/* ---- what it is -------------------------------------------------------------------------- */

static PyObject *aging_bloom_repr(PyObject *self)
{
    sk_aging_bloom_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    /* %R of a float: PyUnicode_FromFormat has no %g. */
    PyObject *rate = PyFloat_FromDouble(i.fp_rate);
    if (!rate)
        return NULL;
    PyObject *out = PyUnicode_FromFormat("AgingBloomFilter(capacity=%llu, fp_rate=%R, window=%llu, "
                                         "generations=%u, count=%llu)",
                                         (unsigned long long)i.capacity, rate,
                                         (unsigned long long)i.window, i.generations,
                                         (unsigned long long)i.count);
    Py_DECREF(rate);
    return out;
}

enum field { F_CAPACITY, F_FP_RATE, F_GENERATIONS, F_WINDOW, F_SPAN, F_NEWEST, F_COUNT, F_MEMORY };

static PyObject *get_field(PyObject *self, void *which)
{
    sk_aging_bloom_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((enum field)(intptr_t)which) {
    case F_CAPACITY: return PyLong_FromUnsignedLongLong(i.capacity);
    case F_FP_RATE: return PyFloat_FromDouble(i.fp_rate);
    case F_GENERATIONS: return PyLong_FromUnsignedLong(i.generations);
    case F_WINDOW: return PyLong_FromUnsignedLongLong(i.window);
    case F_SPAN: return PyLong_FromUnsignedLongLong(i.span);
    case F_NEWEST: return PyLong_FromUnsignedLongLong(i.newest);
    case F_COUNT: return PyLong_FromUnsignedLongLong(i.count);
    default: return PyLong_FromSize_t(i.memory);
    }
}

static PyMethodDef aging_bloom_methods[] = {
    {"add", SKPY_FN(aging_bloom_add), METH_VARARGS | METH_KEYWORDS,
     "add(item, now=0) -> bool\n\nAdds item (str, bytes-like, int, float or bool) at time now (a "
     "time window's\nunit; a count window ignores it): True if it was in no generation held\n"
     "before. An item older than the generations held is forgotten at once (False)."},
    {"contains", SKPY_FN(aging_bloom_contains), METH_VARARGS | METH_KEYWORDS,
     "contains(item, now=0) -> bool\n\nTrue if item may have been added within the window ending "
     "at now (a time\nbefore the newest add's counts as the newest's), False if certainly not.\n"
     "`item in f` is f.contains(item): at the newest add's time."},
    {"update", SKPY_FN(aging_bloom_update), METH_VARARGS | METH_KEYWORDS,
     "update(items, now=0) -> int\n\nadd() of every item of an iterable, numpy array or pandas "
     "Series, all at\nnow, in C: how many were new."},
    {"contains_many", SKPY_FN(aging_bloom_contains_many), METH_VARARGS | METH_KEYWORDS,
     "contains_many(items, now=0) -> list[bool] | numpy.ndarray\n\ncontains() of every item: a "
     "list for an iterable, a numpy bool array for\nan array or pandas Series."},
    {"merge", aging_bloom_merge, METH_O,
     "merge(other) -> None\n\nBecomes the union of both filters: the same capacity, rate, "
     "generations\nand time window (count windows, whose generations are not aligned in\n"
     "time, do not merge: ValueError)."},
    {"set_max_memory", aging_bloom_set_max_memory, METH_O,
     "set_max_memory(bytes) -> None\n\nThe budget adds are held to from now on (0: none)."},
    {"clear", skpy_clear, METH_NOARGS, "clear() -> None\n\nForgets every item; keeps the sizes."},
    {"copy", skpy_copy, METH_NOARGS, "copy() -> AgingBloomFilter\n\nAn independent copy."},
    {"__copy__", skpy_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", skpy_deepcopy, METH_O, "An independent copy."},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, "Pickles through to_bytes."},
    {"to_bytes", skpy_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe filter in the library's format (docs/aging-bloom.md), as the "
     "module's\nABF.EXPORT gives it."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> AgingBloomFilter\n\nReads what to_bytes wrote; ValueError for any other "
     "bytes. The filter has\nno memory budget (see set_max_memory)."},
    {"save", aging_bloom_save, METH_O,
     "save(path) -> None\n\nWrites the filter's bytes to a file atomically."},
    {"open", aging_bloom_open, METH_O | METH_CLASS,
     "open(path) -> AgingBloomFilter\n\nReads a file that save() wrote."},
    {NULL}};

#define FIELD(name, which, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(which)}

static PyGetSetDef aging_bloom_getset[] = {
    FIELD("capacity", F_CAPACITY, "items a window holds at fp_rate"),
    FIELD("fp_rate", F_FP_RATE, "the false-positive rate of the whole filter"),
    FIELD("generations", F_GENERATIONS, "the Bloom filters of the ring"),
    FIELD("window", F_WINDOW, "time units of the window; 0: the last capacity adds"),
    FIELD("span", F_SPAN, "adds, or time units, a generation is the newest"),
    FIELD("newest", F_NEWEST, "count window: adds so far; time window: the newest generation's "
                              "start"),
    FIELD("count", F_COUNT, "items whose add set a bit, in the generations held"),
    FIELD("memory", F_MEMORY, "every byte the filter holds"),
    {NULL}};

static PySequenceMethods aging_bloom_sequence = {.sq_contains = aging_bloom_sq_contains};

static PyTypeObject aging_bloom_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sketch.AgingBloomFilter",
    .tp_basicsize = sizeof(skpy_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "AgingBloomFilter(capacity, fp_rate=0.01, window=0, generations=4, *, max_memory=0)"
              "\n\nAn aging Bloom filter: was this item added within the last capacity adds\n"
              "(window=0), or within the last `window` time units (the caller's ints), at\n"
              "a false-positive rate that holds at every moment. A ring of generations\n"
              "(2 to 64) never forgets an item inside its window and forgets it before\n"
              "generations / (generations - 1) windows (docs/aging-bloom.md says when).\n"
              "max_memory (bytes, 0: none) bounds the filter.",
    .tp_new = aging_bloom_new,
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = aging_bloom_repr,
    .tp_as_sequence = &aging_bloom_sequence,
    .tp_methods = aging_bloom_methods,
    .tp_getset = aging_bloom_getset,
};

int skpy_add_aging_bloom(PyObject *module)
{
    return skpy_add_type(module, &aging_bloom_type, &aging_bloom_family);
}
