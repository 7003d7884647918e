-- SPDX-License-Identifier: BSD-3-Clause
-- sketch.sql, installed as sketch--VERSION.sql: the objects of the extension
-- sketch (docs/postgres.md):
-- the type hll, libsketch's HyperLogLog in its native serialized format, and
-- the type bloom, its Bloom filter, with their functions and aggregates, all
-- in sketch.so (postgres/).
--
-- Volatility: what reads only its arguments is IMMUTABLE. hll_agg's
-- transition function is STABLE: for most types it hashes the text output,
-- which for some depends on settings (DateStyle and TimeZone for dates and
-- times, extra_float_digits for floats). Everything is
-- PARALLEL SAFE: no function keeps state outside its arguments and the
-- aggregate's own transition state.

\echo Use "CREATE EXTENSION sketch" to load this file. \quit

CREATE TYPE hll;

CREATE FUNCTION hll_in(cstring) RETURNS hll
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hll_out(hll) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hll_recv(internal) RETURNS hll
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hll_send(hll) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Text: \x and the bytes in hexadecimal; binary: the bytes. A dense sketch
-- (12,304 bytes at precision 14) is compressed and moved out of line by TOAST
-- as any bytea would be.
CREATE TYPE hll (
    INPUT = hll_in,
    OUTPUT = hll_out,
    RECEIVE = hll_recv,
    SEND = hll_send,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended
);
COMMENT ON TYPE hll IS 'HyperLogLog sketch in libsketch''s native format';

CREATE FUNCTION hll_count(hll) RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_count(hll) IS 'estimated number of distinct items';

CREATE FUNCTION hll_estimate(hll, OUT count bigint, OUT standard_error float8,
                             OUT lower float8, OUT upper float8)
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_estimate(hll) IS
    'estimated count, relative standard error, and bounds at 2 standard errors';

CREATE FUNCTION hll_union(hll, hll) RETURNS hll
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_union(hll, hll) IS
    'sketch of the union (at the smaller precision of the two)';
CREATE OPERATOR || (
    LEFTARG = hll,
    RIGHTARG = hll,
    FUNCTION = hll_union,
    COMMUTATOR = ||
);

CREATE FUNCTION hll_precision(hll) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_precision(hll) IS 'precision p: 2^p registers';

CREATE FUNCTION hll_fold(hll, integer) RETURNS hll
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_fold(hll, integer) IS
    'the sketch at a lower precision, as the same items would have built it';

CREATE FUNCTION hll_compare(a hll, b hll, OUT "precision" integer,
                            OUT "union" float8, OUT union_error float8,
                            OUT intersection float8, OUT intersection_error float8,
                            OUT a_only float8, OUT a_only_error float8,
                            OUT b_only float8, OUT b_only_error float8,
                            OUT jaccard float8, OUT jaccard_error float8,
                            OUT a_in_b float8, OUT a_in_b_error float8)
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_compare(hll, hll) IS
    'joint estimate of union, intersection, differences, Jaccard index and share of a in b, with standard errors';

CREATE FUNCTION hll_to_redis(hll) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_to_redis(hll) IS
    'the Redis HyperLogLog string of the sketch (precision 14; higher ones folded to 14)';

CREATE FUNCTION hll_from_redis(bytea) RETURNS hll
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hll_from_redis(bytea) IS
    'the sketch of a Redis HyperLogLog string (what GET of a PF key returns)';

-- The aggregates. One transition state for both (internal: an sk_hll in the
-- aggregate's memory context), with the final, combine, serialize and
-- deserialize functions that let the planner run them in parallel workers.
-- The transition functions are not strict: they keep the state when a
-- value is NULL, and start it on a group's first row.

CREATE FUNCTION hll_agg_trans(internal, anyelement) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION hll_agg_trans(internal, anyelement, integer) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION hll_union_agg_trans(internal, hll) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION hll_agg_combine(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION hll_agg_serialize(internal) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hll_agg_deserialize(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hll_agg_final(internal) RETURNS hll
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- SSPACE: the bytes a group's state takes, as the planner and a hashed
-- GROUP BY count them. Without it PostgreSQL guesses 8 KB for a state of
-- type internal, and a HashAggregate of more groups than work_mem * 2 / 8 KB
-- spills to disk however little they take. A state of a few hundred items
-- takes about 1 KB (256 bytes of state, the sketch and its sparse entries),
-- and one of many items 16 KB; the executor spills by the memory really
-- taken, whatever the estimate.
CREATE AGGREGATE hll_agg(anyelement) (
    SFUNC = hll_agg_trans,
    STYPE = internal,
    FINALFUNC = hll_agg_final,
    COMBINEFUNC = hll_agg_combine,
    SERIALFUNC = hll_agg_serialize,
    DESERIALFUNC = hll_agg_deserialize,
    SSPACE = 1024,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hll_agg(anyelement) IS
    'sketch (precision 14) of the distinct values: text, varchar, char(n) and bytea by their bytes, other types by their text output';

CREATE AGGREGATE hll_agg(anyelement, integer) (
    SFUNC = hll_agg_trans,
    STYPE = internal,
    FINALFUNC = hll_agg_final,
    COMBINEFUNC = hll_agg_combine,
    SERIALFUNC = hll_agg_serialize,
    DESERIALFUNC = hll_agg_deserialize,
    SSPACE = 1024,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hll_agg(anyelement, integer) IS
    'sketch of the distinct values at a precision of 4..18';

CREATE AGGREGATE hll_union_agg(hll) (
    SFUNC = hll_union_agg_trans,
    STYPE = internal,
    FINALFUNC = hll_agg_final,
    COMBINEFUNC = hll_agg_combine,
    SERIALFUNC = hll_agg_serialize,
    DESERIALFUNC = hll_agg_deserialize,
    SSPACE = 1024,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hll_union_agg(hll) IS 'sketch of the union of the sketches';

-- The type bloom: a Bloom filter of fixed size in libsketch's dump form
-- (docs/bloom-format.md), the same \x text and raw binary forms as hll. Its
-- items are the bytes hll_agg hashes for each type.

CREATE TYPE bloom;

CREATE FUNCTION bloom_in(cstring) RETURNS bloom
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_out(bloom) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_recv(internal) RETURNS bloom
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_send(bloom) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- A filter that holds few of its items is mostly zeros, which TOAST's
-- compression shrinks (STORAGE extended).
CREATE TYPE bloom (
    INPUT = bloom_in,
    OUTPUT = bloom_out,
    RECEIVE = bloom_recv,
    SEND = bloom_send,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended
);
COMMENT ON TYPE bloom IS 'Bloom filter in libsketch''s format';

-- STABLE as hll_agg_trans is: most types are looked up by their text output.
CREATE FUNCTION bloom_contains(bloom, anyelement) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloom, anyelement) IS
    'false if the value is certainly not in the filter, true if it may be';
CREATE OPERATOR @> (
    LEFTARG = bloom,
    RIGHTARG = anyelement,
    FUNCTION = bloom_contains
);

CREATE FUNCTION bloom_union(bloom, bloom) RETURNS bloom
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_union(bloom, bloom) IS
    'filter of the union (filters of the same capacity and rate)';

CREATE FUNCTION bloom_info(bloom, OUT layout text, OUT bits bigint, OUT hashes integer,
                           OUT capacity bigint, OUT fp_rate float8, OUT count bigint,
                           OUT bytes bigint, OUT expected_fp_rate float8,
                           OUT estimated_items bigint)
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_info(bloom) IS
    'layout, size, rate asked for, count of items, bytes, rate at that count, estimated items';

CREATE FUNCTION bloom_agg_trans(internal, anyelement, bigint, float8) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_trans(internal, bloom) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_combine(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_serialize(internal) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_agg_deserialize(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_agg_final(internal) RETURNS bloom
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(anyelement, bigint, float8) (
    SFUNC = bloom_agg_trans,
    STYPE = internal,
    FINALFUNC = bloom_agg_final,
    COMBINEFUNC = bloom_agg_combine,
    SERIALFUNC = bloom_agg_serialize,
    DESERIALFUNC = bloom_agg_deserialize,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bigint, float8) IS
    'Bloom filter of the values, for capacity items at a false-positive rate';

CREATE AGGREGATE bloom_union_agg(bloom) (
    SFUNC = bloom_union_agg_trans,
    STYPE = internal,
    FINALFUNC = bloom_agg_final,
    COMBINEFUNC = bloom_agg_combine,
    SERIALFUNC = bloom_agg_serialize,
    DESERIALFUNC = bloom_agg_deserialize,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_union_agg(bloom) IS 'filter of the union of the filters';
