#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# module_memory.sh: the used_memory a default BF.ADD key costs, for one or more
# Redis modules side by side: this build's sketch.so and a peer, such as
# RedisBloom 2.6.28 built outside the project (its `make build`).
#
# Usage: module_memory.sh MODULE.so [MODULE.so ...]
#   env N=20000        keys per measurement
#       ROUNDS=3       interleaved rounds (median reported)
#       REDIS_SERVER=/usr/bin/redis-server
#       REDIS_ARGS="..."   extra redis-server args, e.g. "--latency-tracking no"
#       CHUNK=1000     keys per pipeline batch
#
# For every module and every round it starts a fresh redis-server on a free loopback port
# (--save '' --appendonly no --loadmodule <so>) per measurement and reports
# (used_memory_after - used_memory_before) / N for:
#   bf_add   : BF.ADD k<i> x                          (default filter, one item)
#   reserve  : BF.RESERVE k<i> 0.01 100 ; BF.ADD k<i> x (should equal bf_add)
#   control  : SET k<i> x                             (plain string key: key/dict overhead)
#   bf-ctl   : bf_add - control                       (what the filter value itself costs)
# Writes are pipelined on a separate connection that is closed (and its client freed)
# before the second used_memory reading, so client buffers are not counted.
# No wall-clock timing is done.
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '3,23p' "$0" >&2
    exit 2
fi
for so in "$@"; do
    [ -r "$so" ] || { echo "module_memory.sh: cannot read module $so" >&2; exit 2; }
done
export N="${N:-20000}" ROUNDS="${ROUNDS:-3}" REDIS_SERVER="${REDIS_SERVER:-/usr/bin/redis-server}"
exec /usr/bin/python3 - "$@" <<'PYEOF'
import os, socket, subprocess, sys, tempfile, time, statistics
import redis

N = int(os.environ["N"]); ROUNDS = int(os.environ["ROUNDS"])
SERVER = os.environ["REDIS_SERVER"]
EXTRA = os.environ.get("REDIS_ARGS", "").split()
mods = [os.path.abspath(p) for p in sys.argv[1:]]
KINDS = ["bf_add", "reserve", "control"]

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def start(so):
    for _ in range(5):
        port = free_port()
        d = tempfile.mkdtemp(prefix="module-memory-")
        log = open(os.path.join(d, "redis.log"), "w")
        proc = subprocess.Popen([SERVER, "--port", str(port), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--dir", d,
                                 "--loadmodule", so] + EXTRA,
                                stdout=log, stderr=subprocess.STDOUT)
        r = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(200):
            if proc.poll() is not None: break
            try:
                r.ping(); return proc, r, port, d
            except redis.exceptions.ConnectionError:
                time.sleep(0.025)
        proc.kill(); proc.wait()
        sys.stderr.write("redis-server failed to start on %d with %s:\n%s\n"
                         % (port, so, open(os.path.join(d, "redis.log")).read()[-2000:]))
    sys.exit("module_memory.sh: could not start redis-server with " + so)

def stop(proc, r, d):
    try: r.shutdown(nosave=True)
    except Exception: pass
    try: proc.wait(timeout=10)
    except subprocess.TimeoutExpired: proc.kill(); proc.wait()
    subprocess.run(["rm", "-rf", d])

def used(r):
    return int(r.info("memory")["used_memory"])

def nclients(r):
    return int(r.info("clients")["connected_clients"])

def measure(so, kind):
    proc, r, port, d = start(so)
    try:
        base_clients = nclients(r)
        before = used(r)
        w = redis.Redis(host="127.0.0.1", port=port)
        CH = int(os.environ.get("CHUNK", "1000"))
        for s in range(0, N, CH):
            p = w.pipeline(transaction=False)
            for i in range(s, min(N, s + CH)):
                k = "k%d" % i
                if kind == "bf_add":
                    p.execute_command("BF.ADD", k, "x")
                elif kind == "reserve":
                    p.execute_command("BF.RESERVE", k, "0.01", "100")
                    p.execute_command("BF.ADD", k, "x")
                else:
                    p.execute_command("SET", k, "x")
            res = p.execute(raise_on_error=False)
            errs = [x for x in res if isinstance(x, Exception)]
            if errs:
                return None, "%s: %s" % (kind, errs[0])
        w.close(); w.connection_pool.disconnect()
        for _ in range(400):
            if nclients(r) <= base_clients: break
            time.sleep(0.005)
        # let serverCron finish incremental dict rehashing etc.: wait for a stable reading
        after = used(r)
        for _ in range(50):
            time.sleep(0.1)
            a2 = used(r)
            if a2 == after: break
            after = a2
        nkeys = r.dbsize()
        if nkeys != N:
            return None, "%s: dbsize %d != %d" % (kind, nkeys, N)
        return (after - before) / N, None
    finally:
        stop(proc, r, d)

def modinfo(so):
    proc, r, port, d = start(so)
    try:
        out = []
        for m in r.execute_command("MODULE", "LIST"):
            m = dict(zip(m[::2], m[1::2]))
            out.append("%s v%s" % (m[b"name"].decode(), m[b"ver"]))
        return ", ".join(out)
    finally:
        stop(proc, r, d)

ver = subprocess.run([SERVER, "--version"], capture_output=True, text=True).stdout.strip()
print("# %s" % ver)
print("# N=%d keys per measurement, %d interleaved rounds, fresh server per measurement%s"
      % (N, ROUNDS, (", extra args: " + " ".join(EXTRA)) if EXTRA else ""))
for i, so in enumerate(mods):
    print("# [%d] %s (%s)" % (i, so, modinfo(so)))

res = {(so, k): [] for so in mods for k in KINDS}
notes = {}
for rnd in range(ROUNDS):
    for kind in KINDS:
        for so in mods:          # modules interleaved within each round
            v, err = measure(so, kind)
            if err:
                notes[(so, kind)] = err
            else:
                res[(so, kind)].append(v)
    line = "# round %d:" % (rnd + 1)
    for i, so in enumerate(mods):
        line += "  [%d] " % i + " ".join(
            "%s=%.1f" % (k, res[(so, k)][-1]) if res[(so, k)] and len(res[(so, k)]) == rnd + 1
            else "%s=n/a" % k for k in KINDS)
    print(line, flush=True)

def med(so, k):
    v = res[(so, k)]
    return statistics.median(v) if v else None

def fmt(x):
    return "%10.1f" % x if x is not None else "%10s" % "n/a"

print()
print("used_memory growth per key, bytes (median of %d rounds, N=%d)" % (ROUNDS, N))
print("%-4s %-28s %10s %11s %10s %10s" % ("#", "module", "BF.ADD", "RESERVE+ADD", "SET ctl", "BF-ctl"))
for i, so in enumerate(mods):
    b, rv, c = med(so, "bf_add"), med(so, "reserve"), med(so, "control")
    name = os.path.basename(so)
    print("%-4s %-28s %10s %11s %10s %10s" % ("[%d]" % i, name, fmt(b), fmt(rv), fmt(c),
                                             fmt(b - c if b is not None and c is not None else None)))
for (so, kind), e in notes.items():
    print("# note [%d] %s" % (mods.index(so), e))
PYEOF
