/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pg_sketch.h: what the files of the PostgreSQL extension share: memory
 * from PostgreSQL's contexts for libsketch, libsketch's status codes as
 * PostgreSQL errors, and the hll type's bytes to and from sketches.
 *
 * The extension is a thin shell: every sketch operation is libsketch's. A
 * value of type hll is a varlena holding the sketch in libsketch's native
 * serialized format (docs/hll-format.md), exactly what sk_hll_serialize
 * (SK_HLL_NATIVE) writes and what `sketch hll` files hold.
 *
 * Memory. Every sketch is allocated through an sk_allocator whose opaque
 * pointer is a MemoryContext: the current one for a function's temporary
 * sketches, the aggregate's context for a transition state. Allocation
 * failures come back to the library as NULL (never as an ERROR thrown from
 * inside it), so that the library returns SK_ENOMEM with its objects
 * intact, and it is the caller here that raises the error. Since all of it
 * is palloc'd, an ERROR raised anywhere leaks nothing: the context goes.
 */
#ifndef PG_SKETCH_H
#define PG_SKETCH_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "fmgr.h"
#include "lib/stringinfo.h"

#include "sketch.h"

/* The helpers below stay inside sketch.so: PostgreSQL 15 finds a module's
 * functions by name among all it exports (PG_FUNCTION_INFO_V1 marks
 * nothing), so what the server does not call is hidden by hand. */
#define PG_SKETCH_LOCAL __attribute__((visibility("hidden")))

/* An allocator that takes memory from cxt (with MCXT_ALLOC_NO_OOM). */
PG_SKETCH_LOCAL sk_allocator pg_sketch_allocator(MemoryContext cxt);

/* Raises an ERROR for a libsketch status other than SK_OK: SK_ENOMEM as
 * out_of_memory, anything else with the given SQLSTATE, the message
 * "what: <sk_strerror(status)>". */
PG_SKETCH_LOCAL pg_attribute_noreturn() void pg_sketch_error(int status, int sqlstate, const char *what);

/* pg_sketch_error with internal_error for a status other than SK_OK. */
static inline void pg_sketch_check(int status, const char *what)
{
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, what);
}

/* A count as bigint: a uint64_t past 2^63 - 1 (an estimate of saturated
 * registers can pass it) as the largest bigint. */
static inline int64 pg_sketch_int64(uint64_t x)
{
    return x > (uint64_t)PG_INT64_MAX ? PG_INT64_MAX : (int64)x;
}

/* A precision argument checked against 4..18 (invalid_parameter_value). */
PG_SKETCH_LOCAL unsigned pg_sketch_precision_arg(int32 precision);

/* The sketch that a stored hll value holds, allocated in cxt. A value that
 * does not deserialize was not written by this extension (or was damaged
 * on disk): data_corrupted. */
PG_SKETCH_LOCAL sk_hll *pg_hll_from_value(const struct varlena *value, MemoryContext cxt);

/* A new hll value (in CurrentMemoryContext) holding h in the native format. */
PG_SKETCH_LOCAL struct varlena *pg_hll_to_value(const sk_hll *h);

/* How the values of one type become items, the bytes a sketch or filter
 * hashes (docs/postgres.md): text, varchar, char(n) and bytea, and domains
 * over them, by their own bytes; every other type by its text output, as
 * the type's output function writes it. A function keeps one, zeroed at
 * first, in its fn_extra, so that the type is looked up once. */
typedef struct pg_sketch_item {
    Oid type;        /* InvalidOid until the first value */
    bool own_bytes;  /* a varlena hashed as it is */
    FmgrInfo output; /* otherwise the type's output function */
} pg_sketch_item;

/* The item of a function that keeps nothing else in its fn_extra. */
static inline pg_sketch_item *pg_sketch_item_of(FunctionCallInfo fcinfo)
{
    if (fcinfo->flinfo->fn_extra == NULL)
        fcinfo->flinfo->fn_extra =
            MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(pg_sketch_item));
    return fcinfo->flinfo->fn_extra;
}

/* The item that argument argno (not NULL) of fcinfo stands for: *data and
 * *len. *to_free is what the caller may pfree afterwards (or NULL): the text
 * output, or a detoasted copy, in the current memory context. */
PG_SKETCH_LOCAL void pg_sketch_item_bytes_any(FunctionCallInfo fcinfo, int argno,
                                              pg_sketch_item *item, const char **data,
                                              size_t *len, void **to_free);

/* The same, inline for the value an aggregate sees on most rows: a string
 * stored in its row, read in place. */
static inline void pg_sketch_item_bytes(FunctionCallInfo fcinfo, int argno,
                                        pg_sketch_item *item, const char **data, size_t *len,
                                        void **to_free)
{
    struct varlena *v = (struct varlena *)DatumGetPointer(PG_GETARG_DATUM(argno));
    if (likely(item->own_bytes) && !VARATT_IS_EXTERNAL(v) && !VARATT_IS_COMPRESSED(v)) {
        *data = VARDATA_ANY(v);
        *len = VARSIZE_ANY_EXHDR(v);
        *to_free = NULL;
        return;
    }
    pg_sketch_item_bytes_any(fcinfo, argno, item, data, len, to_free);
}

/* The aggregate's memory context, or an ERROR if fcinfo is no aggregate's
 * call (a support function called by hand). */
PG_SKETCH_LOCAL MemoryContext pg_sketch_aggregate_context(FunctionCallInfo fcinfo,
                                                          const char *function);

/* Text forms. A value's literal is \x followed by its bytes in hexadecimal
 * (two digits a byte, either case in, lower case out), as bytea prints in
 * hex. pg_sketch_hex_in decodes a literal of type_name into a new varlena,
 * refusing what is not one, or is longer than max_size bytes, as
 * invalid_text_representation; pg_sketch_hex_out writes one. */
PG_SKETCH_LOCAL struct varlena *pg_sketch_hex_in(const char *literal, const char *type_name,
                                                 size_t max_size);
PG_SKETCH_LOCAL char *pg_sketch_hex_out(const struct varlena *value);

/* What the input and receive functions of a type share: check(bytes, len,
 * literal) raises the type's ERROR unless bytes[0..len) are a value of it,
 * invalid_text_representation for a literal (not NULL),
 * invalid_binary_representation otherwise. pg_sketch_value_in reads a text
 * literal (pg_sketch_hex_in), pg_sketch_value_recv a binary message (the
 * bytes themselves, refused as invalid_binary_representation past max_size
 * bytes), both into a new value; pg_sketch_value_send writes one's bytes. */
typedef void (*pg_sketch_check_fn)(const char *bytes, size_t len, const char *literal);
PG_SKETCH_LOCAL struct varlena *pg_sketch_value_in(const char *literal, const char *type_name,
                                                   size_t max_size, pg_sketch_check_fn check);
PG_SKETCH_LOCAL struct varlena *pg_sketch_value_recv(StringInfo message, const char *type_name,
                                                     size_t max_size, pg_sketch_check_fn check);
PG_SKETCH_LOCAL bytea *pg_sketch_value_send(const struct varlena *value);

/* The calling function's declared row type (its OUT parameters), blessed,
 * ready for heap_form_tuple. */
PG_SKETCH_LOCAL TupleDesc pg_sketch_result_row(FunctionCallInfo fcinfo);

/* An aggregate's state argument, or NULL; and the return of a state that
 * may still be NULL (no row yet) as SQL NULL. */
#define PG_GETARG_STATE_OR_NULL(n) (PG_ARGISNULL(n) ? NULL : (void *)PG_GETARG_POINTER(n))
#define PG_RETURN_STATE_OR_NULL(state)                                                           \
    do {                                                                                         \
        if ((state) == NULL)                                                                     \
            PG_RETURN_NULL();                                                                    \
        PG_RETURN_POINTER(state);                                                                \
    } while (0)

/* The ERROR for a literal that is not a value of type_name: the message
 * quotes the start of it, detail and hint (which may be NULL) say why. */
PG_SKETCH_LOCAL pg_attribute_noreturn() void pg_sketch_bad_literal(
    const char *type_name, const char *literal, const char *detail, const char *hint);

/* Detoasted (possibly short-header) hll arguments. */
#define PG_GETARG_HLL_P(n) ((struct varlena *)PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(n)))

#endif
