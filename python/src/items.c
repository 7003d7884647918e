/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * items.c: one Python object as an item's bytes (the rules are in
 * item_text.c), and answers of many queries as Python objects.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* An int (exact or a subclass) as its decimal text. */
static int item_of_int(PyObject *obj, skpy_item *item)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (!overflow) {
        if (v == -1 && PyErr_Occurred())
            return -1;
        item->len = skpy_format_i64(v, item->text);
        item->data = item->text;
        return 0;
    }
    /* Past 64 bits: the decimal text, in a bytes object the item's view
     * keeps. */
    PyObject *text = PyLong_Type.tp_str(obj);
    PyObject *bytes = text ? PyUnicode_AsUTF8String(text) : NULL;
    Py_XDECREF(text);
    if (!bytes)
        return -1;
    int rc = PyObject_GetBuffer(bytes, &item->view, PyBUF_SIMPLE);
    Py_DECREF(bytes);
    if (rc < 0)
        return -1;
    item->has_view = 1;
    item->data = item->view.buf;
    item->len = (size_t)item->view.len;
    return 0;
}

static int item_of_buffer(PyObject *obj, skpy_item *item)
{
    if (PyObject_GetBuffer(obj, &item->view, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    item->has_view = 1;
    item->data = item->view.buf;
    item->len = (size_t)item->view.len;
    return 0;
}

int skpy_item_get(PyObject *obj, skpy_item *item)
{
    item->has_view = 0;
    if (PyUnicode_Check(obj)) {
        Py_ssize_t len;
        /* Kept by the str: valid while the caller holds obj. */
        item->data = PyUnicode_AsUTF8AndSize(obj, &len);
        if (!item->data)
            return -1;
        item->len = (size_t)len;
        return 0;
    }
    if (PyBytes_Check(obj)) {
        item->data = PyBytes_AS_STRING(obj);
        item->len = (size_t)PyBytes_GET_SIZE(obj);
        return 0;
    }
    /* bool before int: True is an int too. */
    if (PyBool_Check(obj)) {
        item->text[0] = obj == Py_True ? 't' : 'f';
        item->data = item->text;
        item->len = 1;
        return 0;
    }
    if (PyLong_Check(obj))
        return item_of_int(obj, item);
    if (PyFloat_Check(obj)) {
        item->len = skpy_format_double(PyFloat_AS_DOUBLE(obj), item->text);
        item->data = item->text;
        if (item->len)
            return 0;
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    if (PyByteArray_Check(obj) || PyMemoryView_Check(obj))
        return item_of_buffer(obj, item);
    /* numpy's bool scalar has a deprecated __index__: its text is a bool's. */
    if (strcmp(Py_TYPE(obj)->tp_name, "numpy.bool_") == 0 ||
        strcmp(Py_TYPE(obj)->tp_name, "numpy.bool") == 0) { /* numpy 1 and 2 */
        int truth = PyObject_IsTrue(obj);
        if (truth < 0)
            return -1;
        item->text[0] = truth ? 't' : 'f';
        item->data = item->text;
        item->len = 1;
        return 0;
    }
    /* numpy's integer scalars are not ints but have __index__; its other
     * scalars export their raw bytes as buffers, which no column's text is. */
    if (PyIndex_Check(obj)) {
        PyObject *number = PyNumber_Index(obj);
        if (!number)
            return -1;
        int rc = item_of_int(number, item);
        Py_DECREF(number);
        return rc;
    }
    if (strncmp(Py_TYPE(obj)->tp_name, "numpy.", 6) == 0) {
        PyErr_Format(PyExc_TypeError, "%.100s is not an item: convert it to float, int or str",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyObject_CheckBuffer(obj))
        return item_of_buffer(obj, item);
    PyErr_Format(PyExc_TypeError,
                 "an item is a str, bytes-like object, int, float or bool, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

void skpy_item_release(skpy_item *item)
{
    if (item->has_view)
        PyBuffer_Release(&item->view);
    item->has_view = 0;
}

PyObject *skpy_bools(const uint8_t *answers, size_t n, int as_array)
{
    PyObject *numpy = as_array ? PyImport_ImportModule("numpy") : NULL;
    if (as_array && !numpy) {
        /* An array-like without numpy: the answers as a list. */
        if (!PyErr_ExceptionMatches(PyExc_ImportError))
            return NULL;
        PyErr_Clear();
        as_array = 0;
    }
    if (as_array) {
        /* A bytearray under the array keeps it writable, as numpy's own. */
        PyObject *store = PyByteArray_FromStringAndSize((const char *)answers, (Py_ssize_t)n);
        PyObject *out = store ? PyObject_CallMethod(numpy, "frombuffer", "Os", store, "bool")
                              : NULL;
        Py_XDECREF(store);
        Py_DECREF(numpy);
        return out;
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *answer = answers[i] ? Py_True : Py_False;
        Py_INCREF(answer);
        PyList_SET_ITEM(list, (Py_ssize_t)i, answer);
    }
    return list;
}

int skpy_bytes_reserve(skpy_bytes *b, size_t more)
{
    if (b->cap - b->len >= more)
        return SK_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2)
            return SK_ENOMEM;
        cap *= 2;
    }
    uint8_t *data = realloc(b->data, cap);
    if (!data)
        return SK_ENOMEM;
    b->data = data;
    b->cap = cap;
    return SK_OK;
}

void skpy_bytes_free(skpy_bytes *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
