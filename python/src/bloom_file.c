/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_file.c: BloomFilter's files, which are the command's: save()
 * writes one atomically; open() maps one (only the pages a query touches
 * are read), or opens it in place, so that adds change the file with the
 * library's crash guarantee; sync() and close() commit those adds.
 */
#include "common.h"

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
    status = sk_bloom_sync(BF(self));
    Py_END_ALLOW_THREADS
    return status;
}

static int save_file(const void *f, const char *path, int unused)
{
    (void)unused;
    return sk_bloom_save(f, path);
}

PyObject *bloom_save(PyObject *self, PyObject *path)
{
    return skpy_save(self, path, save_file, 0);
}

static int open_file(void **out, const char *path, int flags)
{
    sk_bloom *f;
    int status = sk_bloom_open(&f, path, (unsigned)flags, NULL);
    if (status == SK_OK)
        *out = f;
    return status;
}

PyObject *bloom_open(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"path", "in_place", "verify", "mapped", NULL};
    PyObject *path;
    int in_place = 0, verify = 0, mapped = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$ppp:open", names, &path, &in_place,
                                     &verify, &mapped))
        return NULL;
    if (in_place && !mapped) {
        PyErr_SetString(PyExc_ValueError, "BloomFilter.open: in_place changes the file through "
                                          "its mapping: mapped=False cannot be in place");
        return NULL;
    }
    /* Unmapped, the filter is read whole into memory: another process may
     * then truncate the file without harm, where a mapping would fault. */
    unsigned flags = in_place ? SK_BLOOM_IN_PLACE : mapped ? SK_BLOOM_MAP : 0;
    if (verify)
        flags |= SK_BLOOM_VERIFY;
    BloomObject *self = (BloomObject *)skpy_open(cls, path, open_file, (int)flags);
    if (self) {
        self->in_place = in_place;
        Py_INCREF(path);
        self->path = path;
    }
    return (PyObject *)self;
}

PyObject *bloom_sync(PyObject *self, PyObject *Py_UNUSED(unused))
{
    BloomObject *b = (BloomObject *)self;
    if (!skpy_enter(self))
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
    int status = BF(b) ? bloom_commit(b) : SK_OK, err = errno;
    /* Closed even when the commit fails, as a Python file is: the marks
     * the library left keep the file whole, and the next open re-sums. */
    sk_bloom_free(BF(b));
    b->base.obj = NULL;
    UNLOCK(self);
    errno = err;
    if (status != SK_OK)
        return skpy_error_path(status, "BloomFilter.close", b->path);
    Py_RETURN_NONE;
}

PyObject *bloom_enter(PyObject *self, PyObject *Py_UNUSED(unused))
{
    if (!BF(self))
        return skpy_closed(self);
    Py_INCREF(self);
    return self;
}

PyObject *bloom_exit(PyObject *self, PyObject *Py_UNUSED(args))
{
    PyObject *out = bloom_close(self, NULL);
    Py_XDECREF(out);
    return out ? (Py_INCREF(Py_False), Py_False) : NULL;
}

