/*
 * hll_agg.c: the aggregates that build sketches: hll_agg(value [, precision])
 * over the values of any type, and hll_union_agg(hll), the union of sketches.
 *
 * Both keep one transition state, an sk_hll in the aggregate's memory
 * context (type internal), and share its final, combine, serialize and
 * deserialize functions, which make them parallel: workers build partial
 * sketches, send them to the leader in the native format, and the leader
 * merges them. Since a union of sketches is the sketch of the union, the
 * parallel result is the serial one, register for register.
 *
 * What hll_agg hashes (docs/postgres.md): for text, varchar, char(n) and
 * bytea (and domains over them), the bytes of the value itself; for every
 * other type, the bytes of its text output, as the type's output function
 * writes it (what psql and COPY print). So hll_agg(x::text) and
 * `sketch count` of the same lines, or Redis's PFADD of the same strings,
 * agree register for register.
 */
#include "pg_sketch.h"

#include "catalog/pg_type.h"
#include "utils/lsyscache.h"

/* What the transition function knows of its value's type, worked out on its
 * first call (in the function's fn_extra) rather than on every row. */
typedef struct hash_input {
    Oid type;
    bool hash_bytes; /* a varlena whose own bytes are hashed */
    FmgrInfo output; /* otherwise the type's output function */
} hash_input;

static bool hashes_own_bytes(Oid type)
{
    Oid base = getBaseType(type);
    /* char(n) included: its bytes keep its padding, as its output does. */
    return base == TEXTOID || base == VARCHAROID || base == BPCHAROID || base == BYTEAOID;
}

static hash_input *input_of(FunctionCallInfo fcinfo)
{
    hash_input *input = fcinfo->flinfo->fn_extra;
    Oid type = get_fn_expr_argtype(fcinfo->flinfo, 1);
    if (input != NULL && input->type == type)
        return input;
    if (!OidIsValid(type))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("could not determine the type of hll_agg's argument")));
    if (input == NULL)
        input = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof *input);
    input->type = type;
    input->hash_bytes = hashes_own_bytes(type);
    if (!input->hash_bytes) {
        Oid output;
        bool varlena;
        getTypeOutputInfo(type, &output, &varlena);
        fmgr_info_cxt(output, &input->output, fcinfo->flinfo->fn_mcxt);
    }
    fcinfo->flinfo->fn_extra = input;
    return input;
}

static MemoryContext aggregate_context(FunctionCallInfo fcinfo, const char *function)
{
    MemoryContext cxt;
    if (!AggCheckCallContext(fcinfo, &cxt))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s called in non-aggregate context", function)));
    return cxt;
}

/* An empty transition state, for the whole aggregate to live in cxt. */
static sk_hll *new_state(MemoryContext cxt, unsigned precision)
{
    sk_allocator allocator = pg_sketch_allocator(cxt);
    sk_hll *h;
    int status = sk_hll_create(&h, precision, &allocator);
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot create a sketch");
    return h;
}

/* Merges src into *state, creating *state first (at src's precision) when
 * there is none yet. */
static void merge_into(MemoryContext cxt, sk_hll **state, const sk_hll *src)
{
    if (*state == NULL)
        *state = new_state(cxt, sk_hll_precision(src));
    int status = sk_hll_merge(*state, src);
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot merge the sketches");
}

/* hll_agg_trans(state, value [, precision]). The state exists from the
 * group's first row on, so that a group of NULLs gives an empty sketch (a
 * count of 0) at the precision asked for; NULL values are skipped. The
 * precision must be the same on every row: a sketch has one. */
PG_FUNCTION_INFO_V1(hll_agg_trans);
Datum hll_agg_trans(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = aggregate_context(fcinfo, "hll_agg_trans");
    sk_hll *state = PG_ARGISNULL(0) ? NULL : (sk_hll *)PG_GETARG_POINTER(0);
    unsigned precision = SK_HLL_DEFAULT_PRECISION;
    if (PG_NARGS() > 2) {
        if (PG_ARGISNULL(2))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("hll_agg's precision must not be NULL")));
        precision = pg_sketch_precision_arg(PG_GETARG_INT32(2));
    }
    if (state == NULL)
        state = new_state(cxt, precision);
    else if (sk_hll_precision(state) != precision)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("hll_agg's precision changed from %u to %u within a group",
                               sk_hll_precision(state), precision)));
    if (!PG_ARGISNULL(1)) {
        hash_input *input = input_of(fcinfo);
        int status;
        if (input->hash_bytes) {
            struct varlena *v = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(1));
            status = sk_hll_add(state, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
        } else {
            char *text = OutputFunctionCall(&input->output, PG_GETARG_DATUM(1));
            status = sk_hll_add(state, text, strlen(text));
            pfree(text);
        }
        if (status < 0)
            pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot add to the sketch");
    }
    PG_RETURN_POINTER(state);
}

/* hll_union_agg_trans(state, hll): NULL sketches are skipped; the state
 * starts at the first sketch's precision, and a sketch of a lower one
 * folds the state down to it (sk_hll_merge). */
PG_FUNCTION_INFO_V1(hll_union_agg_trans);
Datum hll_union_agg_trans(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = aggregate_context(fcinfo, "hll_union_agg_trans");
    sk_hll *state = PG_ARGISNULL(0) ? NULL : (sk_hll *)PG_GETARG_POINTER(0);
    if (!PG_ARGISNULL(1)) {
        sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(1), CurrentMemoryContext);
        merge_into(cxt, &state, h);
        sk_hll_free(h);
    }
    if (state == NULL)
        PG_RETURN_NULL();
    PG_RETURN_POINTER(state);
}

/* Combines two partial states. The second one may live in a shorter
 * context than the aggregate's (a deserialized one does), so it is merged
 * into the first, never kept. */
PG_FUNCTION_INFO_V1(hll_agg_combine);
Datum hll_agg_combine(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = aggregate_context(fcinfo, "hll_agg_combine");
    sk_hll *state = PG_ARGISNULL(0) ? NULL : (sk_hll *)PG_GETARG_POINTER(0);
    if (!PG_ARGISNULL(1))
        merge_into(cxt, &state, (const sk_hll *)PG_GETARG_POINTER(1));
    if (state == NULL)
        PG_RETURN_NULL();
    PG_RETURN_POINTER(state);
}

/* A partial state as bytea for the leader: the native format. */
PG_FUNCTION_INFO_V1(hll_agg_serialize);
Datum hll_agg_serialize(PG_FUNCTION_ARGS)
{
    (void)aggregate_context(fcinfo, "hll_agg_serialize");
    PG_RETURN_BYTEA_P((bytea *)pg_hll_to_value((const sk_hll *)PG_GETARG_POINTER(0)));
}

PG_FUNCTION_INFO_V1(hll_agg_deserialize);
Datum hll_agg_deserialize(PG_FUNCTION_ARGS)
{
    (void)aggregate_context(fcinfo, "hll_agg_deserialize");
    PG_RETURN_POINTER(pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext));
}

/* The state as an hll value; it stays as it is (FINALFUNC_MODIFY =
 * READ_ONLY), so that a window or a shared state can finish it again. */
PG_FUNCTION_INFO_V1(hll_agg_final);
Datum hll_agg_final(PG_FUNCTION_ARGS)
{
    (void)aggregate_context(fcinfo, "hll_agg_final");
    PG_RETURN_POINTER(pg_hll_to_value((const sk_hll *)PG_GETARG_POINTER(0)));
}
