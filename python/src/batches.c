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

/* The loop over an open reader; frees nothing. */
static int run_batches(skpy_reader *r, batch_arrays *a, skpy_lock *lock, skpy_batch_fn fn,
                       void *ctx, Py_ssize_t *n)
{
    int status = SK_OK;
    if (skpy_reader_nogil(r)) {
        skpy_lock_enter(lock);
        Py_BEGIN_ALLOW_THREADS
        while ((*n = skpy_reader_next(r, a->items, a->lens)) > 0 &&
               (status = fn(ctx, a->items, a->lens, (size_t)*n)) >= 0)
            ;
        Py_END_ALLOW_THREADS
        skpy_lock_leave(lock);
    } else {
        while ((*n = skpy_reader_next(r, a->items, a->lens)) > 0) {
            skpy_lock_enter(lock);
            status = fn(ctx, a->items, a->lens, (size_t)*n);
            skpy_lock_leave(lock);
            if (status < 0)
                break;
        }
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
    int status = run_batches(r, a, lock, fn, ctx, &n);
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
    int status = run_batches(r, a, lock, query_batch, &q, &n);
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
    int nogil = skpy_reader_nogil(r[0]) && skpy_reader_nogil(r[1]);
    Py_ssize_t n = 0, m = 0;
    int status = SK_OK;
    const char *mismatch = NULL;
    if (nogil) {
        skpy_lock_enter(lock);
        Py_BEGIN_ALLOW_THREADS
        for (;;) {
            if ((n = skpy_reader_next(r[0], a[0].items, a[0].lens)) < 0 ||
                (m = skpy_reader_next(r[1], a[1].items, a[1].lens)) < 0) {
                n = -1;
                break;
            }
            if (n != m) {
                mismatch = "keys and items differ in length";
                break;
            }
            if (n == 0 || (status = fn(ctx, a[0].items, a[0].lens, a[1].items, a[1].lens,
                                       (size_t)n)) < 0)
                break;
        }
        Py_END_ALLOW_THREADS
        skpy_lock_leave(lock);
    } else {
        for (;;) {
            if ((n = skpy_reader_next(r[0], a[0].items, a[0].lens)) < 0 ||
                (m = skpy_reader_next(r[1], a[1].items, a[1].lens)) < 0) {
                n = -1;
                break;
            }
            if (n != m) {
                mismatch = "keys and items differ in length";
                break;
            }
            if (n == 0)
                break;
            skpy_lock_enter(lock);
            status = fn(ctx, a[0].items, a[0].lens, a[1].items, a[1].lens, (size_t)n);
            skpy_lock_leave(lock);
            if (status < 0)
                break;
        }
    }
    if (mismatch) {
        PyErr_SetString(PyExc_ValueError, mismatch);
        n = -2;
    }
    if (n == -2) {
        skpy_reader_close(r[0]);
        skpy_reader_close(r[1]);
        PyMem_Free(a);
        return -1;
    }
    return finish(n, status, r, 2, a, what);
}
