#!/usr/bin/env python3
"""Python `ratelimiter` (RazerM/ratelimiter) 1.2.0.post0, driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/ratelimiter/shim.py

Strategy: `sliding-window-log`, `RateLimiter(max_calls=N, period=W / 10^9)`. The library has no
answer but sleeping: `with limiter:` sleeps in `__enter__` until the call may go ahead, and records
the call in `__exit__`. The shim asks, without sleeping, whether a call at the instant would go
ahead at once and, if not, how long it would sleep: it runs the library's own `__enter__` on a copy
of the limiter (a new `RateLimiter` with the same configuration and a copy of its log of calls),
whose `time.sleep` records the span instead of sleeping. A call the copy lets through at once is
made on the limiter itself (`with limiter: pass`, at the same instant); one it would delay is
answered `rejected(the span it would sleep)`, and the limiter is not called. See README.md.

Two things are supplied that are not the library's:
- the clock: the name `time` of the module `ratelimiter` (the library calls `time.time()` and
  `time.sleep()` through it, ratelimiter.py:19, 84, 89, 91, 97) is bound to a stand-in whose
  `time()` reads the protocol's instant as Unix seconds (a float, like `time.time()`) and whose
  `sleep()` records the span it is asked to sleep (only a copy's `__enter__` ever asks);
- `asyncio.coroutine`, removed from Python in 3.11: ratelimiter.py:127 evaluates
  `asyncio.coroutine(__exit__)` when its class is defined, so `import ratelimiter` raises
  `AttributeError` on the only Python this project has (3.11). Before the import the shim gives the
  real `asyncio` module a `coroutine` that wraps a plain function as Python 3.10's did (a
  generator-based coroutine returning the function's result). It only makes `__aexit__`; the
  shim never uses `async with`, so no answer depends on it (README.md, "The import").
"""

import asyncio
import collections
import functools
import os
import sys
import types
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ceil_ns, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()


def _coroutine(func):
    """asyncio.coroutine as Python 3.10 applied it to a plain (non-generator) function: a
    generator-based coroutine that returns the function's result (awaiting it when it is awaitable)."""

    @functools.wraps(func)
    def coro(*args, **kwargs):
        result = func(*args, **kwargs)
        if hasattr(result, "__await__") or isinstance(result, types.GeneratorType):
            result = yield from result
        return result

    return types.coroutine(coro)


if not hasattr(asyncio, "coroutine"):
    asyncio.coroutine = _coroutine  # removed in Python 3.11; ratelimiter.py:127 needs it to import

import ratelimiter  # noqa: E402
from ratelimiter import RateLimiter  # noqa: E402

NS = 1_000_000_000
PRESENT = 1_700_000_000  # a Unix time in 2023: where time.time() reads in real use
# time.time() is a double of Unix seconds: from 1.7e9 s to 292 years later (below 2^34 s) its
# readings are 2^-22 s (238 ns) to 2^-19 s (1.9 us) apart, so every multiple of 10 us reads a float of
# its own (as in the limits shim, whose README gives the arithmetic).
UNIT = 10_000


class Clock:
    """The one clock the library reads: Unix seconds as a float, like time.time(). `slept` collects
    what a copy's __enter__ asks to sleep."""

    def __init__(self):
        self.seconds = 0.0
        self.slept = []

    def time(self):
        return self.seconds

    def sleep(self, seconds):
        self.slept.append(seconds)


CLOCK = Clock()
# The library's `time` (ratelimiter.py:19), as its module looks it up: time.time() and time.sleep().
ratelimiter.time = types.SimpleNamespace(time=CLOCK.time, sleep=CLOCK.sleep)

PROFILE = {
    # The clock: time.time(), a float of seconds, resolving 10 us wherever the shim drives it.
    "timeUnitNanoseconds": UNIT,
    # `period` is any float of seconds: spans of the same 10 us unit.
    "configurationUnitNanoseconds": UNIT,
    # The last multiple of the unit on the timeline.
    "largestInstantNanoseconds": INT64_MAX // UNIT * UNIT,
    # Every `with limiter:` is one call: no weights, no negative counts beyond -1.
    "largestPermits": 1,
    # time.time() is the wall clock: it may go back.
    "monotonic": False,
    # No weights (largestPermits), no query (nothing asks without calling), no reset, no
    # reconfigure; the events the Spec answers invalid (release, acquire(-1)) are answered by the
    # shim's translations: a release, and a count, that the API cannot take.
    "events": ["invalid"],
    # None: float arithmetic is never covered (the limits shim's README, "Profile").
    "toleranceNanoseconds": 0,
    # RateLimiter.__init__ raises ValueError for period <= 0 and max_calls <= 0.
    "validation": True,
    # A RateLimiter reads no clock when it is built.
    "createdAtFirstEvent": True,
}


def unix_seconds(now):
    """What time.time() reads at the protocol's instant `now` (ns): the float nearest to
    PRESENT + now / 10^9 Unix seconds (int / int is correctly rounded)."""
    return (PRESENT * NS + now) / NS


def _copy(limiter):
    """A new RateLimiter with the same configuration and a copy of the log of calls."""
    copy = RateLimiter(limiter.max_calls, limiter.period, limiter.callback)
    copy.calls = collections.deque(limiter.calls)
    return copy


def _sleep_of(limiter):
    """The span (seconds) the library's own __enter__ sleeps for a call now, run on `limiter`
    (a copy), or None when it lets the call through at once."""
    CLOCK.slept = []
    limiter.__enter__()  # reads len(calls), the log's span and time.time(); sleeps, or not
    return CLOCK.slept[0] if CLOCK.slept else None


def _remaining(limiter):
    """How many more calls at this instant the library lets through without sleeping, after an
    admitted one (README.md, "remaining"): __enter__ lets a call through at once while
    len(calls) < max_calls (ratelimiter.py:83), and each such call, recorded by __exit__ at the
    same reading, adds one entry and removes none (the trim of ratelimiter.py:101-102 compares the
    same first entry with the same last reading). Once the log is full, __enter__ decides from the
    same first and last entries whatever its length: a copy whose max_calls is the log's length
    asks it that, and when that copy would not sleep either, there is no end to it (Int64.max)."""
    free = limiter.max_calls - len(limiter.calls)
    if free < 0:
        free = 0
    full = _copy(limiter)
    full.max_calls = len(full.calls)
    if _sleep_of(full) is None:
        return INT64_MAX
    return free


class RatelimiterShim(shimproto.Shim):
    implementation = "ratelimiter %s" % (ratelimiter.__version__,)
    strategies = ["sliding-window-log"]

    def profiles(self):
        return {"sliding-window-log": dict(PROFILE)}

    def create(self, strategy, configuration, now):
        if strategy != "sliding-window-log":
            raise Unsupported("not offered by ratelimiter")
        limit, window = configuration.get("limit"), configuration.get("windowNanoseconds")
        if not is_int(limit):
            raise Refused("limit", "notSupported")
        if not is_int(window):
            raise Refused("windowNanoseconds", "notSupported")
        try:
            # The library's own check, in its order: period first (ratelimiter.py:45-48).
            return RateLimiter(max_calls=limit, period=window / NS)
        except ValueError as error:
            if "period" in str(error):  # 'Rate limiting period should be > 0'
                raise Refused("windowNanoseconds", "mustBePositive")
            raise Refused("limit", "mustBePositive")  # 'Rate limiting number of calls should be > 0'

    def event(self, limiter, event, now):
        kind = event.get("kind")
        if kind == "acquire":
            permits = event.get("permits")
            if permits != 1:
                # Every call is one: the API takes no count (rule 6 of ../README.md).
                return invalid("permits", "notSupported")
            CLOCK.seconds = unix_seconds(now)
            slept = _sleep_of(_copy(limiter))
            if slept is not None:
                # The library would make this call wait `slept` seconds (until = time.time() +
                # period - span, sleeptime = until - time.time(), ratelimiter.py:84-91): the
                # admission instant it names, measured from what the clock reads now, rounded up.
                return refused_for(now, ceil_ns(Fraction(slept)))
            with limiter:  # __enter__ goes ahead at once (as the copy did); __exit__ records the call
                pass
            return allowed(_remaining(limiter))
        if kind == "release":
            return invalid("release", "notSupported")  # ratelimiter has no release
        raise ValueError("event %r is outside the declared profile" % (kind,))


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(shimproto.serve(RatelimiterShim()))
