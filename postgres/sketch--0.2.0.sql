-- sketch--0.2.0.sql: the objects of the extension sketch (docs/postgres.md):
-- the type hll, libsketch's HyperLogLog in its native serialized format, its
-- functions and its aggregates, all in sketch.so (postgres/).
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

CREATE AGGREGATE hll_agg(anyelement) (
    SFUNC = hll_agg_trans,
    STYPE = internal,
    FINALFUNC = hll_agg_final,
    COMBINEFUNC = hll_agg_combine,
    SERIALFUNC = hll_agg_serialize,
    DESERIALFUNC = hll_agg_deserialize,
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
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hll_union_agg(hll) IS 'sketch of the union of the sketches';
