"""A real redis-server whose wall clock is the conformance harness's instant, for the shims of
Redis-backed libraries (Implementations/README.md, rule 1: only the clock is controlled).

Redis decides with its own wall clock in three places a rate limiter depends on: TIME (and the
instant a script runs at), the expiry of every key (EXPIRE, PEXPIRE, SET ... EX/PX, TTL, PTTL),
and lazy deletion when a command reads an expired key. On a real server they all follow real
time, so a conformance run, whose instants are simulated, could not judge them. `ClockedRedis`
starts an unmodified `redis-server` with one thing replaced: `redisclock.c`, loaded with
LD_PRELOAD, answers its wall-clock readings (clock_gettime(CLOCK_REALTIME), gettimeofday, time)
from an 8-byte file that `set_clock(ns)` writes before each command. Nothing else of the server
changes: its commands, scripts and expiry code are Redis's own; active expiry is turned off
(`DEBUG SET-ACTIVE-EXPIRE 0`), so a key is deleted only when a command reads it past its expiry,
which makes the server's answers a function of the commands and instants alone, on any timeline.

The server listens on a Unix socket in a temporary directory of its own (no TCP port, so rows
can run in parallel), saves nothing, and is stopped when the shim exits.

    python3 Implementations/common/redisclock.py --self-test
        checks that the emulation is exact: TIME, expiry to the millisecond, lazy deletion, a
        script's clock, a clock that goes back, and real time having no effect (exit 0), or says
        why it could not run (exit 77: no redis-server, no C compiler).

Standard library only; Python 3.8+.
"""

import atexit
import hashlib
import json
import mmap
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "redisclock.c")
# Git-ignored, beside the other shims' builds.
BUILD = os.path.join(HERE, "..", ".build-redisclock")


class Unavailable(Exception):
    """redis-server or a C compiler is missing: the rows that need them cannot run here."""


def library():
    """The preload library, compiled from redisclock.c on first use (named by the source's hash,
    so an edit rebuilds it)."""
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    target = os.path.abspath(os.path.join(BUILD, "redisclock-%s.so" % digest))
    if os.path.exists(target):
        return target
    compiler = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)
    if compiler is None:
        raise Unavailable("no C compiler (cc, gcc or clang) to build redisclock.c")
    os.makedirs(BUILD, exist_ok=True)
    partial = target + ".%d.tmp" % os.getpid()
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", partial, SOURCE, "-ldl"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.replace(partial, target)
    return target


# ---------------------------------------------------------------------------------------------
# A minimal RESP2 client, for the shims that talk to Redis without a client library (the project's
# own scripts, ../redis/shim.py) and for the self-test.


class RedisError(Exception):
    pass


class Connection:
    """One connection: to a Unix socket's path, or to `redis://[:password@]host:port[/db]`."""

    def __init__(self, address):
        if address.startswith("/"):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(address)
            self.stream = self.sock.makefile("rb")
            return
        parts = urllib.parse.urlsplit(address)
        if parts.scheme != "redis":
            raise ValueError("REDIS_URL must be redis://[:password@]host:port[/db], not %r" % address)
        self.sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.stream = self.sock.makefile("rb")
        if parts.password:
            self.call("AUTH", urllib.parse.unquote(parts.password))
        db = parts.path.strip("/")
        if db:
            self.call("SELECT", db)

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(out))
        reply = self.read()
        if isinstance(reply, RedisError):
            raise reply
        return reply

    def read(self):
        line = self.stream.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("redis-server closed the connection")
        kind, body = line[:1], line[1:-2]
        if kind == b"+":
            return body.decode()
        if kind == b"-":
            return RedisError(body.decode())
        if kind == b":":
            return int(body)
        if kind == b"$":
            size = int(body)
            return None if size < 0 else self.stream.read(size + 2)[:-2].decode()
        if kind == b"*":
            size = int(body)
            return None if size < 0 else [self.read() for _ in range(size)]
        raise ConnectionError("not RESP2: %r" % line)

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------------------------------------
# The server.


class ClockedRedis:
    """One redis-server on its own Unix socket, reading its wall clock from `set_clock`."""

    def __init__(self, start_ns=0):
        server = shutil.which("redis-server")
        if server is None:
            raise Unavailable("redis-server is not installed (apt-get install redis-server)")
        preload = library()
        self.directory = tempfile.mkdtemp(prefix="ratelimit-redis-")
        self.socket_path = os.path.join(self.directory, "redis.sock")
        clock_path = os.path.join(self.directory, "clock")
        with open(clock_path, "wb") as f:
            f.write(struct.pack("=q", start_ns // 1000))
        self._clock_file = open(clock_path, "r+b")
        self._clock = mmap.mmap(self._clock_file.fileno(), 8)
        env = dict(os.environ, LD_PRELOAD=preload, RATELIMIT_CLOCK_FILE=clock_path)
        self.process = subprocess.Popen(
            [server, "--port", "0", "--unixsocket", self.socket_path, "--unixsocketperm", "700",
             "--save", "", "--appendonly", "no", "--dir", self.directory,
             "--enable-debug-command", "local", "--loglevel", "warning",
             "--logfile", os.path.join(self.directory, "redis.log")],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        atexit.register(self.stop)
        self.connection = self._connect()
        self.connection.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")

    def _connect(self):
        # The server's start is real time passing; waiting for it decides nothing.
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise Unavailable("redis-server exited at start (status %s): %s"
                                  % (self.process.returncode, self._log()))
            try:
                connection = Connection(self.socket_path)
                connection.call("PING")
                return connection
            except OSError:
                if time.monotonic() > deadline:
                    raise Unavailable("redis-server did not answer within 30 s")
                time.sleep(0.01)

    def _log(self):
        """The server's log, read before the folder it is in is removed."""
        try:
            with open(os.path.join(self.directory, "redis.log")) as f:
                return f.read().strip()[-2000:] or "(an empty log)"
        except OSError:
            return "(no log)"

    @property
    def url(self):
        """The server's address as `redis-py` takes it (`redis.from_url`)."""
        return "unix://" + self.socket_path

    @property
    def version(self):
        """The server's version, as INFO reports it."""
        info = self.connection.call("INFO", "server")
        return next(line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("redis_version:"))

    def set_clock(self, ns):
        """The server's wall clock reads `ns` nanoseconds since the Unix epoch from now on, to the
        microsecond (rounded down, as gettimeofday reads a real clock): Redis reads nothing finer
        (TIME and its scripts' instants are microseconds, expiry milliseconds). Microseconds in 64
        bits reach 292,000 years past the epoch, beyond any origin a shim puts instant 0 at plus
        Int64.max ns."""
        self._clock[0:8] = struct.pack("=q", ns // 1000)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_for_shim():
    """A ClockedRedis for a shim, or None after answering the harness's first message with an
    error that says why the server could not start (the run then reports the row as not run)."""
    try:
        return ClockedRedis()
    except (Unavailable, RedisError) as reason:
        message = {"type": "error", "message": "cannot start redis-server: %s" % reason}
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()
        return None


def serve_shim(argv, make):
    """The main of a shim of a Redis-backed library: it takes no argument, starts a ClockedRedis
    of its own, and serves the protocol with `make(server)`, the shim; returns the exit status."""
    import shimproto

    if argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        return 2
    server = start_for_shim()
    if server is None:
        return 2
    return shimproto.serve(make(server))


def start_for_findings():
    """A ClockedRedis for a findings script, or None after printing why it could not start."""
    try:
        return ClockedRedis()
    except (Unavailable, RedisError) as reason:
        print("cannot start redis-server: %s" % reason)
        return None


# ---------------------------------------------------------------------------------------------
# The self-test: the emulation is exact.


def self_test():
    try:
        server = ClockedRedis()
    except Unavailable as reason:
        print("skipped: %s" % reason)
        return 77
    failures = []

    def check(what, actual, expected):
        status = "ok" if actual == expected else "FAILED"
        print("%s: %s: %r (expected %r)" % (status, what, actual, expected))
        if actual != expected:
            failures.append(what)

    redis = server.connection
    ms = 1_000_000
    t = 1_700_000_000_123_456_789
    server.set_clock(t)
    check("TIME reads the instant, to the microsecond", redis.call("TIME"), ["1700000000", "123456"])
    check("a script's TIME reads it too", redis.call("EVAL", "return redis.call('TIME')", 0),
          ["1700000000", "123456"])

    # PX 1000 at t: Redis stores ⌊t / 1 ms⌋ + 1000 ms and deletes the key once its clock's
    # milliseconds exceed that (keyIsExpired: now > when).
    when = t // ms + 1000
    redis.call("SET", "k", "v", "PX", 1000)
    check("PTTL at the instant of SET", redis.call("PTTL", "k"), 1000)
    server.set_clock(when * ms + 999_999)
    check("the key lives through its last millisecond", redis.call("PTTL", "k"), 0)
    server.set_clock((when + 1) * ms)
    check("and is gone at the next one", redis.call("EXISTS", "k"), 0)

    # EXPIRE in seconds, read by a script.
    server.set_clock(t)
    redis.call("SET", "s", "v")
    redis.call("EXPIRE", "s", 2)
    server.set_clock(t + 1_500 * ms)
    check("a script's PTTL on the same clock", redis.call("EVAL", "return redis.call('PTTL', KEYS[1])", 1, "s"), 500)
    server.set_clock((t // ms + 2000) * ms)
    check("EXPIRE 2 lives through ⌊t⌋ + 2 s", redis.call("EXISTS", "s"), 1)
    server.set_clock((t // ms + 2001) * ms)
    check("EXPIRE 2 is gone 1 ms later", redis.call("EXISTS", "s"), 0)

    # Only a command deletes: a key whose expiry the clock passed and came back from, unread in
    # between, is still there (active expiry is off), so answers depend on the timeline alone.
    server.set_clock(t)
    redis.call("SET", "b", "v", "PX", 1000)
    server.set_clock(t + 5_000 * ms)
    server.set_clock(t + 500 * ms)
    check("a key unread past its expiry survives the clock going back", redis.call("PTTL", "b"), 500)
    server.set_clock(t + 5_000 * ms)
    check("read past its expiry, it is deleted", redis.call("EXISTS", "b"), 0)
    server.set_clock(t + 500 * ms)
    check("and stays deleted when the clock goes back", redis.call("EXISTS", "b"), 0)

    # Real time has no effect: the one real wait of these checks, since letting real time pass
    # is the only way to show that it changes nothing.
    server.set_clock(t)
    redis.call("SET", "r", "v", "PX", 100)
    time.sleep(0.3)
    check("real time passing moves neither TIME nor expiry",
          (redis.call("TIME"), redis.call("PTTL", "r")), (["1700000000", "123456"], 100))
    server.stop()
    print("%d failed" % len(failures) if failures else "the clock of redis-server is exact")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.stderr.write("usage: redisclock.py --self-test\n")
    sys.exit(2)
