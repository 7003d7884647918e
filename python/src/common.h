/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h: what the extension's classes share: the Python exception for a
 * library status, the lock every object holds, the object and methods
 * every class has around its library object (family.c), the reader that
 * turns any iterable or buffer into batches of items, and the helpers that
 * move a sketch to and from bytes.
 *
 * Threads: every method takes its object's lock, so an object may be
 * shared between threads; calls on one object run one at a time. A method
 * that reads a buffer (a numpy array, bytes-like objects of the buffer
 * protocol) releases the GIL while the library works, holding the lock.
 */
#ifndef SKETCH_PY_COMMON_H
#define SKETCH_PY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <string.h>

#include "sketch/core.h"

/* Raises the exception for status (MemoryError for SK_ENOMEM, OSError
 * with errno and path for SK_EIO, ValueError otherwise), its message
 * "what: the library's message"; returns NULL. */
PyObject *skpy_error(int status, const char *what);
PyObject *skpy_error_path(int status, const char *what, PyObject *path);

/* The object's lock. skpy_lock waits with the GIL released. */
typedef struct skpy_lock {
    PyThread_type_lock lock;
} skpy_lock;
int skpy_lock_init(skpy_lock *l); /* -1 with MemoryError */
void skpy_lock_free(skpy_lock *l);
void skpy_lock_enter(skpy_lock *l);
void skpy_lock_leave(skpy_lock *l);

/* One item as the library hashes it (its bytes): a str is its UTF-8, bytes,
 * bytearray and other buffers their bytes, an int its decimal text, a float
 * the text PostgreSQL's float8 output prints, a bool "t" or "f" (as
 * PostgreSQL prints them). skpy_item_get fills *item; skpy_item_release
 * undoes it. -1 with TypeError for other objects. */
#define SKPY_TEXT_MAX 32
typedef struct skpy_item {
    const void *data;
    size_t len;
    Py_buffer view; /* held for a buffer other than bytes */
    int has_view;
    char text[SKPY_TEXT_MAX];
} skpy_item;
int skpy_item_get(PyObject *obj, skpy_item *item);
void skpy_item_release(skpy_item *item);

/* Formats for the text of numbers, shared with the buffer reader. */
size_t skpy_format_i64(int64_t v, char *out);
size_t skpy_format_u64(uint64_t v, char *out);
size_t skpy_format_double(double v, char *out); /* PostgreSQL's float8out */

/* A native integer of 1, 2, 4 or 8 bytes at p, as the buffer readers find
 * them in an array; inline, since they run once per value. */
static inline uint64_t skpy_load_u64(const char *p, size_t size)
{
    uint8_t b; uint16_t h; uint32_t i; uint64_t q;
    switch (size) {
    case 1: memcpy(&b, p, 1); return b;
    case 2: memcpy(&h, p, 2); return h;
    case 4: memcpy(&i, p, 4); return i;
    default: memcpy(&q, p, 8); return q;
    }
}

/* The same bytes sign-extended from their top bit: flipping it and
 * subtracting it carries a set sign bit through the high bytes. */
static inline int64_t skpy_load_i64(const char *p, size_t size)
{
    uint64_t sign = (uint64_t)1 << (8 * size - 1);
    return (int64_t)((skpy_load_u64(p, size) ^ sign) - sign);
}

/* A reader of many items: an iterable of items, or an object with the
 * buffer protocol (or __array__, as a pandas Series), one-dimensional, of
 * integers, floats, bools, fixed-width bytes ("S") or str ("U"). A str,
 * bytes or bytearray is refused (TypeError: add() takes one item).
 *
 * skpy_reader_next fills up to SKPY_BATCH items into items/lens and returns
 * how many (0 at the end) or -1; the items stay valid until the next call
 * or close. When skpy_reader_nogil is 1 (a buffer of fixed-width values),
 * next needs no GIL and the caller releases it around next and the
 * library's calls; after -1 the caller, holding the GIL again, calls
 * skpy_reader_raise to set the exception. skpy_reader_is_array tells
 * whether the input was an array (a result should then be a numpy array). */
#define SKPY_BATCH 1024
typedef struct skpy_reader skpy_reader;
skpy_reader *skpy_reader_open(PyObject *obj); /* NULL with an exception */
Py_ssize_t skpy_reader_next(skpy_reader *r, const void **items, size_t *lens);
int skpy_reader_nogil(const skpy_reader *r);
int skpy_reader_is_array(const skpy_reader *r);
void skpy_reader_raise(skpy_reader *r);
void skpy_reader_close(skpy_reader *r);

/* Calls fn on every batch of obj's items with the object's lock held and,
 * for a buffer, the GIL released; fn returns a library status (<0 stops
 * with skpy_error(status, what)). Returns 0, or -1 with an exception. */
typedef int (*skpy_batch_fn)(void *ctx, const void *const *items, const size_t *lens, size_t n);
int skpy_each_batch(PyObject *obj, skpy_lock *lock, skpy_batch_fn fn, void *ctx, const char *what);

/* The answers of a query of every item of obj: fn writes one 0/1 byte per
 * item of a batch to answers (with the lock held, maybe without the GIL);
 * returns a list of bools, or a numpy bool array when obj was an array;
 * NULL with an exception. */
typedef int (*skpy_query_fn)(void *ctx, const void *const *items, const size_t *lens, size_t n,
                             uint8_t *answers);
PyObject *skpy_query_many(PyObject *obj, skpy_lock *lock, skpy_query_fn fn, void *ctx,
                          const char *what);

/* The same over two parallel iterables (keys and items of a map): -1 with
 * ValueError if their lengths differ. */
typedef int (*skpy_pair_fn)(void *ctx, const void *const *keys, const size_t *key_lens,
                            const void *const *items, const size_t *item_lens, size_t n);
int skpy_each_pair(PyObject *keys, PyObject *items, skpy_lock *lock, skpy_pair_fn fn, void *ctx,
                   const char *what);

/* Answers of a batch query, one 0/1 byte per item: a list of bools, or a
 * numpy bool array when as_array (numpy imported then). Steals nothing. */
PyObject *skpy_bools(const uint8_t *answers, size_t n, int as_array);

/* A byte buffer that grows, for answers of unknown count. */
typedef struct skpy_bytes {
    uint8_t *data;
    size_t len, cap;
} skpy_bytes;
int skpy_bytes_reserve(skpy_bytes *b, size_t more); /* SK_OK or SK_ENOMEM; no GIL needed */
void skpy_bytes_free(skpy_bytes *b);

/* A family's calls behind void pointers, so that one piece of code
 * (family.c) serves every class. */
typedef int (*skpy_size_fn)(const void *obj, uint64_t *size);
typedef int (*skpy_write_fn)(const void *obj, void *buf, size_t cap, size_t *len);
typedef int (*skpy_read_fn)(void **out, const void *buf, size_t len, const sk_allocator *alloc);
typedef struct skpy_family {
    const char *name; /* the class's name, which starts its error messages */
    void (*free)(void *obj);
    int (*copy)(void **out, const void *obj);
    int (*clear)(void *obj);
    void (*get_info)(const void *obj, void *info);
    skpy_size_fn serialized_size;
    skpy_write_fn serialize;
    skpy_read_fn deserialize;
} skpy_family;

/* Adapters for the calls every family spells sk_<fam>_free, _copy, _clear
 * and _get_info: small functions, since calling the library's typed
 * functions through pointers of other types would be undefined. */
#define SKPY_FAMILY_CALLS(fam)                                                                     \
    static void fam##_free_any(void *o) { sk_##fam##_free(o); }                                    \
    static int fam##_copy_any(void **out, const void *o)                                           \
    {                                                                                              \
        sk_##fam *copy;                                                                            \
        int status = sk_##fam##_copy(&copy, o);                                                    \
        if (status == SK_OK)                                                                       \
            *out = copy;                                                                           \
        return status;                                                                             \
    }                                                                                              \
    static int fam##_clear_any(void *o) { return sk_##fam##_clear(o); }                            \
    static void fam##_info_any(const void *o, void *info) { sk_##fam##_get_info(o, info); }

/* The family fam##_family of a library whose serialization is
 * sk_<fam>_serialized_size, _serialize and _deserialize; pyname is the
 * class's name. HyperLogLog, whose calls take a format, writes its own. */
#define SKPY_FAMILY(fam, pyname)                                                                   \
    SKPY_FAMILY_CALLS(fam)                                                                         \
    static int fam##_size_any(const void *o, uint64_t *size)                                       \
    {                                                                                              \
        return sk_##fam##_serialized_size(o, size);                                                \
    }                                                                                              \
    static int fam##_write_any(const void *o, void *buf, size_t cap, size_t *len)                  \
    {                                                                                              \
        return sk_##fam##_serialize(o, buf, cap, len);                                             \
    }                                                                                              \
    static int fam##_read_any(void **out, const void *buf, size_t len, const sk_allocator *alloc)  \
    {                                                                                              \
        sk_##fam *o;                                                                               \
        int status = sk_##fam##_deserialize(&o, buf, len, alloc);                                  \
        if (status == SK_OK)                                                                       \
            *out = o;                                                                              \
        return status;                                                                             \
    }                                                                                              \
    static const skpy_family fam##_family = {                                                      \
        .name = pyname, .free = fam##_free_any, .copy = fam##_copy_any,                            \
        .clear = fam##_clear_any, .get_info = fam##_info_any, .serialized_size = fam##_size_any,   \
        .serialize = fam##_write_any, .deserialize = fam##_read_any}

/* Every class's object starts with this (BloomFilter adds fields after
 * it). obj is NULL only for a closed BloomFilter: the shared methods then
 * raise ValueError. */
typedef struct skpy_object {
    PyObject_HEAD
    void *obj;
    skpy_lock lock;
    const skpy_family *family;
} skpy_object;
#define SKPY_OBJ(o) (((skpy_object *)(o))->obj)
#define SKPY_LOCK(o) (&((skpy_object *)(o))->lock)

/* A new object of type owning obj (freed on failure). */
PyObject *skpy_object_new(PyTypeObject *type, void *obj, const skpy_family *family);
void skpy_object_dealloc(PyObject *self);
/* Readies type, registers it for from_bytes and adds it to the module
 * under the family's name. */
int skpy_add_type(PyObject *module, PyTypeObject *type, const skpy_family *family);

/* Takes the lock and gives the library object; NULL (no lock held,
 * ValueError) once it is closed. */
void *skpy_enter(PyObject *self);
PyObject *skpy_closed(PyObject *self); /* that ValueError; NULL */
/* The family's get_info under the lock; -1 with ValueError once closed. */
int skpy_info(PyObject *self, void *info);
/* Takes the locks of two objects (one when a is b) in address order, so
 * that a.merge(b) and b.merge(a) at once cannot deadlock. */
void skpy_lock_pair(PyObject *a, PyObject *b);
void skpy_unlock_pair(PyObject *a, PyObject *b);

/* The methods every class has, for its method table: clear(), copy(),
 * __copy__, __deepcopy__, to_bytes() and the classmethod from_bytes(). */
PyObject *skpy_clear(PyObject *self, PyObject *unused);
PyObject *skpy_copy(PyObject *self, PyObject *unused);
PyObject *skpy_deepcopy(PyObject *self, PyObject *memo);
PyObject *skpy_to_bytes(PyObject *self, PyObject *unused);
PyObject *skpy_from_bytes(PyObject *cls, PyObject *data);

/* The pieces under them, for a class with calls of its own (HyperLogLog's
 * formats, the files of three classes); method names the call in errors
 * ("Family.method: ..."). skpy_serialize makes a bytes object with the
 * lock held by the caller; skpy_deserialize reads a buffer with the GIL
 * released; skpy_save and skpy_open run a file call with the GIL released,
 * passing `how` (a format, flags) through. */
PyObject *skpy_serialize(const void *obj, skpy_size_fn size, skpy_write_fn write,
                         const char *what);
PyObject *skpy_deserialize(PyTypeObject *type, PyObject *data, const skpy_family *family,
                           skpy_read_fn read, const char *method);
PyObject *skpy_save(PyObject *self, PyObject *path_arg,
                    int (*save)(const void *obj, const char *path, int how), int how);
PyObject *skpy_open(PyObject *cls, PyObject *path_arg,
                    int (*open)(void **out, const char *path, int how), int how);

/* A Python int in [0, max] for a field of the library's options, or -1
 * with TypeError (not an int) or ValueError (out of range): truncating a
 * value the field cannot hold would hand the library another, perhaps
 * valid, number. */
int skpy_uint_arg(PyObject *obj, const char *name, uint64_t max, uint64_t *out);

/* A path argument (str, bytes or os.PathLike) as a bytes object for the
 * library's calls, via PyUnicode_FSConverter; NULL with an exception. */
PyObject *skpy_path(PyObject *arg);

/* __reduce__ for pickle: (type(self).from_bytes, (self.to_bytes(),)). */
PyObject *skpy_reduce(PyObject *self);

/* A method of a table, of any of CPython's calling conventions: through
 * void (*)(void), which -Wcast-function-type lets pass, to PyCFunction. */
#define SKPY_FN(f) ((PyCFunction)(void (*)(void))(f))

/* The module's classes; each registers its type on the module. */
int skpy_add_hll(PyObject *module);
int skpy_add_hll_map(PyObject *module);
int skpy_add_bloom(PyObject *module);
int skpy_add_cuckoo(PyObject *module);
int skpy_add_cms(PyObject *module);
int skpy_add_topk(PyObject *module);
int skpy_add_tdigest(PyObject *module);
int skpy_add_window_hll(PyObject *module);
int skpy_add_aging_bloom(PyObject *module);

/* HyperLogLog's type and its sketch, for the map's calls that take or give
 * one. skpy_hll_wrap takes ownership of h. */
extern PyTypeObject skpy_hll_type;
struct sk_hll;
PyObject *skpy_hll_wrap(struct sk_hll *h);
struct sk_hll *skpy_hll_of(PyObject *obj); /* NULL with TypeError */

#endif
