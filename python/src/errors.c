/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errors.c: the pieces every class uses around the library's calls: the
 * Python exception for a library status, the object lock, paths, pickling
 * and int arguments.
 */
#include "common.h"

#include <errno.h>
#include <stdlib.h>

PyObject *skpy_error(int status, const char *what)
{
    return skpy_error_path(status, what, NULL);
}

PyObject *skpy_error_path(int status, const char *what, PyObject *path)
{
    if (status == SK_ENOMEM)
        return PyErr_Format(PyExc_MemoryError, "%s: %s", what, sk_strerror(status));
    if (status == SK_EIO) {
        /* The library leaves errno as the failed system call set it. */
        int code = errno ? errno : EIO;
        PyObject *message = PyUnicode_FromFormat("%s: %s", what, strerror(code));
        if (!message)
            return NULL;
        PyObject *args = path ? Py_BuildValue("(iOO)", code, message, path)
                              : Py_BuildValue("(iO)", code, message);
        Py_DECREF(message);
        if (args) {
            PyErr_SetObject(PyExc_OSError, args);
            Py_DECREF(args);
        }
        return NULL;
    }
    return PyErr_Format(PyExc_ValueError, "%s: %s", what, sk_strerror(status));
}

int skpy_lock_init(skpy_lock *l)
{
    l->lock = PyThread_allocate_lock();
    if (!l->lock) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void skpy_lock_free(skpy_lock *l)
{
    if (l->lock)
        PyThread_free_lock(l->lock);
    l->lock = NULL;
}

void skpy_lock_enter(skpy_lock *l)
{
    /* Waiting with the GIL held would deadlock against a holder that
     * needs the GIL back to finish. */
    if (!PyThread_acquire_lock(l->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(l->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

void skpy_lock_leave(skpy_lock *l)
{
    PyThread_release_lock(l->lock);
}

PyObject *skpy_path(PyObject *arg)
{
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    return path;
}

PyObject *skpy_reduce(PyObject *self)
{
    PyObject *from = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_bytes");
    if (!from)
        return NULL;
    PyObject *data = PyObject_CallMethod(self, "to_bytes", NULL);
    if (!data) {
        Py_DECREF(from);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(N(N))", from, data);
    return out;
}

int skpy_uint_arg(PyObject *obj, const char *name, uint64_t max, uint64_t *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    unsigned long long u = 0;
    if (overflow > 0) {
        u = PyLong_AsUnsignedLongLong(obj);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            overflow = -1;
        }
    } else if (v >= 0) {
        u = (unsigned long long)v;
    }
    if (overflow < 0 || (!overflow && v < 0) || u > max) {
        PyErr_Format(PyExc_ValueError, "%s must be from 0 to %llu", name, (unsigned long long)max);
        return -1;
    }
    *out = u;
    return 0;
}
