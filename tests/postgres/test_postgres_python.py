# SPDX-License-Identifier: BSD-3-Clause
"""The Python package (python/) and the extension hash values alike: a
HyperLogLog built in Python from ints, floats, bools, str and bytes is,
byte for byte, hll_agg of the same values in columns of the matching SQL
types; and a float's text is float8out's, value for value. The package is
the one ctest's python_package step built (SKETCH_PY_SITE)."""
import math
import os
import random
import struct
import sys

import pytest

from conftest import BUILD_DIR

sys.path.insert(0, os.environ.get("SKETCH_PY_SITE", os.path.join(BUILD_DIR, "python-site")))
import sketch  # noqa: E402


def native(conn, sql, params=None):
    return bytes(conn.execute(sql, params).fetchone()[0])


def random_doubles(n, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if not math.isnan(x):
            out.append(x)
    return out + [0.0, -0.0, 1e15, 1e14, 1e-4, 1e-5, 0.1, 2.0, 123456789012345.6,
                  float("inf"), float("-inf"), 5e-324, 1.7976931348623157e308]


def test_float_text_is_float8out(conn):
    values = random_doubles(100000, 11) + [10.0 ** e for e in range(-30, 30)]
    texts = conn.execute("SELECT x::text FROM unnest(%s::float8[]) x", (values,)).fetchall()
    for x, (text,) in zip(values, texts):
        assert sketch.item_bytes(x) == text.encode(), x
    nan = conn.execute("SELECT 'NaN'::float8::text").fetchone()[0]
    assert sketch.item_bytes(float("nan")) == nan.encode()


@pytest.mark.parametrize("sql_type,values", [
    ("int4", list(range(-5000, 5000, 3))),
    ("int8", [v * 1000003 - 2**62 for v in range(4000)] + [2**63 - 1, -2**63]),
    ("float8", random_doubles(5000, 3)),
    ("bool", [True, False]),
    ("text", ["v%d-é" % i for i in range(5000)] + [""]),
    ("bytea", [b"\x00\xff" * (i % 5) + str(i).encode() for i in range(3000)]),
])
def test_hll_agg_is_the_python_sketch(conn, sql_type, values):
    h = sketch.HyperLogLog()
    h.update(values)
    sql = "SELECT hll_send(hll_agg(x)) FROM unnest(%%s::%s[]) x" % sql_type
    assert native(conn, sql, (values,)) == h.to_bytes()


def test_numpy_columns_are_their_sql_columns(conn):
    import numpy as np
    ints = np.arange(-3000, 3000, dtype=np.int64) * 7919
    floats = np.array(random_doubles(3000, 5))
    for array, sql_type in ((ints, "int8"), (floats, "float8")):
        h = sketch.HyperLogLog()
        h.update(array)
        sql = "SELECT hll_send(hll_agg(x)) FROM unnest(%%s::%s[]) x" % sql_type
        assert native(conn, sql, (array.tolist(),)) == h.to_bytes()
