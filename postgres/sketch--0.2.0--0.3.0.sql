-- SPDX-License-Identifier: BSD-3-Clause
-- sketch--0.2.0--0.3.0.sql: ALTER EXTENSION sketch UPDATE from 0.2.0. The
-- types, functions and aggregates are those of 0.2.0, in a sketch.so that
-- reads and writes the same bytes; only a description changed.

\echo Use "ALTER EXTENSION sketch UPDATE" to load this file. \quit

COMMENT ON FUNCTION bloom_info(bloom) IS
    'layout, size, rate asked for, count of items, bytes, rate at that count, estimated items';
