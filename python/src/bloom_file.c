/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_file.c: BloomFilter's files, which are the command's: save()
 * writes one atomically; open() maps one (only the pages a query touches
 * are read), or opens it in place, so that adds change the file with the
 * library's crash guarantee; sync() and close() commit those adds.
 */
#include "bloom_object.h"

#include <errno.h>

/* Commits a filter open in place; SK_OK for one in memory. errno is kept
 * for the caller's error. */
int bloom_commit(BloomObject *self)
{
    if (!self->in_place)
        return SK_OK;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sk_bloom_sync(self->f);
    Py_END_ALLOW_THREADS
    return status;
}

PyObject *bloom_save(PyObject *self, PyObject *path_arg)
{
    PyObject *path = skpy_path(path_arg);
    if (!path)
        return NULL;
    sk_bloom *f = bloom_enter_lock(self);
    if (!f) {
        Py_DECREF(path);
        return NULL;
    }
    int status, err;
    Py_BEGIN_ALLOW_THREADS
    status = sk_bloom_save(f, PyBytes_AS_STRING(path));
    err = errno;
    Py_END_ALLOW_THREADS
    UNLOCK(self);
    Py_DECREF(path);
    errno = err;
    if (status != SK_OK)
        return skpy_error_path(status, "BloomFilter.save", path_arg);
    Py_RETURN_NONE;
}

PyObject *bloom_open(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"path", "in_place", "verify", NULL};
    PyObject *path_arg, *path;
    int in_place = 0, verify = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pp:open", names, &path_arg, &in_place,
                                     &verify) ||
        !(path = skpy_path(path_arg)))
        return NULL;
    unsigned flags = in_place ? SK_BLOOM_IN_PLACE : SK_BLOOM_MAP;
    if (verify)
        flags |= SK_BLOOM_VERIFY;
    sk_bloom *f;
    int status, err;
    Py_BEGIN_ALLOW_THREADS
    status = sk_bloom_open(&f, PyBytes_AS_STRING(path), flags, NULL);
    err = errno;
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    errno = err;
    if (status != SK_OK)
        return skpy_error_path(status, "BloomFilter.open", path_arg);
    return bloom_alloc((PyTypeObject *)cls, f, in_place, path_arg);
}

PyObject *bloom_sync(PyObject *self, PyObject *Py_UNUSED(unused))
{
    BloomObject *b = (BloomObject *)self;
    if (!bloom_enter_lock(self))
        return NULL;
    int status = b->in_place ? bloom_commit(b) : SK_EINCOMPAT, err = errno;
    UNLOCK(self);
    errno = err;
    if (status != SK_OK)
        return skpy_error_path(status, "BloomFilter.sync (of a filter opened in place)", b->path);
    Py_RETURN_NONE;
}

PyObject *bloom_close(PyObject *self, PyObject *Py_UNUSED(unused))
{
    BloomObject *b = (BloomObject *)self;
    LOCK(self);
    int status = b->f ? bloom_commit(b) : SK_OK, err = errno;
    /* Closed even when the commit fails, as a Python file is: the marks
     * the library left keep the file whole, and the next open re-sums. */
    sk_bloom_free(b->f);
    b->f = NULL;
    UNLOCK(self);
    errno = err;
    if (status != SK_OK)
        return skpy_error_path(status, "BloomFilter.close", b->path);
    Py_RETURN_NONE;
}

PyObject *bloom_enter(PyObject *self, PyObject *Py_UNUSED(unused))
{
    if (!BF(self))
        return bloom_closed_error();
    Py_INCREF(self);
    return self;
}

PyObject *bloom_exit(PyObject *self, PyObject *Py_UNUSED(args))
{
    PyObject *out = bloom_close(self, NULL);
    Py_XDECREF(out);
    return out ? (Py_INCREF(Py_False), Py_False) : NULL;
}

