#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `throttler` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/throttler/findings.py

`Throttler(rate_limit=N, period=W / 10^9)` runs on an asyncio event loop whose time() is a
settable clock, and `time.monotonic()` as `throttler.throttler` looks it up reads the same clock:
what time.monotonic() reads at an instant given in nanoseconds from the protocol's instant 0, the
float nearest to (UPTIME + instant), UPTIME = 2^22 s (48.5 days after boot) as in the shim unless
a check says otherwise. Each check enters `async with throttler` at an instant when it enters
without sleeping (one turn of the loop, the clock standing still), and otherwise reads what the
library would do: the instant its `asyncio.sleep(-diff)` is scheduled to end (the loop's timer),
and the first nanosecond at which its test `now - (times[0] + period) > 0` holds (the instant it
lets the caller in), found by trying each nanosecond in turn on the library's own test.

It prints the library's answers next to the Spec's and exits 1 if a finding no longer reproduces.
"""

import asyncio
import math
import sys
import types
from fractions import Fraction

import throttler
import throttler.throttler as throttler_module
from throttler import Throttler

NS = 1_000_000_000


class Clock:
    ns = 0
    uptime_ns = (1 << 22) * NS

    def monotonic(self):
        return (self.uptime_ns + self.ns) / NS


CLOCK = Clock()
throttler_module.time = types.SimpleNamespace(monotonic=CLOCK.monotonic)


class Loop(asyncio.SelectorEventLoop):
    def time(self):
        return CLOCK.monotonic()


LOOP = Loop()
asyncio.set_event_loop(LOOP)
FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


def remaining(lim):
    """How many the library lets in at once at the current instant, one after the other: entered
    on a copy until one would sleep."""
    clone = Throttler(int(lim._rate_limit), lim._period)
    clone._times = type(lim._times)(lim._times)
    n = 0
    while try_enter(clone) is True:
        n += 1
    return n


def try_enter(lim):
    """Enters at the current instant if the library lets the caller in without sleeping (True);
    else the instant (ns, as a Fraction) at which its sleep is scheduled to end, the task
    cancelled in its sleep, before it changed anything."""

    async def go():
        task = LOOP.create_task(lim.__aenter__())
        await asyncio.sleep(0)
        if task.done():
            return True
        when = [h.when() for h in LOOP._scheduled if not h.cancelled()]
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return Fraction(min(when)) * NS - CLOCK.uptime_ns if when else "sleep(0)"

    return LOOP.run_until_complete(go())


def at(ns, lim):
    """One acquire at ns: ("allowed", remaining) or ("rejected", wait) with the wait to the first
    nanosecond at which the library's own test lets the caller in."""
    CLOCK.ns = ns
    entered = try_enter(lim)
    if entered is True:
        return ("allowed", remaining(lim))
    return ("rejected", first_entry(lim, ns) - ns)


def first_entry(lim, ns):
    """The first nanosecond >= ns at which `now - (times[0] + period) > 0` (throttler.py:36-38)."""
    oldest_end = lim._times[0] + lim._period
    start = max(ns, math.floor(Fraction(oldest_end) * NS) - CLOCK.uptime_ns - 4)
    n = start
    while not ((CLOCK.uptime_ns + n) / NS - oldest_end > 0.0):
        n += 1
    return n


def make(limit, window_ns):
    return Throttler(rate_limit=limit, period=window_ns / NS)


# --- SWL-3: an entry still counts exactly one window later (throttler.py:37-38, `diff > 0.0`) ----
# sliding-window-log/window-bound (limit 3, W 10 ns): entries at 0, 3 and 6 ns. At 9 ns the Spec
# admits at 10 ns (the entry of 0 expires there): the library lets the caller in at 11 ns, the
# first instant at which the entry of 0 is *more* than a period old; at 10 ns it still counts
# it (diff is 0.0: its sleep is asyncio.sleep(-0.0), a turn of the loop, then the test again);
# at 13 ns it still counts the entry of 3.
lim = make(3, 10)
answers = [at(ns, lim) for ns in (0, 3, 6, 9, 10)]
CLOCK.ns = 10
diff_at_10 = CLOCK.monotonic() - (lim._times[0] + lim._period)
answers.append(at(13, lim))
check("SWL-3 sliding-window-log/window-bound: the entry of 0 still counts at 10 ns, of 3 at 13 ns",
      (answers, diff_at_10),
      ([("allowed", 2), ("allowed", 1), ("allowed", 0), ("rejected", 2), ("rejected", 1), ("allowed", 0)], 0.0),
      "allowed(2), allowed(1), allowed(0), rejected(1ns), allowed(0), allowed(1)")
# sliding-window-log/random-3 (limit 3, W 2 ns, created at 75 ns): entries at 76 ns, then at 78 ns
# the entry of 76 still counts.
lim = make(3, 2)
check("SWL-3 sliding-window-log/random-3: an entry 2 ns old counts in a window of 2 ns",
      [at(ns, lim) for ns in (76, 78, 78)],
      [("allowed", 2), ("allowed", 1), ("allowed", 0)],
      "allowed(2), allowed(2), allowed(1)")
# sliding-window-log/random-seed-1-trace-21, shrunk (limit 1, W 25 ns, created at 24 ns): entered
# at 821 ns; the next entry is let in at 848 ns, 27 ns later, 2 ns after the Spec's 846 ns: one for
# the strict test, one for the floats (the reading of 821 ns plus the period rounds to the float of
# 846.x ns, and the reading of 847 ns does not exceed it). Its sleep is scheduled to end within a
# nanosecond of that instant.
lim = make(1, 25)
first = at(821, lim)
CLOCK.ns = 821
sleep_end = try_enter(lim)
check("SWL-3 sliding-window-log/random-seed-1-trace-21, shrunk: 2 ns late",
      (first, at(821, lim), first_entry(lim, 821), 846 <= sleep_end < 848),
      (("allowed", 0), ("rejected", 27), 848, True),
      "allowed(0), rejected(25ns)")

# --- SWL-5: the floats of an entry's end (throttler.py:37) ------------------------------------------
# sliding-window-log/random-seed-1-trace-4, shrunk (limit 3, W 64 ns): entries at 4170 and 4235 ns
# (65 ns later): the reading of 4170 ns is 0.46 ns late, the period added to it rounds up to the
# float the reading of 4235 ns is (0.28 ns early), so the library's difference is 0.0 and the entry
# of 4170 still counts, 1 ns past even the inclusive edge (the deque is [0.0, 0.0, 4170 ns]: the
# entry of 4170 ns is tested once the two zeros are taken). The Spec's remaining is 2.
lim = make(3, 64)
a = at(4170, lim)
CLOCK.ns = 4235
diff = CLOCK.monotonic() - (lim._times[-1] + lim._period)
check("SWL-5 sliding-window-log/random-seed-1-trace-4, shrunk: an entry W + 1 old still counts",
      (a, diff, at(4235, lim)), (("allowed", 2), 0.0, ("allowed", 1)), "allowed(2), allowed(2)")
# sliding-window-log/random-seed-1-trace-14, shrunk (limit 2, W 52233374300718 ns): W + 1 again.
lim = make(2, 52233374300718)
check("SWL-5 sliding-window-log/random-seed-1-trace-14, shrunk: an entry W + 1 old still counts",
      [at(ns, lim) for ns in (417866994405760, 470100368706479)],
      [("allowed", 1), ("allowed", 0)], "allowed(1), allowed(1)")
# sliding-window-log/random-seed-1-trace-46, shrunk (limit 2, W 2164 ns): W + 1 again.
lim = make(2, 2164)
check("SWL-5 sliding-window-log/random-seed-1-trace-46, shrunk: an entry W + 1 old still counts",
      [at(ns, lim) for ns in (7452, 9617)], [("allowed", 1), ("allowed", 0)], "allowed(1), allowed(1)")

# --- SWL-4: the deque starts with N entries at monotonic 0.0 (throttler.py:32) ---------------------
# sliding-window-log/random-seed-1-trace-38, shrunk (limit 1, W 6868672844192828 ns = 79.5 days,
# created at 0): the clock reads 2^22 s (48.5 days after boot); the entry at 0.0 s ends at
# 6868672.844192828 s: the first entry waits 2674368844192829 ns (30.9 days), where the Spec admits
# at once. The library's sleep is scheduled for that instant.
lim = make(1, 6868672844192828)
CLOCK.ns = 0
check("SWL-4 sliding-window-log/random-seed-1-trace-38, shrunk: a new throttler refuses its first entry",
      (list(lim._times), at(0, lim), round(float(try_enter(lim)))),
      ([0.0], ("rejected", 2674368844192829), 2674368844192828),
      "allowed(0)")
# sliding-window-log/random-seed-1-trace-33 (worst: limit 33, W 3074457345618258602 ns = 97.4
# years, created at 26 ns): the first entry, at 27 ns, waits 3070263041618258688 ns.
lim = make(33, 3074457345618258602)
check("SWL-4 sliding-window-log/random-seed-1-trace-33: the first entry waits 97 years",
      at(27, lim), ("rejected", 3070263041618258688), "allowed(32)")
# With --uptime 0 (a process started at boot): every throttler made in its first period waits that
# period first (limit 3, W 10 s, at boot: the three zeros end at 10 s, and count until 10 s + 1 ns).
CLOCK.uptime_ns = 0
lim = make(3, 10 * NS)
check("SWL-4 (--uptime 0): a throttler made at boot lets nothing in for a period",
      (at(0, lim), at(10 * NS, lim), at(10 * NS + 1, lim)),
      (("rejected", 10 * NS + 1), ("rejected", 1), ("allowed", 2)),
      "allowed(2) at 0 s")
CLOCK.uptime_ns = (1 << 22) * NS

print("%d checks, %d no longer reproduce (throttler %s)" % (CHECKS[0], len(FAILED), throttler.__version__))
sys.exit(1 if FAILED else 0)
