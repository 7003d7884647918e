# SPDX-License-Identifier: BSD-3-Clause
"""node-redis 5.9.0 (npm `redis`) against the module, unchanged: runs
tests/module/node/sketch.test.mjs with node's own test runner against a server
of conftest.py's `servers`, in RESP3 (node-redis's default) and RESP2.

Needs node (18 or later: Debian 12's nodejs is 18.19), npm and tests/module/node/node_modules (`npm ci`
in tests/module/node, from package-lock.json). Any of them missing is a
FAILURE, never a skip. The node script gets the server's port in
SKETCH_NODE_PORT; its whole output is printed when it fails.
"""
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "node")
SCRIPT = "sketch.test.mjs"
REDIS_VERSION = "5.9.0"     # the newest node-redis that runs on Node.js 18
NODE_MAJOR = 18            # what its package.json's "engines" asks
# The whole node run, seconds (it takes about one); node 18 has no
# --test-timeout for each test.
NODE_TIMEOUT = 180


def _require_node():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: install Node.js %d or later" % NODE_MAJOR, pytrace=False)
    if shutil.which("npm") is None:
        pytest.fail("npm is not on PATH: install npm (to run `npm ci` in %s)" % NODE_DIR,
                    pytrace=False)
    version = subprocess.run([node, "--version"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if major < NODE_MAJOR:
        pytest.fail("node %r is too old: node-redis %s needs %d or later"
                    % (version, REDIS_VERSION, NODE_MAJOR), pytrace=False)
    manifest = os.path.join(NODE_DIR, "node_modules", "redis", "package.json")
    try:
        with open(manifest) as f:
            installed = json.load(f).get("version")
    except (OSError, ValueError):
        pytest.fail("%s is missing: run `npm ci` in %s" % (manifest, NODE_DIR), pytrace=False)
    if installed != REDIS_VERSION:
        pytest.fail("node_modules holds redis %s, not %s: run `npm ci` in %s"
                    % (installed, REDIS_VERSION, NODE_DIR), pytrace=False)
    for sub in ("client", "bloom"):
        if not os.path.isfile(os.path.join(NODE_DIR, "node_modules", "@redis", sub,
                                           "package.json")):
            pytest.fail("node_modules/@redis/%s is missing: run `npm ci` in %s"
                        % (sub, NODE_DIR), pytrace=False)
    return node


def _text(data):
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def test_node_redis(servers):
    node = _require_node()
    server = servers.start()
    env = dict(os.environ)
    env["SKETCH_NODE_HOST"] = "127.0.0.1"
    env["SKETCH_NODE_PORT"] = str(server.port)
    env.pop("NODE_OPTIONS", None)
    argv = [node, "--test", "--test-reporter=spec", SCRIPT]
    try:
        run = subprocess.run(argv, cwd=NODE_DIR, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=NODE_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail("node --test did not finish in %d s:\n%s\n%s\nserver log:\n%s"
                    % (NODE_TIMEOUT, _text(e.stdout), _text(e.stderr), server.log()[-4000:]),
                    pytrace=False)
    out = _text(run.stdout) + _text(run.stderr)
    if run.returncode != 0:
        pytest.fail("node --test %s exited with %d:\n%s\nserver log:\n%s"
                    % (SCRIPT, run.returncode, out, server.log()[-4000:]), pytrace=False)
    if not server.alive():
        pytest.fail("the server died during the node tests:\n%s\n%s"
                    % (out, server.log()[-4000:]), pytrace=False)
    # node's runner passes with no tests at all: insist that they ran
    assert "# fail 0" in out or "\u2139 fail 0" in out, out
    assert "# pass 0" not in out and "\u2139 pass 0" not in out, out
