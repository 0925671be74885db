#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `ratelimit-io` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/ratelimit-io/findings.py

Each check builds a `RateLimiter(client, limit=Limit(...), key=..., algorithm=..., max_wait=0)`
over a `redis.Redis` client of an unmodified redis-server whose wall clock is set by the check
(../common/redisclock.py, ClockedRedis: the server's clock, which the library's Lua scripts read
with `redis.call('TIME')`, is the only thing replaced), and calls `acquire_sync()`. The protocol's
instant 0 is 1,700,000,000 s after the Unix epoch, as in the shim; instants are written in
nanoseconds from it (multiples of 1000: the server reads whole microseconds).

An answer is printed as the shim sends it: `allowed` when `acquire_sync()` returns,
`rejected(<ns>ns)` for its `RateLimitExceededError.retry_after` (seconds, a float of whole
milliseconds) in nanoseconds. It prints what the library answers next to what the Spec answers,
and exits 1 if any finding no longer reproduces (for instance after a version change), 2 if
redis-server cannot be started here.

The cases are the smallest cases of the run of README.md ("Findings"), shrunk by the suite, plus
the case that shows a row's worst where that shows more.
"""

import inspect
import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import redis  # noqa: E402
import redisclock  # noqa: E402
from ratelimit_io import Algorithm, Limit, RateLimiter, RateLimitExceededError, __version__  # noqa: E402

NS = 1_000_000_000
MS = 1_000_000
PRESENT = 1_700_000_000  # the Unix time (s) of the protocol's instant 0, as in the shim

SERVER = redisclock.start_for_findings()
if SERVER is None:
    sys.exit(2)
CLIENT = redis.Redis.from_url(SERVER.url)


class Lim:
    """One limiter on a key of its own; `at(ns)` sets the server's clock to instant ns."""

    count = 0

    def __init__(self, algorithm, requests, period_ns):
        Lim.count += 1
        self.limiter = RateLimiter(CLIENT, limit=Limit(requests, seconds=float(Fraction(period_ns, NS))),
                                   key="findings", algorithm=algorithm, max_wait=0,
                                   key_prefix="F%d" % Lim.count)

    def acquire(self, now):
        """acquire_sync() at instant `now` (ns), answered as the shim sends it."""
        SERVER.set_clock(PRESENT * NS + now)
        try:
            self.limiter.acquire_sync()
        except RateLimitExceededError as refusal:
            return "rejected(%dns)" % (round(Fraction(refusal.retry_after) * 1000) * MS)
        return "allowed"


def fixed(limit, window_ns):
    return Lim(Algorithm.FIXED_WINDOW, limit, window_ns)


def sliding(limit, window_ns):
    return Lim(Algorithm.SLIDING_WINDOW, limit, window_ns)


def gcra(burst, interval_ns):
    """The shim's mapping: Limit(B, seconds=B·T), a burst of B, one request every T."""
    return Lim(Algorithm.GCRA, burst, burst * interval_ns)


def run(lim, instants):
    return [lim.acquire(now) for now in instants]


FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        print("     (expected the library to answer %s)" % (expected_by_library,))
        FAILED.append(name)


# --- CORE-10: time going backwards (the scripts evaluate at the server's TIME; no latest instant) ---

check("CORE-10 sliding-window-log/random-seed-1-trace-24, shrunk (the row's smallest, over-promise), "
      "limit 4, W 28 ms: the acquire at 0 ns is logged at 0 ns (_SLIDING_WINDOW: `local at = now`, "
      "ZADD), so at 36.611 ms it has expired: two acquires are admitted there",
      run(sliding(4, 28 * MS), [18_721_000, 18_721_000, 0, 36_611_000, 36_611_000]),
      ["allowed"] * 5,
      "allowed(3), allowed(2), allowed(1) (evaluated at 18.721 ms, CORE-10), allowed(0), then "
      "rejected(10110000ns): the three entries of 18.721 ms are in force until 46.721 ms")

check("CORE-10 sliding-window-log/random-seed-1-trace-35, shrunk (early retry), limit 2, W 1 ms: the "
      "acquire at 0 ns is logged at 0 ns and is the blocker of the next; at 1 ms a third is admitted",
      run(sliding(2, MS), [909_000, 0, 0, 1_000_000]),
      ["allowed", "allowed", "rejected(1000000ns)", "allowed"],
      "allowed(1), allowed(0), rejected(1909000ns) (both entries are at 909 us), rejected(909000ns) "
      "at 1 ms: three admissions where the Spec's log holds two until 1.909 ms")

check("CORE-10 sliding-window-log/random-seed-1-trace-45, shrunk (over-promise), limit 6, W 1 ms",
      run(sliding(6, MS), [35_943_000] * 4 + [0, 1_159_000, 1_159_000]),
      ["allowed"] * 7,
      "allowed(5) ... allowed(2), allowed(1), allowed(0), then rejected(35784000ns): six entries at "
      "35.943 ms")

check("CORE-10 fixed-window/random-seed-1-trace-24, shrunk (liveness), limit 3, W 1 ms: the window "
      "opened at 11.499 ms has two free slots; at 10.053 ms its start lies ahead of TIME and "
      "_FIXED_WINDOW answers the wait until it (`wait = math.max(start - now, 0)`), as for a reserved "
      "window; back at 11.499 ms the slot is there",
      run(fixed(3, MS), [11_499_000, 10_053_000, 11_499_000]),
      ["allowed", "rejected(2000000ns)", "allowed"],
      "allowed(2), allowed(1) (evaluated at 11.499 ms, in the window [11.499 ms, 12.499 ms)), allowed(0)")

check("CORE-10 fixed-window/random-seed-1-trace-29 (the row's worst, 'has refused acquire(1) since "
      "0 ns'), limit 63, W 31 ms: after an acquire at 10 us every acquire before 10 us is refused",
      run(fixed(63, 31 * MS), [10_000, 0, 1_000, 2_000]),
      ["allowed", "rejected(1000000ns)", "rejected(1000000ns)", "rejected(1000000ns)"],
      "allowed(62), allowed(61), allowed(60), allowed(59)")

check("CORE-10 fixed-window/random-seed-1-trace-29, shrunk (liveness, at the end of the timeline), "
      "limit 3, W 1 ms",
      run(fixed(3, MS), [9223372036854766000, 9223372036853560000]),
      ["allowed", "rejected(2000000ns)"],
      "allowed(2), allowed(1)")

check("CORE-10 gcra/random-seed-1-trace-18, shrunk (the row's smallest, liveness), burst 2, T 1 ms: "
      "at 0 ns the backlog is measured from TIME, 1.598 ms before the one written "
      "(`(now - written) * limit` < 0 adds it, _GCRA), and the second slot of the burst is refused",
      run(gcra(2, MS), [1_598_000, 0, 1_598_000]),
      ["allowed", "rejected(2000000ns)", "allowed"],
      "allowed(1), allowed(0) (evaluated at 1.598 ms: tat 2.598 ms, 3.598 ms - 1.598 ms <= 2 ms)")

check("CORE-10 gcra/random-seed-1-trace-42, shrunk (difference), burst 1, T 1 ms",
      run(gcra(1, MS), [1_000, 0, 1_000_000, 1_001_000]),
      ["allowed", "rejected(2000000ns)", "rejected(1000000ns)", "allowed"],
      "allowed(0), rejected(1001000ns) (evaluated at 1 us, admitted at 1.001 ms), rejected(1000ns), "
      "allowed(0): the library's decisions are the Spec's, its wait is the 1.001 ms in whole ms")

check("CORE-10 gcra/random-seed-1-trace-47, shrunk (difference), burst 1, T 1 ms",
      run(gcra(1, MS), [86399999999962000, 86399999999961000]),
      ["allowed", "rejected(2000000ns)"],
      "allowed(0), rejected(1001000ns)")

# --- Not library defects: the Spec's creation instant, which the library is never told ---

check("CORE-10 fixed-window/random-seed-1-trace-33, shrunk (early retry; not a library defect): the "
      "Spec's limiter begins at a release at 975 us (createdAtFirstEvent), which the library has not "
      "(the shim answers invalid, release notSupported); the library's window opens at its first "
      "acquire, at 0 ns",
      run(fixed(1, MS), [0, 0]),
      ["allowed", "rejected(1000000ns)"],
      "allowed(0), rejected(1975000ns): evaluated at 975 us, the window [975 us, 1.975 ms)")

check("CORE-10 fixed-window/random-seed-1-trace-33 (early retry, 1.95 ms; not a library defect), "
      "limit 1, W 7 ms: a release at 20.852 ms, then acquires at 18.902 ms",
      run(fixed(1, 7 * MS), [18_902_000, 18_902_000]),
      ["allowed", "rejected(7000000ns)"],
      "allowed(0), rejected(8950000ns): the window [20.852 ms, 27.852 ms)")

check("CORE-10 gcra/random-seed-1-trace-24 of the run with createdAtFirstEvent false (early retry, "
      "80 us; not a library defect): created at 80 us, acquires at 0 ns; a RateLimiter reads no "
      "clock when it is built",
      run(gcra(1, MS), [0, 0]),
      ["allowed", "rejected(1000000ns)"],
      "allowed(0), rejected(1080000ns): evaluated at the creation, 80 us")

# --- CORE-9: the shim's translation (not a library defect) ---

parameters = list(inspect.signature(RateLimiter.acquire_sync).parameters)
try:
    fixed(5, MS).limiter.acquire_sync(-1)
    error = None
except TypeError as caught:
    error = str(caught)
check("CORE-9 (gcra, fixed-window, sliding-window-log; the shim's translation, not a library defect): "
      "acquire_sync() takes no count, so acquire(-1) cannot be asked; a count passed where it would "
      "go is read as the key",
      (parameters, error),
      (["self", "key", "limit", "max_wait"], "key must be a str, got int"),
      "invalid(permits: mustNotBeNegative); the shim answers invalid(permits: notSupported)")

# --- Waits in whole milliseconds (documented), decisions to the microsecond ---

check("FW-6 fixed-window/random-seed-1-trace-19 (the row's smallest, difference), limit 1, W 9 ms: "
      "the wait is 8.999 ms, returned as `math.ceil(wait / 1000)` ms; the window's end is exact "
      "(refused at 9.071 ms, admitted at 9.072 ms)",
      run(fixed(1, 9 * MS), [72_000, 73_000, 9_071_000, 9_072_000]),
      ["allowed", "rejected(9000000ns)", "rejected(1000000ns)", "allowed"],
      "allowed(0), rejected(8999000ns), rejected(1000ns), allowed(0)")

check("FW-6 fixed-window/random-seed-1-trace-18, steps 12-14 (the row's worst, 999 us late), limit 2, "
      "W 21 ms: in the window [441.053 ms, 462.053 ms) a wait of 1 us is returned as 1 ms",
      run(fixed(2, 21 * MS), [441_053_000, 441_053_000, 462_052_000, 462_053_000]),
      ["allowed", "allowed", "rejected(1000000ns)", "allowed"],
      "allowed(1), allowed(0), rejected(1000ns), allowed(1)")

check("SWL-3 sliding-window-log/random-seed-1-trace-19 (the row's smallest, difference), limit 1, "
      "W 17 ms: the wait 16.999 ms in whole ms; an entry exactly one window old no longer counts "
      "(ZREMRANGEBYSCORE -inf now-period: refused at 17.034 ms, admitted at 17.035 ms), as SWL-3",
      run(sliding(1, 17 * MS), [35_000, 36_000, 17_034_000, 17_035_000]),
      ["allowed", "rejected(17000000ns)", "rejected(1000000ns)", "allowed"],
      "allowed(0), rejected(16999000ns), rejected(1000ns), allowed(0)")

check("SWL-3 sliding-window-log/random-seed-1-trace-21 (the row's worst, 999 us late), limit 1, "
      "W 25 ms",
      run(sliding(1, 25 * MS), [0, 24_999_000, 25_000_000]),
      ["allowed", "rejected(1000000ns)", "allowed"],
      "allowed(0), rejected(1000ns), allowed(0)")

check("GCRA-6 gcra/random-seed-1-trace-40 (the row's smallest, difference), burst 1, T 9 ms: the "
      "wait 7.124 ms in whole ms; the admission instant is exact (refused at 18.065 ms, admitted at "
      "18.066 ms)",
      run(gcra(1, 9 * MS), [9_066_000, 10_942_000, 18_065_000, 18_066_000]),
      ["allowed", "rejected(8000000ns)", "rejected(1000000ns)", "allowed"],
      "allowed(0), rejected(7124000ns), rejected(1000ns), allowed(0)")

check("GCRA-6 gcra/random-seed-1-trace-20 (difference), burst 2, T 1 ms",
      run(gcra(2, MS), [153_000, 154_000, 155_000]),
      ["allowed", "allowed", "rejected(1000000ns)"],
      "allowed(1), allowed(0), rejected(998000ns)")

# --- Not a matrix row: the scripts' arithmetic in Lua doubles past 2^53 us (year 2255) ---

# 2^53 us after the epoch is 9007199254.740992 s; from there on a double holds even microseconds
# only, and an odd TIME reading rounds to the nearest multiple of 4 us (ties to even). The reading
# of 9223372036853773 us after instant 0 (10923372036853773 us, 1 mod 4) becomes ...772: the
# window opens 1 us early and a new one 999 us later.
lim = fixed(1, MS)
SERVER.set_clock(PRESENT * NS + 9223372036853773000)
reading = CLIENT.eval("local t = redis.call('TIME') return string.format('%.0f', t[1] * 1000000 + t[2])", 0)
check("Lua doubles past 2^53 us (not a matrix row: no trace of the run met it), limit 1, W 1 ms: TIME "
      "10923372036853773 us reads as the double 10923372036853772, so the window [..772, ..853772) "
      "ends 1 us early and an acquire 999 us after the first is admitted",
      (reading.decode(), run(lim, [9223372036853773000, 9223372036854772000])),
      ("10923372036853772", ["allowed", "allowed"]),
      "allowed(0), rejected(1000ns): the window is [9223372036853773000, 9223372036854773000) ns")

SERVER.stop()
print("\nratelimit-io %s: %d findings checked, %d no longer reproduce" % (__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
