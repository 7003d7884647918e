/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_object.h: the BloomFilter object that bloom.c (the filter) and
 * bloom_file.c (its files: open, save, sync, close) share.
 */
#ifndef SKETCH_PY_BLOOM_OBJECT_H
#define SKETCH_PY_BLOOM_OBJECT_H

#include "common.h"

#include "sketch/bloom.h"
#include "sketch/bloom_extra.h"

typedef struct {
    PyObject_HEAD
    sk_bloom *f;    /* NULL once closed */
    skpy_lock lock;
    int in_place;   /* opened with SK_BLOOM_IN_PLACE: close() commits */
    PyObject *path; /* the path it was opened from, for errors; NULL in memory */
} BloomObject;

#define BF(o) (((BloomObject *)(o))->f)
#define LOCK(self) skpy_lock_enter(&((BloomObject *)(self))->lock)
#define UNLOCK(self) skpy_lock_leave(&((BloomObject *)(self))->lock)

/* ValueError for a closed filter; NULL. */
PyObject *bloom_closed_error(void);
/* Takes the lock and gives the filter; NULL (no lock held, ValueError)
 * once it is closed. */
sk_bloom *bloom_enter_lock(PyObject *self);
/* A new object owning f (freed on failure). */
PyObject *bloom_alloc(PyTypeObject *type, sk_bloom *f, int in_place, PyObject *path);
/* Commits a filter open in place; SK_OK for one in memory. errno is kept
 * for the caller's error. */
int bloom_commit(BloomObject *self);

PyObject *bloom_save(PyObject *self, PyObject *path_arg);
PyObject *bloom_open(PyObject *cls, PyObject *args, PyObject *kwargs);
PyObject *bloom_sync(PyObject *self, PyObject *unused);
PyObject *bloom_close(PyObject *self, PyObject *unused);
PyObject *bloom_enter(PyObject *self, PyObject *unused);
PyObject *bloom_exit(PyObject *self, PyObject *args);

#endif
