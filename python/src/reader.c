/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reader.c: many items out of one Python object, a batch at a time, for
 * the library's batched calls.
 *
 * Two kinds of input. Python objects (a list or tuple read in place, any
 * other iterable through its iterator, a numpy array of objects through
 * its pointers) are read with the GIL held, each by skpy_item_get, and
 * kept alive until the next batch. Buffers of fixed-width values (numpy
 * arrays of integers, floats, bools, bytes "S" or str "U"; pandas Series
 * through __array__; anything with the buffer protocol) are read without
 * a Python object per item: a "S" value is its bytes up to its trailing
 * NULs and a "U" value its UTF-8 up to its trailing NULs, as numpy gives
 * them back as Python objects; numbers and bools become their text as
 * item_text.c says. Such a buffer is read with the GIL released, except
 * for floats, whose digits come from Python's own shortest repr.
 *
 * A batch is SKPY_BATCH items until the input ends, so that two readers
 * over inputs of one length stay in step (skpy_each_pair).
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum reader_kind { READ_SEQUENCE, READ_ITERATOR, READ_OBJECTS, READ_VALUES };

/* What a buffer's values are. */
enum value_kind { VALUE_SIGNED, VALUE_UNSIGNED, VALUE_FLOAT, VALUE_BOOL, VALUE_BYTES, VALUE_UCS4 };

struct skpy_reader {
    enum reader_kind kind;
    PyObject *source; /* the sequence, iterator or array held */
    Py_ssize_t next, count;
    Py_buffer view;
    int has_view, is_array;
    int failed;             /* next() returned -1: skpy_reader_raise has an error to raise */
    enum value_kind value;
    size_t held;            /* items[0..held) hold references or views */
    PyObject *refs[SKPY_BATCH];
    skpy_item items[SKPY_BATCH];
    char *scratch;          /* the text of a batch of buffer values */
    size_t scratch_cap;
    const char *error;      /* an error found without the GIL */
};

static void release_batch(skpy_reader *r)
{
    for (size_t i = 0; i < r->held; i++) {
        skpy_item_release(&r->items[i]);
        Py_XDECREF(r->refs[i]);
        r->refs[i] = NULL;
    }
    r->held = 0;
}

/* A buffer's format as one of the value kinds; -1 with TypeError. */
static int value_kind_of(const Py_buffer *view, enum value_kind *out)
{
    const char *f = view->format ? view->format : "B";
    /* Native byte order only: '<' and '=' are native on the little-endian
     * machines this runs on, and '@' is native by definition. */
    int little = 1;
    little = *(const char *)&little;
    if (*f == '@' || *f == '=' || (*f == '<' && little))
        f++;
    else if (*f == '<' || *f == '>' || *f == '!') {
        PyErr_SetString(PyExc_TypeError,
                        "an array of the other byte order: convert it with .astype(native)");
        return -1;
    }
    while (*f >= '0' && *f <= '9')
        f++;
    if (f[0] && f[1]) {
        PyErr_Format(PyExc_TypeError, "an array of records (format %.50s) is not items",
                     view->format);
        return -1;
    }
    switch (*f) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
        *out = VALUE_SIGNED;
        break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
        *out = VALUE_UNSIGNED;
        break;
    case 'd':
        *out = VALUE_FLOAT;
        break;
    case '?':
        *out = VALUE_BOOL;
        break;
    case 's': case 'c':
        *out = VALUE_BYTES;
        break;
    case 'w':
        *out = VALUE_UCS4;
        break;
    case 'f': case 'e':
        PyErr_SetString(PyExc_TypeError,
                        "float32 and float16 arrays have no one text: convert with .astype('float64')");
        return -1;
    default:
        PyErr_Format(PyExc_TypeError, "an array of format %.50s is not items", view->format);
        return -1;
    }
    if ((*out == VALUE_SIGNED || *out == VALUE_UNSIGNED) && view->itemsize != 1 &&
        view->itemsize != 2 && view->itemsize != 4 && view->itemsize != 8) {
        PyErr_SetString(PyExc_TypeError, "integers of an unusual size are not items");
        return -1;
    }
    if ((*out == VALUE_FLOAT && view->itemsize != 8) || (*out == VALUE_BOOL && view->itemsize != 1) ||
        (*out == VALUE_UCS4 && view->itemsize % 4)) {
        PyErr_Format(PyExc_TypeError, "an array of format %.50s is not items", view->format);
        return -1;
    }
    return 0;
}

static int open_buffer(skpy_reader *r, PyObject *obj)
{
    if (PyObject_GetBuffer(obj, &r->view, PyBUF_STRIDES | PyBUF_FORMAT) < 0)
        return -1;
    r->has_view = 1;
    if (r->view.ndim == 0) {
        /* A numpy scalar exports its value as a buffer of no dimension. */
        PyErr_Format(PyExc_TypeError,
                     "expected an iterable of items, not %.100s (add() takes one item)",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (r->view.ndim > 1) {
        PyErr_SetString(PyExc_ValueError, "items come in a one-dimensional array");
        return -1;
    }
    r->count = r->view.shape[0];
    const char *f = r->view.format ? r->view.format : "B";
    if (f[0] == 'O' && f[1] == 0) {
        r->kind = READ_OBJECTS;
        return 0;
    }
    r->kind = READ_VALUES;
    return value_kind_of(&r->view, &r->value);
}

skpy_reader *skpy_reader_open(PyObject *obj)
{
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "expected an iterable of items, not %.100s (add() takes one item)",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    skpy_reader *r = PyMem_Calloc(1, sizeof *r);
    if (!r)
        return (skpy_reader *)PyErr_NoMemory();
    PyObject *array = NULL;
    int rc;
    if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) {
        r->kind = READ_SEQUENCE;
        Py_INCREF(obj);
        r->source = obj;
        rc = 0;
    } else if (PyObject_CheckBuffer(obj)) {
        /* Answers for a numpy array are a numpy array; for another buffer
         * (array.array, memoryview), which numpy may not be there for, a list. */
        r->is_array = PyObject_HasAttrString(obj, "__array__");
        Py_INCREF(obj);
        r->source = obj;
        rc = open_buffer(r, obj);
    } else if (PyObject_HasAttrString(obj, "__array__")) {
        /* A pandas Series or another array-like: its numpy array, or, if
         * that has no buffer, the object's own items. */
        array = PyObject_CallMethod(obj, "__array__", NULL);
        if (array && PyObject_CheckBuffer(array)) {
            r->is_array = 1;
            r->source = array;
            rc = open_buffer(r, array);
        } else {
            Py_XDECREF(array);
            r->kind = READ_ITERATOR;
            r->source = array ? PyObject_GetIter(obj) : NULL;
            rc = r->source ? 0 : -1;
        }
    } else {
        r->kind = READ_ITERATOR;
        r->source = PyObject_GetIter(obj);
        rc = r->source ? 0 : -1;
    }
    if (rc < 0) {
        skpy_reader_close(r);
        return NULL;
    }
    return r;
}

int skpy_reader_nogil(const skpy_reader *r)
{
    return r->kind == READ_VALUES && r->value != VALUE_FLOAT;
}

int skpy_reader_is_array(const skpy_reader *r)
{
    return r->is_array;
}

void skpy_reader_raise(skpy_reader *r)
{
    /* Of two readers in step, only the one that failed has an error. */
    if (!r->failed || PyErr_Occurred())
        return;
    PyErr_SetString(r->error ? PyExc_ValueError : PyExc_MemoryError,
                    r->error ? r->error : "cannot allocate memory for a batch of items");
}

void skpy_reader_close(skpy_reader *r)
{
    if (!r)
        return;
    release_batch(r);
    if (r->has_view)
        PyBuffer_Release(&r->view);
    Py_XDECREF(r->source);
    free(r->scratch);
    PyMem_Free(r);
}

/* Room for `more` bytes of text after `used`, without the GIL. */
static int reserve(skpy_reader *r, size_t used, size_t more)
{
    if (r->scratch_cap - used >= more)
        return 0;
    size_t cap = r->scratch_cap ? r->scratch_cap : 65536;
    while (cap - used < more)
        cap *= 2;
    char *scratch = realloc(r->scratch, cap);
    if (!scratch)
        return -1;
    r->scratch = scratch;
    r->scratch_cap = cap;
    return 0;
}

/* A UCS4 value's UTF-8, up to its trailing NULs; -1 for a code point that
 * UTF-8 cannot carry (a surrogate, or past U+10FFFF). */
static Py_ssize_t ucs4_to_utf8(const char *value, size_t itemsize, char *out)
{
    size_t count = itemsize / 4, n = 0;
    uint32_t cp;
    while (count > 0) {
        memcpy(&cp, value + 4 * (count - 1), 4);
        if (cp)
            break;
        count--;
    }
    size_t i = 0;
#ifdef __SSE2__
    /* ASCII, the common case, eight code points at a time: packed to bytes
     * with two saturating packs, exact since every lane is below 0x80. */
    const __m128i high = _mm_set1_epi32(~0x7F);
    for (; i + 8 <= count; i += 8) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(value + 4 * i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(value + 4 * i + 16));
        __m128i any = _mm_and_si128(_mm_or_si128(a, b), high);
        if (_mm_movemask_epi8(_mm_cmpeq_epi32(any, _mm_setzero_si128())) != 0xFFFF)
            break;
        __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_setzero_si128());
        _mm_storel_epi64((__m128i *)(void *)(out + n), bytes);
        n += 8;
    }
#endif
    for (; i < count; i++) {
        memcpy(&cp, value + 4 * i, 4);
        if (cp < 0x80) {
            out[n++] = (char)cp;
        } else if (cp < 0x800) {
            out[n++] = (char)(0xC0 | cp >> 6);
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            if (cp >= 0xD800 && cp <= 0xDFFF)
                return -1;
            out[n++] = (char)(0xE0 | cp >> 12);
            out[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp <= 0x10FFFF) {
            out[n++] = (char)(0xF0 | cp >> 18);
            out[n++] = (char)(0x80 | (cp >> 12 & 0x3F));
            out[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            return -1;
        }
    }
    return (Py_ssize_t)n;
}

static Py_ssize_t next_values(skpy_reader *r, const void **items, size_t *lens)
{
    Py_ssize_t n = r->count - r->next;
    if (n > SKPY_BATCH)
        n = SKPY_BATCH;
    size_t itemsize = (size_t)r->view.itemsize, used = 0;
    Py_ssize_t stride = r->view.ndim == 0 ? 0 : r->view.strides[0];
    const char *base = (const char *)r->view.buf + r->next * stride;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *value = base + i * stride;
        size_t need = r->value == VALUE_BYTES ? 0 : r->value == VALUE_UCS4 ? itemsize : SKPY_TEXT_MAX;
        if (need && reserve(r, used, need) < 0)
            return -1;
        char *out = r->scratch + used;
        size_t len;
        switch (r->value) {
        case VALUE_BYTES:
            len = itemsize;
            while (len > 0 && value[len - 1] == 0)
                len--;
            items[i] = value;
            lens[i] = len;
            continue;
        case VALUE_UCS4: {
            Py_ssize_t got = ucs4_to_utf8(value, itemsize, out);
            if (got < 0) {
                r->error = "a str in the array is not valid Unicode "
                           "(a lone surrogate, or past U+10FFFF)";
                return -1;
            }
            len = (size_t)got;
            break;
        }
        case VALUE_BOOL:
            out[0] = *value ? 't' : 'f';
            len = 1;
            break;
        case VALUE_FLOAT: {
            double d;
            memcpy(&d, value, sizeof d);
            len = skpy_format_double(d, out);
            if (!len)
                return -1;
            break;
        }
        case VALUE_SIGNED:
            len = skpy_format_i64(skpy_load_i64(value, itemsize), out);
            break;
        default:
            len = skpy_format_u64(skpy_load_u64(value, itemsize), out);
            break;
        }
        /* An offset until the batch is done: the scratch may move. */
        items[i] = (const void *)(uintptr_t)used;
        lens[i] = len;
        used += len;
    }
    if (r->value != VALUE_BYTES)
        for (Py_ssize_t i = 0; i < n; i++)
            items[i] = r->scratch + (uintptr_t)items[i];
    r->next += n;
    return n;
}

/* The next Python object of the input, a new reference; NULL at the end
 * (no exception) or on error. */
static PyObject *next_object(skpy_reader *r)
{
    if (r->kind == READ_ITERATOR)
        return PyIter_Next(r->source);
    if (r->kind == READ_SEQUENCE) {
        /* The list may shrink as items are read (a str's UTF-8 is made
         * without running Python code, but an int subclass's may not be). */
        Py_ssize_t size = PyList_Check(r->source) ? PyList_GET_SIZE(r->source)
                                                  : PyTuple_GET_SIZE(r->source);
        if (r->next >= size)
            return NULL;
        PyObject *obj = PyList_Check(r->source) ? PyList_GET_ITEM(r->source, r->next)
                                                : PyTuple_GET_ITEM(r->source, r->next);
        r->next++;
        Py_INCREF(obj);
        return obj;
    }
    if (r->next >= r->count)
        return NULL;
    PyObject *obj;
    Py_ssize_t stride = r->view.ndim == 0 ? 0 : r->view.strides[0];
    memcpy(&obj, (const char *)r->view.buf + r->next * stride, sizeof obj);
    r->next++;
    if (!obj) {
        PyErr_SetString(PyExc_TypeError, "an array of objects holds an empty slot");
        return NULL;
    }
    Py_INCREF(obj);
    return obj;
}

static Py_ssize_t next_objects(skpy_reader *r, const void **items, size_t *lens)
{
    release_batch(r);
    Py_ssize_t n = 0;
    while (n < SKPY_BATCH) {
        PyObject *obj = next_object(r);
        if (!obj)
            return PyErr_Occurred() ? -1 : n;
        r->refs[n] = obj;
        if (skpy_item_get(obj, &r->items[n]) < 0) {
            Py_DECREF(obj);
            r->refs[n] = NULL;
            return -1;
        }
        r->held = (size_t)++n;
        items[n - 1] = r->items[n - 1].data;
        lens[n - 1] = r->items[n - 1].len;
    }
    return n;
}

Py_ssize_t skpy_reader_next(skpy_reader *r, const void **items, size_t *lens)
{
    Py_ssize_t n = r->kind == READ_VALUES ? next_values(r, items, lens)
                                          : next_objects(r, items, lens);
    if (n < 0)
        r->failed = 1;
    return n;
}
