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
    skpy_object base; /* base.obj, the sk_bloom, is NULL once closed */
    int in_place;     /* opened with SK_BLOOM_IN_PLACE: close() commits */
    PyObject *path;   /* the path it was opened from, for errors; NULL in memory */
} BloomObject;

#define BF(o) ((sk_bloom *)SKPY_OBJ(o))
#define LOCK(self) skpy_lock_enter(SKPY_LOCK(self))
#define UNLOCK(self) skpy_lock_leave(SKPY_LOCK(self))

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
