# SPDX-License-Identifier: BSD-3-Clause
"""Builds sketch._sketch, the C extension, over libsketch's static library.

The library comes from a CMake build tree when SKETCH_BUILD_DIR names one
(the tests build the extension against the tree they test), and otherwise
from a build of the library alone that this script makes with CMake in
setuptools' temporary directory. Both take the library's own compiler
options (files that must not contract floating-point operations, the Bloom
probes' processor clones), which a list of sources here would not.
CFLAGS and LDFLAGS from the environment reach the extension's compiler, as
the sanitized test builds need.
"""
import os
import re
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def version():
    """The version defined once, in include/sketch/core.h."""
    with open(os.path.join(ROOT, "include", "sketch", "core.h"), encoding="utf-8") as f:
        text = f.read()
    return ".".join(re.search(r"^#define SK_VERSION_%s (\d+)$" % part, text, re.M).group(1)
                    for part in ("MAJOR", "MINOR", "PATCH"))


class BuildWithLibrary(build_ext):
    def run(self):
        tree = os.environ.get("SKETCH_BUILD_DIR")
        if tree:
            tree = os.path.abspath(tree)
        else:
            tree = os.path.join(os.path.abspath(self.build_temp), "libsketch")
            subprocess.check_call(["cmake", "-S", ROOT, "-B", tree, "-DSKETCH_LIBRARY_ONLY=ON",
                                   "-DCMAKE_BUILD_TYPE=Release"])
            subprocess.check_call(["cmake", "--build", tree, "--target", "sketch_static",
                                   "-j", str(os.cpu_count() or 1)])
        archive = os.path.join(tree, "src", "libsketch.a")
        if not os.path.exists(archive):
            raise SystemExit("sketch: no %s: build the library first (cmake --build %s)"
                             % (archive, tree))
        for ext in self.extensions:
            ext.extra_objects.append(archive)
            ext.depends.append(archive)
        super().run()


SOURCES = ["module.c", "errors.c", "family.c", "items.c", "item_text.c", "reader.c", "batches.c",
           "hll.c", "hll_map.c", "bloom.c", "bloom_file.c", "cuckoo.c", "cms.c", "topk.c", "tdigest.c",
           "tdigest_values.c", "window_hll.c", "aging_bloom.c"]

setup(
    version=version(),
    ext_modules=[Extension(
        "sketch._sketch",
        sources=[os.path.join("src", name) for name in SOURCES],
        include_dirs=[os.path.join(ROOT, "include")],
        depends=[os.path.join("src", name) for name in ("common.h", "bloom_object.h")],
        libraries=["xxhash", "m"],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                            "-fvisibility=hidden"]
        + (["-Werror"] if os.environ.get("SKETCH_WERROR") else []),
        # The library's sk_ symbols stay inside: another libsketch in the
        # same process (a ctypes user's) neither takes nor gives calls.
        extra_link_args=["-Wl,--exclude-libs,ALL"],
    )],
    cmdclass={"build_ext": BuildWithLibrary},
)
