# SPDX-License-Identifier: BSD-3-Clause
"""A RESP2/RESP3 client that keeps the wire type of every reply.

redis-py 4.3 speaks RESP2 only, and client libraries turn replies into their
own types; the tests of the module's replies need to see what the server
sent: a RESP3 boolean (#t) and an integer (:1) are different answers. Each
reply is a Reply(kind, value): kind is the RESP type's name ("simple",
"error", "integer", "bulk", "array", "map", "set", "bool", "double", "null",
"verbatim", "bignum"); value is the Python value, with the elements of an
array or set as Reply objects and a map as a list of (key, value) pairs of
Reply objects, in the order the server sent them.
"""
import collections
import socket

Reply = collections.namedtuple("Reply", "kind value")

_KINDS = {b"+": "simple", b"-": "error", b":": "integer", b"$": "bulk", b"*": "array",
          b"%": "map", b"~": "set", b"#": "bool", b",": "double", b"_": "null",
          b"=": "verbatim", b"(": "bignum", b">": "push"}


class RespClient:
    """One connection; hello(3) switches it to RESP3."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def hello(self, protocol):
        reply = self.call("HELLO", str(protocol))
        assert reply.kind in ("map", "array"), reply
        return reply

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _read(self):
        line = self._line()
        kind, rest = _KINDS[line[:1]], line[1:]
        if kind in ("simple", "error"):
            return Reply(kind, rest.decode())
        if kind in ("integer", "bignum"):
            return Reply(kind, int(rest))
        if kind == "double":
            return Reply(kind, float(rest))
        if kind == "bool":
            return Reply(kind, rest == b"t")
        if kind == "null":
            return Reply(kind, None)
        if kind in ("bulk", "verbatim"):
            n = int(rest)
            return Reply("null", None) if n < 0 else Reply(kind, self._exact(n))
        n = int(rest)
        if n < 0:
            return Reply("null", None)
        if kind == "map":
            return Reply(kind, [(self._read(), self._read()) for _ in range(n)])
        return Reply(kind, [self._read() for _ in range(n)])


def plain(reply):
    """The reply as Python values, without the wire types."""
    if reply.kind in ("array", "set", "push"):
        return [plain(e) for e in reply.value]
    if reply.kind == "map":
        return {plain(k): plain(v) for k, v in reply.value}
    if reply.kind in ("bulk", "verbatim"):
        return reply.value
    return reply.value


def text(reply):
    """A reply's value as text where it is bytes."""
    v = plain(reply)
    return v.decode() if isinstance(v, bytes) else v


def pairs(reply):
    """A flat list of names and values (a RESP2 map) as a dict by name."""
    return {text(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}
