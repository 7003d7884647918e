/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * batches.c: the loops of update() and the other calls that take many
 * items: readers (reader.c) feed the library's batched calls, with the
 * object's lock held around each call, and the GIL released for the whole
 * loop when the input is a buffer that needs no Python object to read.
 * Python objects are read without the lock, since reading them may run
 * Python code (an iterator's), which may use the same object.
 */
#include "common.h"

typedef struct batch_arrays {
    const void *items[SKPY_BATCH];
    size_t lens[SKPY_BATCH];
} batch_arrays;

/* Ends a loop: the reader's error, or the library's, or none. */
static int finish(Py_ssize_t n, int status, skpy_reader **readers, size_t count,
                  batch_arrays *arrays, const char *what)
{
    if (n < 0)
        for (size_t i = 0; i < count; i++)
            skpy_reader_raise(readers[i]);
    for (size_t i = 0; i < count; i++)
        skpy_reader_close(readers[i]);
    PyMem_Free(arrays);
    if (n >= 0 && status < 0)
        skpy_error(status, what);
    return n < 0 || status < 0 ? -1 : 0;
}

/* The next batch of every reader, in step: their common size (0 at the
 * end), -1 for a reader's error, -2 when their lengths differ. */
static Py_ssize_t next_batch(skpy_reader **r, size_t count, batch_arrays *a)
{
    Py_ssize_t n = skpy_reader_next(r[0], a[0].items, a[0].lens);
    for (size_t i = 1; n >= 0 && i < count; i++) {
        Py_ssize_t m = skpy_reader_next(r[i], a[i].items, a[i].lens);
        n = m < 0 ? -1 : m != n ? -2 : n;
    }
    return n;
}

/* The loop over open readers, one (fn) or keys and items (pair); frees
 * nothing. *n ends as next_batch's last answer. */
static int run_batches(skpy_reader **r, size_t count, batch_arrays *a, skpy_lock *lock,
                       skpy_batch_fn fn, skpy_pair_fn pair, void *ctx, Py_ssize_t *n)
{
    int nogil = 1, status = SK_OK;
    for (size_t i = 0; i < count; i++)
        nogil = nogil && skpy_reader_nogil(r[i]);
    PyThreadState *saved = NULL;
    if (nogil) {
        /* No Python code runs in the loop: one lock, taken before the GIL
         * goes, serves all of it. */
        skpy_lock_enter(lock);
        saved = PyEval_SaveThread();
    }
    while ((*n = next_batch(r, count, a)) > 0) {
        if (!nogil)
            skpy_lock_enter(lock);
        status = pair ? pair(ctx, a[0].items, a[0].lens, a[1].items, a[1].lens, (size_t)*n)
                      : fn(ctx, a[0].items, a[0].lens, (size_t)*n);
        if (!nogil)
            skpy_lock_leave(lock);
        if (status < 0)
            break;
    }
    if (nogil) {
        PyEval_RestoreThread(saved);
        skpy_lock_leave(lock);
    }
    return status;
}

int skpy_each_batch(PyObject *obj, skpy_lock *lock, skpy_batch_fn fn, void *ctx, const char *what)
{
    skpy_reader *r = skpy_reader_open(obj);
    if (!r)
        return -1;
    batch_arrays *a = PyMem_Malloc(sizeof *a);
    if (!a) {
        skpy_reader_close(r);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n;
    int status = run_batches(&r, 1, a, lock, fn, NULL, ctx, &n);
    return finish(n, status, &r, 1, a, what);
}

/* A query's batches, their answers gathered. */
typedef struct query_ctx {
    skpy_query_fn fn;
    void *ctx;
    skpy_bytes answers;
} query_ctx;

static int query_batch(void *arg, const void *const *items, const size_t *lens, size_t n)
{
    query_ctx *q = arg;
    int status = skpy_bytes_reserve(&q->answers, n);
    if (status == SK_OK)
        status = q->fn(q->ctx, items, lens, n, q->answers.data + q->answers.len);
    if (status >= 0)
        q->answers.len += n;
    return status;
}

PyObject *skpy_query_many(PyObject *obj, skpy_lock *lock, skpy_query_fn fn, void *ctx,
                          const char *what)
{
    skpy_reader *r = skpy_reader_open(obj);
    if (!r)
        return NULL;
    batch_arrays *a = PyMem_Malloc(sizeof *a);
    if (!a) {
        skpy_reader_close(r);
        return PyErr_NoMemory();
    }
    query_ctx q = {fn, ctx, {0}};
    Py_ssize_t n;
    int status = run_batches(&r, 1, a, lock, query_batch, NULL, &q, &n);
    int as_array = skpy_reader_is_array(r);
    PyObject *out = NULL;
    if (finish(n, status, &r, 1, a, what) == 0)
        out = skpy_bools(q.answers.data, q.answers.len, as_array);
    skpy_bytes_free(&q.answers);
    return out;
}

int skpy_each_pair(PyObject *keys, PyObject *items, skpy_lock *lock, skpy_pair_fn fn, void *ctx,
                   const char *what)
{
    /* Inputs that know their lengths are compared before any pair goes
     * in; iterators are found to differ only at the batch that differs. */
    Py_ssize_t key_count = PyObject_Length(keys), item_count = PyObject_Length(items);
    if (key_count < 0 || item_count < 0)
        PyErr_Clear();
    else if (key_count != item_count) {
        PyErr_SetString(PyExc_ValueError, "keys and items differ in length");
        return -1;
    }
    skpy_reader *r[2] = {skpy_reader_open(keys), NULL};
    if (!r[0])
        return -1;
    r[1] = skpy_reader_open(items);
    batch_arrays *a = r[1] ? PyMem_Malloc(2 * sizeof *a) : NULL;
    if (!a) {
        if (r[1])
            PyErr_NoMemory();
        skpy_reader_close(r[0]);
        skpy_reader_close(r[1]);
        return -1;
    }
    Py_ssize_t n;
    int status = run_batches(r, 2, a, lock, NULL, fn, ctx, &n);
    if (n == -2) /* finish() then raises this error, not a reader's */
        PyErr_SetString(PyExc_ValueError, "keys and items differ in length");
    return finish(n, status, r, 2, a, what);
}
