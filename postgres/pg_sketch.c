/*
 * pg_sketch.c: the extension's module block and the helpers every type
 * shares (pg_sketch.h): libsketch's memory from PostgreSQL's memory
 * contexts, its status codes as errors, and hll values to and from
 * sketches.
 */
#include "pg_sketch.h"

#include "utils/memutils.h"

PG_MODULE_MAGIC;

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
    size_t size = sk_hll_serialized_size(h, SK_HLL_NATIVE), len;
    struct varlena *value = palloc(VARHDRSZ + size);
    int status = sk_hll_serialize(h, SK_HLL_NATIVE, VARDATA(value), size, &len);
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot serialize the sketch");
    SET_VARSIZE(value, VARHDRSZ + len);
    return value;
}
