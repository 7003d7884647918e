/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rb_io.h: the bridge between Redis's RDB calls and the library's codecs of
 * RedisBloom's values (sketch/redisbloom.h), which the types of RedisBloom's
 * names (MBbloom--, MBbloomCF, CMSk-TYPE, TopK-TYPE, TDIS-TYPE) load and
 * save through (rb_io.c).
 */
#ifndef SKETCH_MODULE_RB_IO_H
#define SKETCH_MODULE_RB_IO_H

#include <stdint.h>

#include "rm_api.h"
#include "sketch.h"

/* A reader over io: init, hand r to a library loader, then finish, which
 * frees the last string it handed out. */
struct rb_reader {
    sk_rdb_reader r;
    RedisModuleIO *io;
    char *last; /* the string the loader may still be reading */
};
void rb_reader_init(struct rb_reader *rd, RedisModuleIO *io);
void rb_reader_finish(struct rb_reader *rd);

/* A writer into io. */
void rb_writer_init(sk_rdb_writer *w, RedisModuleIO *io);

/* The most memory a value loaded from io may take: the key's limit for a
 * RESTORE from a client, none (0) for an RDB being loaded or a value a
 * replica is given by its primary. */
uint64_t restore_limit(RedisModuleIO *io);

/* Logs why a value of `type` could not be loaded, naming its key. */
void rb_log_refused(RedisModuleIO *io, const char *type, int status, uint64_t limit);

#endif
