# SPDX-License-Identifier: BSD-3-Clause
"""The stub (python/sketch/__init__.pyi) names what the classes have, no
more and no less; every class, method and property has a docstring for
help(); the stub and py.typed are installed with the package."""
import ast
import os

import sketch

STUB = os.path.join(os.path.dirname(sketch.__file__), "__init__.pyi")


def stub_classes():
    with open(STUB) as f:
        tree = ast.parse(f.read())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name for n in node.body
                                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return classes


def public(cls):
    return {name for name in dir(cls) if not name.startswith("_")}


def test_stub_matches_the_classes():
    assert os.path.exists(os.path.join(os.path.dirname(sketch.__file__), "py.typed"))
    classes = stub_classes()
    assert set(classes) == {name for name in sketch.__all__ if isinstance(getattr(sketch, name), type)}
    for name, members in classes.items():
        cls = getattr(sketch, name)
        assert {m for m in members if not m.startswith("_")} == public(cls), name
        for m in members:
            assert hasattr(cls, m), (name, m)


def test_everything_has_a_docstring():
    for name in sketch.__all__:
        obj = getattr(sketch, name)
        if isinstance(obj, str):
            continue
        assert obj.__doc__, name
        if isinstance(obj, type):
            for member in public(obj):
                assert getattr(obj, member).__doc__, (name, member)
