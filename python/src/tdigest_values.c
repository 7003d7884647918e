/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest_values.c: numbers out of one Python object, for TDigest
 * (tdigest.c). A digest's items are numbers, not hashed items, so they
 * do not go through the item reader of common.h: a one-dimensional buffer
 * of numbers (a numpy array; a pandas Series through __array__) is read in
 * place with the GIL released, anything else is iterated and each element
 * converted by PyFloat_AsDouble (so that a numpy array of another byte
 * order or of objects, read by iteration, still gives its numbers).
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

double *skpy_tdigest_values(PyObject *obj, size_t *n);

/* The kind of a buffer's numbers: 'i' signed, 'u' unsigned (bools too),
 * 'f' float, or 0 for a buffer read by iteration instead (another byte
 * order, objects, records, float16, long double). */
static char number_kind(const Py_buffer *view)
{
    const char *f = view->format ? view->format : "B";
    int little = 1;
    little = *(const char *)&little;
    if (*f == '@' || *f == '=' || (*f == '<' && little))
        f++;
    if (!f[0] || f[1])
        return 0;
    size_t size = (size_t)view->itemsize;
    int fixed = size == 1 || size == 2 || size == 4 || size == 8;
    if (strchr("bhilqn", *f))
        return fixed ? 'i' : 0;
    if (strchr("BHILQN?", *f))
        return fixed ? 'u' : 0;
    if ((*f == 'd' && size == 8) || (*f == 'f' && size == 4))
        return 'f';
    return 0;
}

/* Runs without the GIL: the buffer is held, and no Python object is read. */
static void convert(const Py_buffer *view, char kind, double *out, size_t n)
{
    size_t size = (size_t)view->itemsize;
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)view->buf + (Py_ssize_t)i * view->strides[0];
        if (kind == 'f' && size == 8) {
            memcpy(&out[i], p, 8);
        } else if (kind == 'f') {
            float x;
            memcpy(&x, p, 4);
            out[i] = x;
        } else if (kind == 'i') {
            out[i] = (double)skpy_load_i64(p, size);
        } else {
            out[i] = (double)skpy_load_u64(p, size);
        }
    }
}

/* A buffer's numbers: 1 with *out set, 0 if it does not hold numbers of a
 * kind read in place (the caller iterates instead), -1 with an exception. */
static int read_buffer(PyObject *obj, double **out, size_t *n)
{
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_STRIDES | PyBUF_FORMAT) < 0)
        return -1;
    char kind = number_kind(&view);
    int rc = kind ? 1 : 0;
    if (kind && view.ndim != 1) {
        PyErr_SetString(PyExc_ValueError, "numbers come in a one-dimensional array");
        rc = -1;
    } else if (kind) {
        *n = (size_t)view.shape[0];
        *out = malloc(*n ? *n * sizeof(double) : 1);
        if (!*out) {
            PyErr_NoMemory();
            rc = -1;
        } else {
            Py_BEGIN_ALLOW_THREADS
            convert(&view, kind, *out, *n);
            Py_END_ALLOW_THREADS
        }
    }
    PyBuffer_Release(&view);
    return rc;
}

double *skpy_tdigest_values(PyObject *obj, size_t *n)
{
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expected an iterable of numbers, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    double *out = NULL;
    int rc = 0;
    if (PyObject_CheckBuffer(obj)) {
        rc = read_buffer(obj, &out, n);
    } else if (!PyList_Check(obj) && !PyTuple_Check(obj) &&
               PyObject_HasAttrString(obj, "__array__")) {
        /* A pandas Series or another array-like: its numpy array. */
        PyObject *array = PyObject_CallMethod(obj, "__array__", NULL);
        if (!array)
            return NULL;
        rc = PyObject_CheckBuffer(array) ? read_buffer(array, &out, n) : 0;
        Py_DECREF(array);
    }
    if (rc != 0)
        return rc < 0 ? NULL : out;
    PyObject *seq = PySequence_Fast(obj, "expected an iterable of numbers");
    if (!seq)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    out = malloc(count ? (size_t)count * sizeof(double) : 1);
    if (!out) {
        Py_DECREF(seq);
        return (double *)PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        /* A list may shrink under an element's __float__ that changes it. */
        if (i >= PySequence_Fast_GET_SIZE(seq)) {
            count = i;
            break;
        }
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(item);
        out[i] = PyFloat_AsDouble(item);
        Py_DECREF(item);
        if (out[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            free(out);
            return NULL;
        }
    }
    Py_DECREF(seq);
    *n = (size_t)count;
    return out;
}
