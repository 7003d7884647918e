/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pg_sketch.c: the extension's module block and the helpers every type
 * shares (pg_sketch.h): libsketch's memory from PostgreSQL's memory
 * contexts, its status codes as errors, and hll values to and from
 * sketches.
 */
#include "pg_sketch.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_MODULE_MAGIC;

/* How much of a malformed literal an error message quotes: a sketch's
 * literal runs to 390 KB (precision 18), a filter's to 2 GB. */
#define LITERAL_EXCERPT 40
#define HEX_PREFIX "\\x"
#define HEX_PREFIX_LEN 2

/* Takes no ERROR path: an allocation that fails returns NULL to libsketch,
 * which reports SK_ENOMEM and leaves its objects as they were. A size past
 * what palloc can ever give (MaxAllocHugeSize) is refused here for the same
 * reason, since MemoryContextAllocExtended raises an ERROR for it even with
 * MCXT_ALLOC_NO_OOM. */
static void *context_alloc(void *opaque, size_t size)
{
    if (!AllocHugeSizeIsValid(size))
        return NULL;
    return MemoryContextAllocExtended((MemoryContext)opaque, size,
                                      MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void context_free(void *opaque, void *ptr, size_t size)
{
    (void)opaque;
    (void)size;
    pfree(ptr);
}

sk_allocator pg_sketch_allocator(MemoryContext cxt)
{
    /* No SK_ALLOC_HUGE_PAGES: madvise on palloc'd memory would reach into
     * the memory around it that the context owns. */
    return (sk_allocator){context_alloc, context_free, cxt, 0};
}

void pg_sketch_error(int status, int sqlstate, const char *what)
{
    if (status == SK_ENOMEM)
        ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory"),
                        errdetail("%s: %s", what, sk_strerror(status))));
    ereport(ERROR, (errcode(sqlstate), errmsg("%s: %s", what, sk_strerror(status))));
}

unsigned pg_sketch_precision_arg(int32 precision)
{
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("precision %d is out of range", precision),
                        errhint("A precision lies in %d..%d (2^p registers, standard error "
                                "1.04/sqrt(2^p)); the default is %d.",
                                SK_HLL_MIN_PRECISION, SK_HLL_MAX_PRECISION,
                                SK_HLL_DEFAULT_PRECISION)));
    return (unsigned)precision;
}

sk_hll *pg_hll_from_value(const struct varlena *value, MemoryContext cxt)
{
    sk_allocator allocator = pg_sketch_allocator(cxt);
    sk_hll *h;
    sk_hll_format format;
    int status = sk_hll_deserialize(&h, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value), &format,
                                    &allocator);
    if (status == SK_OK && format != SK_HLL_NATIVE) {
        sk_hll_free(h);
        status = SK_EFORMAT;
    }
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_DATA_CORRUPTED, "stored hll value is not a sketch");
    return h;
}

struct varlena *pg_hll_to_value(const sk_hll *h)
{
    uint64_t size;
    size_t len;
    sk_hll_serialized_size(h, SK_HLL_NATIVE, &size); /* native: always SK_OK */
    struct varlena *value = palloc(VARHDRSZ + size);
    int status = sk_hll_serialize(h, SK_HLL_NATIVE, VARDATA(value), size, &len);
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot serialize the sketch");
    SET_VARSIZE(value, VARHDRSZ + len);
    return value;
}

static bool hashes_own_bytes(Oid type)
{
    Oid base = getBaseType(type);
    /* char(n) included: its bytes keep its padding, as its output does. */
    return base == TEXTOID || base == VARCHAROID || base == BPCHAROID || base == BYTEAOID;
}

void pg_sketch_item_bytes_any(FunctionCallInfo fcinfo, int argno, pg_sketch_item *item,
                              const char **data, size_t *len, void **to_free)
{
    /* An argument's type is the same on every call through one FmgrInfo:
     * looked up on the first. */
    if (!OidIsValid(item->type)) {
        Oid type = get_fn_expr_argtype(fcinfo->flinfo, argno);
        if (!OidIsValid(type))
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("could not determine the type of an item")));
        item->own_bytes = hashes_own_bytes(type);
        if (!item->own_bytes) {
            Oid output;
            bool varlena;
            getTypeOutputInfo(type, &output, &varlena);
            fmgr_info_cxt(output, &item->output, fcinfo->flinfo->fn_mcxt);
        }
        item->type = type;
    }
    Datum value = PG_GETARG_DATUM(argno);
    if (item->own_bytes) {
        struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
        *data = VARDATA_ANY(v);
        *len = VARSIZE_ANY_EXHDR(v);
        *to_free = v != (struct varlena *)DatumGetPointer(value) ? v : NULL;
    } else {
        char *text = OutputFunctionCall(&item->output, value);
        *data = text;
        *len = strlen(text);
        *to_free = text;
    }
}

MemoryContext pg_sketch_aggregate_context(FunctionCallInfo fcinfo, const char *function)
{
    MemoryContext cxt;
    if (!AggCheckCallContext(fcinfo, &cxt))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s called in non-aggregate context", function)));
    return cxt;
}

void pg_sketch_bad_literal(const char *type_name, const char *literal, const char *detail,
                           const char *hint)
{
    size_t len = strlen(literal);
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type %s: \"%.*s%s\"", type_name,
                           LITERAL_EXCERPT, literal, len > LITERAL_EXCERPT ? "..." : ""),
                    errdetail("%s", detail), hint != NULL ? errhint("%s", hint) : 0));
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

struct varlena *pg_sketch_hex_in(const char *literal, const char *type_name, size_t max_size)
{
    size_t len = strlen(literal);
    if (len < HEX_PREFIX_LEN || memcmp(literal, HEX_PREFIX, HEX_PREFIX_LEN) != 0)
        pg_sketch_bad_literal(type_name, literal,
                              "A literal is \\x followed by the bytes in hexadecimal.", NULL);
    size_t digits = len - HEX_PREFIX_LEN;
    if (digits % 2 != 0)
        pg_sketch_bad_literal(type_name, literal,
                              "A literal has two hexadecimal digits for each byte.", NULL);
    size_t size = digits / 2;
    /* Refused before anything is allocated for it. */
    if (size > max_size)
        pg_sketch_bad_literal(type_name, literal, "It is longer than any value of the type.",
                              NULL);
    struct varlena *value = palloc(VARHDRSZ + size);
    char *bytes = VARDATA(value);
    const char *hex = literal + HEX_PREFIX_LEN;
    for (size_t i = 0; i < size; i++) {
        int high = hex_value(hex[2 * i]), low = hex_value(hex[2 * i + 1]);
        if (high < 0 || low < 0)
            pg_sketch_bad_literal(type_name, literal,
                                  "A literal has only hexadecimal digits after \\x.", NULL);
        bytes[i] = (char)(high << 4 | low);
    }
    SET_VARSIZE(value, VARHDRSZ + size);
    return value;
}

char *pg_sketch_hex_out(const struct varlena *value)
{
    size_t size = VARSIZE_ANY_EXHDR(value);
    char *text = palloc(HEX_PREFIX_LEN + 2 * size + 1);
    memcpy(text, HEX_PREFIX, HEX_PREFIX_LEN);
    uint64 written = hex_encode(VARDATA_ANY(value), size, text + HEX_PREFIX_LEN);
    text[HEX_PREFIX_LEN + written] = '\0';
    return text;
}

struct varlena *pg_sketch_value_in(const char *literal, const char *type_name, size_t max_size,
                                   pg_sketch_check_fn check)
{
    struct varlena *value = pg_sketch_hex_in(literal, type_name, max_size);
    check(VARDATA(value), VARSIZE(value) - VARHDRSZ, literal);
    return value;
}

struct varlena *pg_sketch_value_recv(StringInfo message, const char *type_name, size_t max_size,
                                     pg_sketch_check_fn check)
{
    int size = message->len - message->cursor;
    if ((size_t)size > max_size)
        ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                        errmsg("invalid binary %s value", type_name),
                        errdetail("%d bytes are more than any value of the type has.", size)));
    const char *bytes = pq_getmsgbytes(message, size);
    check(bytes, (size_t)size, NULL);
    struct varlena *value = palloc(VARHDRSZ + size);
    memcpy(VARDATA(value), bytes, size);
    SET_VARSIZE(value, VARHDRSZ + size);
    return value;
}

bytea *pg_sketch_value_send(const struct varlena *value)
{
    StringInfoData message;
    pq_begintypsend(&message);
    pq_sendbytes(&message, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
    return pq_endtypsend(&message);
}

TupleDesc pg_sketch_result_row(FunctionCallInfo fcinfo)
{
    TupleDesc desc;
    if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("function returning record called in context that cannot "
                               "accept type record")));
    return BlessTupleDesc(desc);
}
