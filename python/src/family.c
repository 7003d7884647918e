/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * family.c: what every class does the same way around its library object,
 * written once over the family's calls (skpy_family in common.h): the
 * object's making and deallocation, clear(), copy(), to_bytes(),
 * from_bytes(), its info under the lock, the two locks of a merge, and
 * the files of the classes that have them. Error messages name the
 * class and the method: "Family.method: ...".
 */
#include "common.h"

#include <errno.h>

#define FAMILY(o) (((skpy_object *)(o))->family)

PyObject *skpy_object_new(PyTypeObject *type, void *obj, const skpy_family *family)
{
    skpy_object *self = (skpy_object *)type->tp_alloc(type, 0);
    if (!self) {
        family->free(obj);
        return NULL;
    }
    if (skpy_lock_init(&self->lock) < 0) {
        family->free(obj);
        Py_DECREF(self);
        return NULL;
    }
    self->obj = obj;
    self->family = family;
    return (PyObject *)self;
}

void skpy_object_dealloc(PyObject *self)
{
    skpy_object *o = (skpy_object *)self;
    /* No family yet when the lock could not be made. */
    if (o->obj)
        o->family->free(o->obj);
    skpy_lock_free(&o->lock);
    Py_TYPE(self)->tp_free(self);
}

/* ---- the classes' families -------------------------------------------------------- */

/* from_bytes() is a classmethod: it has the class, not an object, so the
 * family comes from the class, or the base class it derives from. */
#define SKPY_TYPES 12
static struct {
    PyTypeObject *type;
    const skpy_family *family;
} types[SKPY_TYPES];
static size_t type_count;

static int register_type(PyTypeObject *type, const skpy_family *family)
{
    for (size_t i = 0; i < type_count; i++)
        if (types[i].type == type)
            return 0; /* the module initialized again */
    if (type_count == SKPY_TYPES) {
        PyErr_SetString(PyExc_SystemError, "sketch: too many classes for SKPY_TYPES");
        return -1;
    }
    types[type_count].type = type;
    types[type_count++].family = family;
    return 0;
}

static const skpy_family *family_of_class(PyObject *cls)
{
    for (size_t i = 0; i < type_count; i++)
        if (PyType_Check(cls) && PyType_IsSubtype((PyTypeObject *)cls, types[i].type))
            return types[i].family;
    PyErr_Format(PyExc_TypeError, "%R is not a class of sketch", cls);
    return NULL;
}

int skpy_add_type(PyObject *module, PyTypeObject *type, const skpy_family *family)
{
    if (PyType_Ready(type) < 0 || register_type(type, family) < 0)
        return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(module, family->name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

/* ---- locks ------------------------------------------------------------------------ */

PyObject *skpy_closed(PyObject *self)
{
    /* Only a BloomFilter closes: its message. */
    return PyErr_Format(PyExc_ValueError, "%s: the filter is closed", FAMILY(self)->name);
}

void *skpy_enter(PyObject *self)
{
    skpy_lock_enter(SKPY_LOCK(self));
    void *obj = SKPY_OBJ(self);
    if (!obj) {
        skpy_lock_leave(SKPY_LOCK(self));
        skpy_closed(self);
    }
    return obj;
}

int skpy_info(PyObject *self, void *info)
{
    void *obj = skpy_enter(self);
    if (!obj)
        return -1;
    FAMILY(self)->get_info(obj, info);
    skpy_lock_leave(SKPY_LOCK(self));
    return 0;
}

/* As integers: < between pointers to distinct objects is undefined. The
 * order is that of the locks' addresses too (one offset in every object),
 * which CountMinSketch.merge_weighted sorts its locks by. */
void skpy_lock_pair(PyObject *a, PyObject *b)
{
    PyObject *first = (uintptr_t)a < (uintptr_t)b ? a : b, *second = first == a ? b : a;
    skpy_lock_enter(SKPY_LOCK(first));
    if (second != first)
        skpy_lock_enter(SKPY_LOCK(second));
}

void skpy_unlock_pair(PyObject *a, PyObject *b)
{
    skpy_lock_leave(SKPY_LOCK(a));
    if (b != a)
        skpy_lock_leave(SKPY_LOCK(b));
}

/* ---- the shared methods ----------------------------------------------------------- */

/* "Family.method", the start of an error's message. */
#define WHAT_MAX 96
static const char *what_of(char *what, const skpy_family *family, const char *method)
{
    PyOS_snprintf(what, WHAT_MAX, "%s.%s", family->name, method);
    return what;
}

static PyObject *method_error(int status, const skpy_family *family, const char *method)
{
    char what[WHAT_MAX];
    return skpy_error(status, what_of(what, family, method));
}

PyObject *skpy_clear(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *obj = skpy_enter(self);
    if (!obj)
        return NULL;
    int status = FAMILY(self)->clear(obj);
    skpy_lock_leave(SKPY_LOCK(self));
    if (status != SK_OK)
        return method_error(status, FAMILY(self), "clear");
    Py_RETURN_NONE;
}

PyObject *skpy_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *obj = skpy_enter(self), *copy = NULL;
    if (!obj)
        return NULL;
    int status = FAMILY(self)->copy(&copy, obj);
    skpy_lock_leave(SKPY_LOCK(self));
    if (status != SK_OK)
        return method_error(status, FAMILY(self), "copy");
    /* A new object holds only its library object: a copy of a BloomFilter
     * open from a file is in memory. */
    return skpy_object_new(Py_TYPE(self), copy, FAMILY(self));
}

PyObject *skpy_deepcopy(PyObject *self, PyObject *memo)
{
    (void)memo;
    return skpy_copy(self, NULL);
}

PyObject *skpy_serialize(const void *obj, skpy_size_fn size, skpy_write_fn write,
                         const char *what)
{
    uint64_t want;
    int status = size(obj, &want);
    if (status != SK_OK)
        return skpy_error(status, what);
    if (want > PY_SSIZE_T_MAX)
        return skpy_error(SK_ENOMEM, what);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)want);
    if (!out)
        return NULL;
    size_t len;
    status = write(obj, PyBytes_AS_STRING(out), (size_t)want, &len);
    if (status != SK_OK) {
        Py_DECREF(out);
        return skpy_error(status, what);
    }
    if (len != want && _PyBytes_Resize(&out, (Py_ssize_t)len) < 0)
        return NULL;
    return out;
}

PyObject *skpy_to_bytes(PyObject *self, PyObject *unused)
{
    (void)unused;
    void *obj = skpy_enter(self);
    if (!obj)
        return NULL;
    char what[WHAT_MAX];
    PyObject *out = skpy_serialize(obj, FAMILY(self)->serialized_size, FAMILY(self)->serialize,
                                   what_of(what, FAMILY(self), "to_bytes"));
    skpy_lock_leave(SKPY_LOCK(self));
    return out;
}

PyObject *skpy_deserialize(PyTypeObject *type, PyObject *data, const skpy_family *family,
                           skpy_read_fn read, const char *method)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    void *obj = NULL;
    int status;
    if (view.readonly) {
        Py_BEGIN_ALLOW_THREADS
        status = read(&obj, view.buf, (size_t)view.len, NULL);
        Py_END_ALLOW_THREADS
    } else {
        /* Another thread could change a bytearray while it is parsed, its
         * fields checked and then read again: the GIL keeps it still. */
        status = read(&obj, view.buf, (size_t)view.len, NULL);
    }
    PyBuffer_Release(&view);
    if (status != SK_OK)
        return method_error(status, family, method);
    return skpy_object_new(type, obj, family);
}

PyObject *skpy_from_bytes(PyObject *cls, PyObject *data)
{
    const skpy_family *family = family_of_class(cls);
    if (!family)
        return NULL;
    return skpy_deserialize((PyTypeObject *)cls, data, family, family->deserialize, "from_bytes");
}

/* ---- files ------------------------------------------------------------------------ */

/* errno is carried past the GIL's return and the path's release: an
 * SK_EIO's OSError reports it. */
PyObject *skpy_save(PyObject *self, PyObject *path_arg,
                    int (*save)(const void *obj, const char *path, int how), int how)
{
    PyObject *path = skpy_path(path_arg);
    if (!path)
        return NULL;
    void *obj = skpy_enter(self);
    if (!obj) {
        Py_DECREF(path);
        return NULL;
    }
    int status, err;
    Py_BEGIN_ALLOW_THREADS
    status = save(obj, PyBytes_AS_STRING(path), how);
    err = errno;
    Py_END_ALLOW_THREADS
    skpy_lock_leave(SKPY_LOCK(self));
    Py_DECREF(path);
    errno = err;
    char what[WHAT_MAX];
    if (status != SK_OK)
        return skpy_error_path(status, what_of(what, FAMILY(self), "save"), path_arg);
    Py_RETURN_NONE;
}

PyObject *skpy_open(PyObject *cls, PyObject *path_arg,
                    int (*open)(void **out, const char *path, int how), int how)
{
    const skpy_family *family = family_of_class(cls);
    PyObject *path = family ? skpy_path(path_arg) : NULL;
    if (!path)
        return NULL;
    void *obj = NULL;
    int status, err;
    Py_BEGIN_ALLOW_THREADS
    status = open(&obj, PyBytes_AS_STRING(path), how);
    err = errno;
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    errno = err;
    char what[WHAT_MAX];
    if (status != SK_OK)
        return skpy_error_path(status, what_of(what, family, "open"), path_arg);
    return skpy_object_new((PyTypeObject *)cls, obj, family);
}
