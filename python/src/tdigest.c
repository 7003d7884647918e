/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest.c: the TDigest class, a thin shell over sk_tdigest
 * (sketch/tdigest.h, sketch/tdigest_extra.h): quantiles, ranks and the
 * CDF of a stream of numbers, step for step RedisBloom's TDIGEST.* (the
 * Redis module's td_commands.c and td_reads.c map the same calls).
 *
 * A digest's items are numbers, not hashed items: they come through its
 * own reader (tdigest_values.c), not the item reader of common.h.
 */
#include "common.h"
#include "sketch/tdigest.h"
#include "sketch/tdigest_extra.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

SKPY_FAMILY(tdigest, "TDigest");

static PyTypeObject tdigest_type;

#define TD(o) ((sk_tdigest *)SKPY_OBJ(o))
#define LOCK(o) SKPY_LOCK(o)

/* The numbers of obj (tdigest_values.c): a new array of *n doubles, to
 * free(); NULL with an exception. */
double *skpy_tdigest_values(PyObject *obj, size_t *n);

/* ---- the object ------------------------------------------------------------------ */

static PyObject *tdigest_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"compression", "max_memory", NULL};
    PyObject *c_obj = NULL, *m_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$O:TDigest", kwlist, &c_obj, &m_obj))
        return NULL;
    uint64_t compression = SK_TDIGEST_DEFAULT_COMPRESSION, budget = 0;
    if ((c_obj && skpy_uint_arg(c_obj, "compression", UINT32_MAX, &compression) < 0) ||
        (m_obj && skpy_uint_arg(m_obj, "max_memory", UINT64_MAX, &budget) < 0))
        return NULL;
    sk_tdigest_options o = {.compression = (uint32_t)compression, .max_memory = budget};
    sk_tdigest *t;
    int rc = sk_tdigest_create(&t, &o);
    if (rc != SK_OK)
        return skpy_error(rc, "TDigest");
    return skpy_object_new(type, t, &tdigest_family);
}

/* ---- adding ---------------------------------------------------------------------- */

static PyObject *tdigest_add(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"value", "weight", NULL};
    double value;
    PyObject *w_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "d|O:add", kwlist, &value, &w_obj))
        return NULL;
    uint64_t weight = 1;
    if (w_obj && skpy_uint_arg(w_obj, "weight", UINT64_MAX, &weight) < 0)
        return NULL;
    skpy_lock_enter(LOCK(self));
    int rc = sk_tdigest_add(TD(self), value, weight);
    skpy_lock_leave(LOCK(self));
    if (rc != SK_OK)
        return skpy_error(rc, "TDigest.add: a finite value, a weight of at least 1");
    Py_RETURN_NONE;
}

static PyObject *tdigest_update(PyObject *self, PyObject *obj)
{
    size_t n;
    double *v = skpy_tdigest_values(obj, &n);
    if (!v)
        return NULL;
    int rc = SK_OK;
    size_t bad = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Every value is checked before any is added, as TDIGEST.ADD checks. */
    while (bad < n && isfinite(v[bad]))
        bad++;
    Py_END_ALLOW_THREADS
    if (bad < n) {
        free(v);
        return skpy_error(SK_EINVAL, "TDigest.update: a value is NaN or infinite");
    }
    skpy_lock_enter(LOCK(self));
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n && rc == SK_OK; i++)
        rc = sk_tdigest_add(TD(self), v[i], 1);
    Py_END_ALLOW_THREADS
    skpy_lock_leave(LOCK(self));
    free(v);
    if (rc != SK_OK)
        return skpy_error(rc, "TDigest.update");
    Py_RETURN_NONE;
}

static PyObject *tdigest_merge(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &tdigest_type))
        return PyErr_Format(PyExc_TypeError, "merge() takes a TDigest, not %.100s",
                            Py_TYPE(other)->tp_name);
    int rc;
    if (other == self) {
        /* The library reads src while it adds to dst: a digest merged into
         * itself is merged from a copy. */
        sk_tdigest *copy = NULL;
        skpy_lock_enter(LOCK(self));
        rc = sk_tdigest_copy(&copy, TD(self));
        if (rc == SK_OK)
            rc = sk_tdigest_merge(TD(self), copy);
        skpy_lock_leave(LOCK(self));
        sk_tdigest_free(copy);
    } else {
        skpy_lock_pair(self, other);
        Py_BEGIN_ALLOW_THREADS
        rc = sk_tdigest_merge(TD(self), TD(other));
        Py_END_ALLOW_THREADS
        skpy_unlock_pair(self, other);
    }
    if (rc != SK_OK)
        return skpy_error(rc, "TDigest.merge");
    Py_RETURN_NONE;
}

static PyObject *tdigest_compress(PyObject *self, PyObject *unused)
{
    (void)unused;
    skpy_lock_enter(LOCK(self));
    int rc = sk_tdigest_compress(TD(self));
    skpy_lock_leave(LOCK(self));
    if (rc < 0)
        return skpy_error(rc, "TDigest.compress");
    return PyBool_FromLong(rc);
}

/* ---- reads ----------------------------------------------------------------------- */

/* The reads of many numbers in one shape: f(t, in, out, n, reverse). */
enum read_kind { READ_QUANTILE, READ_CDF, READ_RANK, READ_BY_RANK };

static int run_read(PyObject *self, enum read_kind kind, const void *in, void *out, size_t n,
                    int reverse)
{
    int rc;
    skpy_lock_enter(LOCK(self));
    Py_BEGIN_ALLOW_THREADS
    switch (kind) {
    case READ_QUANTILE: rc = sk_tdigest_quantiles(TD(self), in, out, n); break;
    case READ_CDF: rc = sk_tdigest_cdf(TD(self), in, out, n); break;
    case READ_RANK: rc = sk_tdigest_rank(TD(self), in, out, n, reverse); break;
    default: rc = sk_tdigest_by_rank(TD(self), in, out, n, reverse); break;
    }
    Py_END_ALLOW_THREADS
    skpy_lock_leave(LOCK(self));
    return rc;
}

static const char *const read_names[] = {"TDigest.quantile: fractions in [0, 1]", "TDigest.cdf",
                                         "TDigest.rank", "TDigest.by_rank: ranks >= 0"};

/* One argument (many: an iterable) through the read; answers of ranks are
 * ints, the others floats. */
static PyObject *read_many(PyObject *self, PyObject *obj, enum read_kind kind, int reverse)
{
    double *v = NULL;
    int64_t *ranks = NULL;
    size_t n;
    if (kind == READ_BY_RANK) {
        PyObject *seq = PySequence_Fast(obj, "expected an iterable of ranks");
        if (!seq)
            return NULL;
        n = (size_t)PySequence_Fast_GET_SIZE(seq);
        ranks = PyMem_Malloc(n ? n * sizeof *ranks : 1);
        for (size_t i = 0; ranks && i < n; i++) {
            /* Held: an __index__ may change the list. */
            PyObject *item = i < (size_t)PySequence_Fast_GET_SIZE(seq)
                                 ? PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i)
                                 : Py_None;
            Py_INCREF(item);
            ranks[i] = PyLong_AsLongLong(item);
            Py_DECREF(item);
            if (ranks[i] == -1 && PyErr_Occurred()) {
                PyMem_Free(ranks);
                Py_DECREF(seq);
                return NULL;
            }
        }
        Py_DECREF(seq);
        if (!ranks)
            return PyErr_NoMemory();
    } else {
        if (!(v = skpy_tdigest_values(obj, &n)))
            return NULL;
    }
    void *out = PyMem_Malloc(n ? n * 8 : 1); /* doubles or int64s */
    int rc = out ? run_read(self, kind, kind == READ_BY_RANK ? (const void *)ranks : v, out, n,
                            reverse)
                 : SK_ENOMEM;
    free(v);
    PyMem_Free(ranks);
    PyObject *list = rc == SK_OK ? PyList_New((Py_ssize_t)n) : skpy_error(rc, read_names[kind]);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *answer = kind == READ_RANK ? PyLong_FromLongLong(((int64_t *)out)[i])
                                             : PyFloat_FromDouble(((double *)out)[i]);
        if (!answer)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, answer);
    }
    PyMem_Free(out);
    return list;
}

/* One number through the read. */
static PyObject *read_one(PyObject *self, PyObject *obj, enum read_kind kind, int reverse)
{
    double x = 0, d = 0;
    int64_t r = 0, rank = 0;
    if (kind == READ_BY_RANK) {
        if ((r = PyLong_AsLongLong(obj)) == -1 && PyErr_Occurred())
            return NULL;
    } else if ((x = PyFloat_AsDouble(obj)) == -1.0 && PyErr_Occurred()) {
        return NULL;
    }
    int rc = run_read(self, kind, kind == READ_BY_RANK ? (const void *)&r : &x,
                      kind == READ_RANK ? (void *)&rank : &d, 1, reverse);
    if (rc != SK_OK)
        return skpy_error(rc, read_names[kind]);
    return kind == READ_RANK ? PyLong_FromLongLong(rank) : PyFloat_FromDouble(d);
}

static PyObject *tdigest_quantile(PyObject *self, PyObject *q)
{
    return read_one(self, q, READ_QUANTILE, 0);
}

static PyObject *tdigest_quantiles(PyObject *self, PyObject *qs)
{
    return read_many(self, qs, READ_QUANTILE, 0);
}

static PyObject *tdigest_cdf(PyObject *self, PyObject *x)
{
    return read_one(self, x, READ_CDF, 0);
}

static PyObject *tdigest_cdfs(PyObject *self, PyObject *xs)
{
    return read_many(self, xs, READ_CDF, 0);
}

/* rank(x), ranks(xs), by_rank(r), by_ranks(rs), each with *, reverse=False. */
static PyObject *ranked(PyObject *self, PyObject *args, PyObject *kwds, enum read_kind kind,
                        int many)
{
    static char *kwlists[4][3] = {{"x", "reverse", NULL}, {"xs", "reverse", NULL},
                                  {"r", "reverse", NULL}, {"rs", "reverse", NULL}};
    static const char *formats[4] = {"O|$p:rank", "O|$p:ranks", "O|$p:by_rank", "O|$p:by_ranks"};
    int which = (kind == READ_BY_RANK) * 2 + many;
    PyObject *arg;
    int reverse = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, formats[which], kwlists[which], &arg, &reverse))
        return NULL;
    return many ? read_many(self, arg, kind, reverse) : read_one(self, arg, kind, reverse);
}

static PyObject *tdigest_rank(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ranked(self, args, kwds, READ_RANK, 0);
}

static PyObject *tdigest_ranks(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ranked(self, args, kwds, READ_RANK, 1);
}

static PyObject *tdigest_by_rank(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ranked(self, args, kwds, READ_BY_RANK, 0);
}

static PyObject *tdigest_by_ranks(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ranked(self, args, kwds, READ_BY_RANK, 1);
}

static PyObject *tdigest_trimmed_mean(PyObject *self, PyObject *args)
{
    double lo, hi, out;
    if (!PyArg_ParseTuple(args, "dd:trimmed_mean", &lo, &hi))
        return NULL;
    skpy_lock_enter(LOCK(self));
    int rc = sk_tdigest_trimmed_mean(TD(self), lo, hi, &out);
    skpy_lock_leave(LOCK(self));
    if (rc != SK_OK)
        return skpy_error(rc, "TDigest.trimmed_mean: 0 <= low < high <= 1");
    return PyFloat_FromDouble(out);
}

/* ---- what it holds -------------------------------------------------------------- */

static PyObject *tdigest_repr(PyObject *self)
{
    sk_tdigest_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    return PyUnicode_FromFormat("TDigest(compression=%u, count=%lld)", (unsigned)i.compression,
                                (long long)(i.merged_weight + i.unmerged_weight));
}

static PyObject *get_field(PyObject *self, void *closure)
{
    sk_tdigest_info i;
    if (skpy_info(self, &i) < 0)
        return NULL;
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromUnsignedLong(i.compression);
    case 1: return PyLong_FromUnsignedLong(i.capacity);
    case 2: return PyLong_FromUnsignedLong(i.merged_nodes);
    case 3: return PyLong_FromUnsignedLong(i.unmerged_nodes);
    case 4: return PyLong_FromLongLong(i.merged_weight);
    case 5: return PyLong_FromLongLong(i.unmerged_weight);
    case 6: return PyLong_FromLongLong(i.total_compressions);
    case 7: return PyFloat_FromDouble(i.min);
    case 8: return PyFloat_FromDouble(i.max);
    case 9: return PyLong_FromLongLong(i.merged_weight + i.unmerged_weight);
    default: return PyLong_FromSize_t(i.memory);
    }
}

#define KW METH_VARARGS | METH_KEYWORDS
static PyMethodDef tdigest_methods[] = {
    {"add", SKPY_FN(tdigest_add), KW,
     "add(value, weight=1) -> None\n\nAdds a finite value weight (>= 1) times (ValueError for NaN, an\n"
     "infinity, weight 0, or a total weight past 2**63-1)."},
    {"update", tdigest_update, METH_O,
     "update(values) -> None\n\nAdds every number of an iterable (each through float()) or of a\n"
     "one-dimensional numpy array or pandas Series of numbers (read in place,\nwith the GIL released), "
     "once each. Every value is checked before any is\nadded: a NaN or an infinity raises ValueError "
     "and adds nothing (a total\nweight past 2**63-1 stops the adds where it is reached)."},
    {"merge", tdigest_merge, METH_O,
     "merge(other) -> None\n\nAdds another TDigest's centroids, after both are compressed\n"
     "(TDIGEST.MERGE's step); the compression stays this digest's."},
    {"compress", tdigest_compress, METH_NOARGS,
     "compress() -> bool\n\nMerges the buffer of values into the centroids now: True if that\n"
     "changed the digest. Reads answer as if this had been done, without\ndoing it."},
    {"quantile", tdigest_quantile, METH_O,
     "quantile(q) -> float\n\nThe value below which a fraction q (in [0, 1]) of the weight lies\n"
     "(TDIGEST.QUANTILE); NaN while empty."},
    {"quantiles", tdigest_quantiles, METH_O,
     "quantiles(qs) -> list[float]\n\nquantile() of every fraction of an iterable or array."},
    {"cdf", tdigest_cdf, METH_O,
     "cdf(x) -> float\n\nThe fraction of the weight at or below x, half of that at x\n"
     "(TDIGEST.CDF); NaN while empty."},
    {"cdfs", tdigest_cdfs, METH_O, "cdfs(xs) -> list[float]\n\ncdf() of every number of an iterable or array."},
    {"rank", SKPY_FN(tdigest_rank), KW,
     "rank(x, *, reverse=False) -> int\n\nThe weight below x plus half that at x, rounded as TDIGEST.RANK\n"
     "(reverse: above it, as TDIGEST.REVRANK): -1 below the minimum (reverse:\nabove the maximum), "
     "the total weight past the other end, -2 while empty."},
    {"ranks", SKPY_FN(tdigest_ranks), KW,
     "ranks(xs, *, reverse=False) -> list[int]\n\nrank() of every number of an iterable or array."},
    {"by_rank", SKPY_FN(tdigest_by_rank), KW,
     "by_rank(r, *, reverse=False) -> float\n\nThe value with r (>= 0) of the weight below it "
     "(reverse: above it), as\nTDIGEST.BYRANK answers: the minimum (maximum) for 0, inf (-inf) "
     "from the\ntotal weight on, NaN while empty."},
    {"by_ranks", SKPY_FN(tdigest_by_ranks), KW,
     "by_ranks(rs, *, reverse=False) -> list[float]\n\nby_rank() of every int of an iterable."},
    {"trimmed_mean", tdigest_trimmed_mean, METH_VARARGS,
     "trimmed_mean(low, high) -> float\n\nThe mean of the values between the fractions low and high "
     "of the weight\n(0 <= low < high <= 1), centroids cut at the ends (TDIGEST.TRIMMED_MEAN)."},
    {"clear", skpy_clear, METH_NOARGS, "clear() -> None\n\nForgets every value, keeping the compression."},
    {"copy", skpy_copy, METH_NOARGS, "copy() -> TDigest\n\nAn independent copy."},
    {"__copy__", skpy_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", skpy_deepcopy, METH_O, "An independent copy."},
    {"to_bytes", skpy_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe digest, its buffer included, in the library's format\n"
     "(docs/tdigest-format.md)."},
    {"from_bytes", skpy_from_bytes, METH_O | METH_CLASS,
     "from_bytes(data) -> TDigest\n\nReads what to_bytes wrote; ValueError for any other bytes."},
    {"__reduce__", SKPY_FN(skpy_reduce), METH_NOARGS, "Pickles through to_bytes."},
    {NULL, NULL, 0, NULL},
};

#define FIELD(name, n, doc) {name, get_field, NULL, doc, (void *)(intptr_t)(n)}
static PyGetSetDef tdigest_getset[] = {
    FIELD("compression", 0, "The compression: more keeps more centroids, and answers closer."),
    FIELD("capacity", 1, "Nodes (centroids and buffered values) held: 6 x compression + 10."),
    FIELD("merged_nodes", 2, "Centroids."),
    FIELD("unmerged_nodes", 3, "Values in the buffer."),
    FIELD("merged_weight", 4, "The weight of the centroids."),
    FIELD("unmerged_weight", 5, "The weight of the buffer."),
    FIELD("total_compressions", 6, "Merges of the buffer so far."),
    FIELD("min", 7, "The least value added (NaN while empty)."),
    FIELD("max", 8, "The largest value added (NaN while empty)."),
    FIELD("count", 9, "The total weight added."),
    FIELD("memory", 10, "Bytes the digest holds now."),
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(tdigest_doc,
             "TDigest(compression=100, *, max_memory=0)\n\n"
             "A merging t-digest: quantiles, ranks and the CDF of a stream of numbers,\n"
             "in memory that grows with the compression (1 to 357913939; 0 means 100),\n"
             "not with the stream; step for step RedisBloom's TDIGEST.*. Reads never\n"
             "change a digest: they answer from a compressed copy. max_memory (bytes,\n"
             "0: none) refuses a compression whose full digest would take more.");

static PyTypeObject tdigest_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sketch.TDigest",
    .tp_basicsize = sizeof(skpy_object),
    .tp_dealloc = skpy_object_dealloc,
    .tp_repr = tdigest_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = tdigest_doc,
    .tp_methods = tdigest_methods,
    .tp_getset = tdigest_getset,
    .tp_new = tdigest_new,
};

int skpy_add_tdigest(PyObject *module)
{
    return skpy_add_type(module, &tdigest_type, &tdigest_family);
}
