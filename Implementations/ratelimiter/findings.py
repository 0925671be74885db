#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `ratelimiter` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/ratelimiter/findings.py

The first check imports the library as it is, in a child process, and shows that it cannot be
imported on this Python (3.11). The others give the real `asyncio` module the `coroutine` that
Python 3.10 had (only the class body's `__aexit__` uses it), import `ratelimiter`, and replace the
name `time` of the module `ratelimiter` by a settable clock: `time()` reads Unix seconds as a float
(the float nearest to 1,700,000,000 s + the instant, as the shim reads it) and `sleep(s)` records
`s`, and, where a check says so, moves the clock on by `s` (a caller that really sleeps).

A call at an instant is the library's own `__enter__` at that reading: when it asks to sleep, the
answer is `rejected(<the span it asked, in ns rounded up>)` and `__exit__` is not called (the call
does not happen); when it does not, `__exit__` records the call at the same reading and the answer
is `allowed`. Instants are in microseconds from the protocol's instant 0 unless a check says
otherwise. It prints what the library answers next to what the Spec answers, and exits 1 if any
finding no longer reproduces (for instance after a version change).
"""

import asyncio
import functools
import inspect
import os
import subprocess
import sys
import types
from fractions import Fraction

PRESENT = 1_700_000_000
NS = 1_000_000_000

FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        print("     (expected the library to answer %s)" % (expected_by_library,))
        FAILED.append(name)


# --- the import, as the package installs it --------------------------------------------------------

child = subprocess.run([sys.executable, "-c", "import ratelimiter"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONWARNINGS="ignore"))
last = (child.stderr.strip().splitlines() or [""])[-1]
check("import ratelimiter on Python %d.%d (ratelimiter.py:127, asyncio.coroutine(__exit__))"
      % sys.version_info[:2],
      (child.returncode != 0, last.startswith("AttributeError: module 'asyncio' has no attribute 'coroutine'")),
      (True, True),
      "(no clause: the package cannot be used at all on Python >= 3.11, where asyncio.coroutine is gone)")


def _coroutine(func):
    @functools.wraps(func)
    def coro(*args, **kwargs):
        result = func(*args, **kwargs)
        if hasattr(result, "__await__") or isinstance(result, types.GeneratorType):
            result = yield from result
        return result

    return types.coroutine(coro)


if not hasattr(asyncio, "coroutine"):
    asyncio.coroutine = _coroutine

import ratelimiter  # noqa: E402
from ratelimiter import RateLimiter  # noqa: E402


class Clock:
    seconds = 0.0
    slept = []
    advance = False  # a caller that really sleeps: sleep(s) moves the clock on by s

    def time(self):
        return self.seconds

    def sleep(self, seconds):
        self.slept.append(seconds)
        if self.advance:
            self.seconds += seconds


CLOCK = Clock()
ratelimiter.time = types.SimpleNamespace(time=CLOCK.time, sleep=CLOCK.sleep)


def reading(ns):
    return (PRESENT * NS + ns) / NS


def limiter(limit, window_us):
    return RateLimiter(max_calls=limit, period=window_us * 1000 / NS)


def call(lim, instant_us=None, instant_ns=None):
    """The library's __enter__ at the instant; __exit__ at the same reading when it did not sleep."""
    CLOCK.seconds = reading(instant_ns if instant_ns is not None else instant_us * 1000)
    CLOCK.slept = []
    CLOCK.advance = False
    lim.__enter__()
    if CLOCK.slept:
        value = Fraction(CLOCK.slept[0]) * NS
        return "rejected(%dns)" % -((-value.numerator) // value.denominator)
    lim.__exit__(None, None, None)
    return "allowed"


# --- sliding-window-log ---------------------------------------------------------------------------

lim = limiter(1, 10)
check("SWL-4 admission (liveness): random-seed-1-trace-19, -21, -23, -28, -35, shrunk (N 1, W 10 us): "
      "a call at 0, a call at 10 us",
      (call(lim, 0), call(lim, 10)), ("allowed", "rejected(10014ns)"),
      "allowed(0), allowed(0): the entry of 0 no longer counts at 10 us (SWL-3); the library sleeps "
      "until = time() + period - (calls[-1] - calls[0]) (ratelimiter.py:83-91), W from now whenever the "
      "log is full, and trims the log only when a call ends (:99-102). 14 ns: float arithmetic")

lim = limiter(1, 250)
check("SWL-4 (liveness): random-seed-1-trace-21 (N 1, W 250 us, created at 190 us): calls at 190, 430, 670 us",
      (call(lim, 190), call(lim, 430), call(lim, 670)), ("allowed", "rejected(250102ns)", "rejected(250102ns)"),
      "allowed(0), rejected(10000 ns), allowed(0): the wait does not shrink as time passes")

lim = limiter(3, 10_000_000)
check("SWL-4 (liveness): three calls at 0, 1, 2 s (N 3, W 10 s), a call at 100 s",
      [call(lim, s * 1_000_000) for s in (0, 1, 2, 100)], ["allowed", "allowed", "allowed", "rejected(8000000000ns)"],
      "allowed(2), allowed(1), allowed(0), allowed(2): a call 98 s after the last one waits 8 s "
      "(RazerM/ratelimiter#15, #20)")

lim = limiter(3, 50)
check("SWL-6 retry-after not honoured: random-seed-1-trace-28's log (N 3, W 50 us): calls at 1870, 1870, "
      "1910 us, then 1950 and 1990 us",
      [call(lim, x) for x in (1870, 1870, 1910, 1950, 1990)],
      ["allowed", "allowed", "allowed", "rejected(10014ns)", "rejected(10014ns)"],
      "allowed(2), allowed(1), allowed(0), allowed(1), allowed(1): at 1950 us the entries of 1870 us have "
      "expired; the library's wait of 10 us ends at 1960 us, and at 1990 us it asks 10 us again")

lim = limiter(3, 100)
check("SWL-3 an entry exactly one window old: same-instant-merged (N 3, W 100 us): three calls at 40 us, "
      "a call at 130 us",
      [call(lim, x) for x in (40, 40, 40, 130)], ["allowed", "allowed", "allowed", "rejected(99898ns)"],
      "allowed(2), allowed(1), allowed(0), rejected(10000 ns): the entries expire at 140 us; the library "
      "asks W - span = 100 us from now (a difference: within the liveness bound of W)")

lim = limiter(3, 100)
check("SWL-3: window-bound (N 3, W 100 us): calls at 0, 30, 60 us, then 90, 100, 130 us",
      [call(lim, x) for x in (0, 30, 60, 90, 100, 130)],
      ["allowed", "allowed", "allowed", "rejected(39816ns)", "rejected(39816ns)", "rejected(39816ns)"],
      "..., rejected(10000 ns), allowed(0), allowed(1)")

lim = limiter(1, 10)
check("CORE-10 time going backwards: random-seed-1-trace-24, shrunk (N 1, W 10 us, created at 20 us): "
      "a call at 20 us, a call at 0",
      (call(lim, 20), call(lim, 0)), ("allowed", "rejected(10014ns)"),
      "allowed(0), rejected(30000 ns): evaluated at 20 us (CORE-10), the entry of 20 us expires at 30 us; "
      "the library's wait is measured from now, whatever its latest call")

lim = limiter(3, 90)
check("CORE-10: random-seed-1-trace-33 (N 3, W 90 us, created at 870 us): calls at 870, 800, 750, 710 us",
      [call(lim, x) for x in (870, 800, 750, 710)], ["allowed", "allowed", "allowed", "rejected(209809ns)"],
      "allowed(1), allowed(1), allowed(0), rejected(250000 ns): the log keeps the calls in the order they "
      "ended, [870, 800, 750] us, and its span calls[-1] - calls[0] (ratelimiter.py:131) is -120 us: "
      "W - span = 210 us, 40 us early")

LAST = 9_223_372_036_854_770_000
lim = limiter(1, 10)
check("CORE-7 never allowed (retry forever): random-seed-1-trace-8, -10, -45, shrunk (N 1, W 10 us): a call "
      "at 9223372036854770000 ns, a call 10 us earlier",
      (call(lim, instant_ns=LAST), call(lim, instant_ns=LAST - 10_000)), ("allowed", "rejected(9537ns)"),
      "allowed(0), neverAllowed: evaluated at the later instant, the entry expires 10 us after it, past "
      "the end of the timeline; the library's wait is 10 us from now (9537 ns: floats 1.9 us apart "
      "near 1.09e10 s)")

check("CORE-9 negative permits: the API takes no count (__enter__(self), __exit__(self, ...))",
      (list(inspect.signature(RateLimiter.__enter__).parameters), list(inspect.signature(RateLimiter.__init__).parameters)),
      (["self"], ["self", "max_calls", "period", "callback"]),
      "invalid(permits: mustNotBeNegative) for acquire(-1); the shim answers invalid(permits: notSupported)")

try:
    RateLimiter(max_calls=0, period=0)
    named = None
except ValueError as error:
    named = str(error)
check("CORE-3 validation (not in the run's refusal cases): limit 0 and window 0 together",
      named, "Rate limiting period should be > 0",
      "refused limit (mustBePositive): the Spec checks the limit first, the library the period (ratelimiter.py:45-48)")

# --- what a caller that really sleeps sees -------------------------------------------------------


def sleeping_calls(lim, starts_s, body_s):
    """Each caller arrives at its start (seconds), sleeps as __enter__ asks, runs a body of `body_s`
    seconds and leaves (__exit__ records the call then). Returns the instants the bodies begin."""
    begins = []
    for start in starts_s:
        now = reading(0) + start
        CLOCK.seconds = max(CLOCK.seconds, now)
        CLOCK.advance = True
        CLOCK.slept = []
        with lim:
            begins.append(round(CLOCK.seconds - reading(0), 6))
            CLOCK.seconds += body_s
    CLOCK.advance = False
    return begins


CLOCK.seconds = reading(0)
check("sleeping callers (RazerM/ratelimiter#15): N 1, W 1 s, three calls in a row, each body 1 s long",
      sleeping_calls(RateLimiter(max_calls=1, period=1), (0, 0, 0), 1.0), [0.0, 2.0, 4.0],
      "0, 1, 2 s (one call per second): __exit__ records a call when it ends (ratelimiter.py:97), "
      "and the next wait is a whole period from then")

print("\nratelimiter %s: %d findings checked, %d no longer reproduce" % (ratelimiter.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
