/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module_harness.h: a small in-process stand-in for redis-server, so that
 * the module's own code (module/ sources) runs under libFuzzer without a server.
 *
 * It implements every function that module/rm_api.h declares, hands them to
 * the module through the same GetApi lookup the server uses, and calls
 * RedisModule_OnLoad. It keeps a tiny keyspace (keys holding a module value
 * or a string), runs commands by name, and feeds RDB loads from a byte
 * stream: a string buffer is a 4-byte little-endian length then its bytes,
 * an unsigned is 8 little-endian bytes; running out sets the IO error, as a
 * short or corrupt RDB payload does in Redis.
 */
#ifndef SKETCH_FUZZ_MODULE_HARNESS_H
#define SKETCH_FUZZ_MODULE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "rm_api.h"

/* Loads the module once (with MAX-KEY-MEMORY 16mb). Safe to call again. */
void harness_init(void);

/* Runs a command, argv[0] its name; returns 1 if it replied an error, 0 if
 * not, -1 if no such command. */
int harness_command(int argc, const char *const *argv, const size_t *lens);

/* Stores a string value under a key (a stand-in for SET). */
void harness_set_string(const char *key, size_t keylen, const void *value, size_t len);

/* Removes a key (a stand-in for DEL). */
void harness_delete(const char *key, size_t keylen);

/* Removes every key. */
void harness_flush(void);

/* The data types the module registers: 0 the Bloom filter, 1 HyperLogLog,
 * 2 the count-min sketch, 3 top-k, 4 the Cuckoo filter, 5 the t-digest,
 * then RedisBloom's types: 6 its Bloom filter (MBbloom--), 7 count-min
 * sketch, 8 top-k, 9 Cuckoo filter, 10 t-digest; 11 the aging Bloom filter;
 * 12 the sliding-window HyperLogLog. */
#define HARNESS_ABF 11
#define HARNESS_WHLL 12
#define HARNESS_TYPES 13
#define HARNESS_REDISBLOOM_FIRST 6
const RedisModuleTypeMethods *harness_type(int which);
/* The encoding version it registered, which rdb_save writes. */
int harness_encver(int which);

/* An RDB stream to load from, or to save into (data NULL). */
struct harness_io;
struct harness_io *harness_io_reader(const uint8_t *data, size_t len);
struct harness_io *harness_io_writer(void);
const uint8_t *harness_io_bytes(struct harness_io *io, size_t *len);
int harness_io_error(struct harness_io *io);
void harness_io_free(struct harness_io *io);
#define HARNESS_IO(io) ((RedisModuleIO *)(void *)(io))

/* The AOF rewrite of a value: emits its commands and runs them at once. */
void harness_aof_rewrite(int which, const char *key, void *value);

/* The module value under key if it is of the given type, else NULL. */
void *harness_value(int which, const char *key);

#endif
