#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `limits` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/limits/findings.py

Each check drives FixedWindowRateLimiter / MovingWindowRateLimiter /
SlidingWindowCounterRateLimiter over MemoryStorage directly, with `time.time()` as
limits.storage.memory and limits.strategies look it up replaced by a settable clock (Unix seconds,
1,700,000,000 = the protocol's instant 0 unless a check says otherwise) and the storage's 0.01 s
expiry timer replaced by one that never fires (it only drops entries that have expired; none of
these checks depends on it). It prints what the library answers next to what the Spec answers,
and exits 1 if any finding no longer reproduces (for instance after a version change).
"""

import sys
import types

import limits
import limits.storage.memory as memory
import limits.strategies as strategies
from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage

ORIGIN = 1_700_000_000


class Clock:
    now = float(ORIGIN)

    def time(self):
        return self.now


CLOCK = Clock()
memory.time = types.SimpleNamespace(time=CLOCK.time)
strategies.time = types.SimpleNamespace(time=CLOCK.time)


class _NoTimer:
    def __init__(self, *args, **kwargs):
        pass

    def start(self):
        pass

    def is_alive(self):
        return True


memory.threading = types.SimpleNamespace(Timer=_NoTimer, RLock=memory.threading.RLock)


def make(strategy, limit, window, origin=ORIGIN):
    CLOCK.now = float(origin)
    limiter = strategy(MemoryStorage())
    item = RateLimitItemPerSecond(limit, window)
    return limiter, item


def at(seconds, origin=ORIGIN):
    CLOCK.now = float(origin + seconds)


FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


FW = strategies.FixedWindowRateLimiter
MW = strategies.MovingWindowRateLimiter
SWC = strategies.SlidingWindowCounterRateLimiter


def stats(limiter, item):
    s = limiter.get_window_stats(item)
    return (round(s.reset_time - CLOCK.now, 9), s.remaining)


# --- fixed window -------------------------------------------------------------------------------

lim, item = make(FW, 3, 10)
at(0)
a = lim.hit(item, cost=2)
at(3)
b = lim.hit(item, cost=2)
c = lim.hit(item, cost=1)
check("FW-4/CORE-8 fixed-window/weighted: a refused hit is counted",
      (a, b, c), (True, False, False), "acquire(1) at 3 s is allowed(0): the refused acquire(2) counted nothing")

lim, item = make(FW, 3, 10)
at(5)
lim.hit(item, cost=3)
at(9)
check("FW-3 fixed-window/aligned-to-origin: the window starts at the first hit (5 s), not at 0 s",
      (lim.hit(item), stats(lim, item)), (False, (6.0, 0)), "rejected(1 s): the window [0 s, 10 s) ends at 10 s")

lim, item = make(FW, 3, 10)
at(0)
lim.hit(item, cost=3)
at(15)
q = stats(lim, item)  # a read: MemoryStorage.get() drops the expired key
at(5)
check("FW-3/CORE-10 fixed-window/refusals-record-nothing: a read at 15 s forgets the window of 0 s; back at 5 s it admits",
      (q[1], lim.hit(item)), (3, True), "acquire(1) at 5 s is rejected(5 s): the query at 15 s changes nothing")

lim, item = make(FW, 1, 1)
at(0)
check("CORE-9 fixed-window: hit(cost=-1) is admitted and lowers the count",
      (lim.hit(item, cost=-1), stats(lim, item)[1]), (True, 2), "invalid(permits)")

lim, item = make(FW, 6, 20)
at(0)
r = lim.hit(item, cost=7)
check("CORE-7 fixed-window: hit(cost=7) above the limit of 6 is refused with a finite wait, and counted",
      (r, stats(lim, item), lim.hit(item)), (False, (20.0, 0), False),
      "neverAllowed, and acquire(1) is then allowed(5)")

item0 = RateLimitItemPerSecond(0, 10)
item_w0 = RateLimitItemPerSecond(1, 0)
check("CORE-3: RateLimitItem validates nothing (amount 0 accepted; multiples 0 read as 1)",
      (item0.amount, item_w0.get_expiry()), (0, 1), "refused limit (mustBePositive), refused windowNanoseconds")

# --- moving window (sliding window log) ---------------------------------------------------------

lim, item = make(MW, 3, 10)
for t in (0, 3, 6):
    at(t)
    lim.hit(item)
at(9)
first = (lim.hit(item), stats(lim, item))
at(10)
check("SWL-3/SWL-6 sliding-window-log/window-bound: reset says 10 s, the hit at 10 s is refused",
      (first, lim.hit(item), stats(lim, item)), ((False, (1.0, 0)), False, (3.0, 1)),
      "rejected(1 s) at 9 s, then allowed(0) at 10 s (the entry of 0 s no longer counts at 10 s)")

lim, item = make(MW, 1, 14)
at(0)
lim.hit(item)
at(14)
check("SWL-3 sliding-window-log/random-seed-7-trace-4: refused exactly one window later, reset = now (wait 0)",
      (lim.hit(item), stats(lim, item)), (False, (0.0, 1)), "allowed(0)")

lim, item = make(MW, 1, 6)
at(33)
lim.hit(item)
at(40)
check("CORE-7 sliding-window-log/random-seed-7-trace-43: cost 2 above the limit of 1, reset in the past (wait -1 s)",
      (lim.hit(item, cost=2), stats(lim, item)), (False, (-1.0, 1)), "neverAllowed")

lim, item = make(MW, 3, 40)
at(0)
check("CORE-9 sliding-window-log: hit(cost=-1) is admitted",
      lim.hit(item, cost=-1), True, "invalid(permits)")

lim, item = make(MW, 5, 1000)
at(1900)
lim.get_window_stats(item)  # the first event (the query of the smallest case)
at(600)
lim.hit(item, cost=1)  # time went back: recorded at 600 s
at(1605)
lim.hit(item, cost=3)
at(1830)
check("CORE-10 sliding-window-log/random-seed-7-trace-1 (scaled): entries keep the earlier instants they came with",
      lim.hit(item, cost=2), True,
      "neverAllowed/rejected: the admissions are evaluated at 1900 s (CORE-10), 4 in force, 4 + 2 > 5")

# --- sliding window counter ---------------------------------------------------------------------

lim, item = make(SWC, 4, 10)
at(5)
lim.hit(item, cost=4)
at(11)
check("SWC-4 sliding-window-counter/no-floor: floor(weighted count) + cost <= limit admits",
      lim.hit(item), True, "rejected(9 s): 4·9/10 + 1 = 4.6 > 4")

lim, item = make(SWC, 10, 10)
at(9)
lim.hit(item, cost=10)
at(18)
ok8 = lim.hit(item, cost=8)
check("SWC-5 sliding-window-counter/worst-case: the float weight 10·(1 - 0.8) is 1.99999..., floor 9",
      (ok8, stats(lim, item)[1], lim.hit(item)), (True, 1, True),
      "allowed(0) after acquire(8); acquire(1) then rejected")

lim, item = make(SWC, 4, 10)
at(5)
lim.hit(item, cost=4)
at(10)
check("SWC-3/SWC-6 sliding-window-counter/retry-same-window: refused at a window start, reset = now (wait 0)",
      (lim.hit(item), stats(lim, item)), (False, (0.0, 0)), "rejected(2.5 s)")

lim, item = make(SWC, 4, 10)
at(5)
lim.hit(item, cost=4)
at(6)
r = (lim.hit(item), stats(lim, item))
at(10)
check("SWC-6 sliding-window-counter/retry-next-window: reset is the window's end (10 s), refused there too",
      (r, lim.hit(item)), ((False, (4.0, 0)), False), "rejected(6.5 s): admitted at 12.5 s")

lim, item = make(SWC, 1, 1)
at(0)
check("CORE-7 sliding-window-counter: cost 2 above the limit of 1, nothing counted, reset = now (wait 0)",
      (lim.hit(item, cost=2), stats(lim, item)), (False, (0.0, 1)), "neverAllowed")

lim, item = make(SWC, 4, 10)
at(15)
lim.hit(item, cost=4)
at(8)
check("SWC-4/CORE-10 sliding-window-counter/backward-time: back in window 0, the counts of window 1 are not seen",
      lim.hit(item), True, "rejected(14.5 s): evaluated at 15 s (CORE-10)")

lim, item = make(SWC, 4, 10, origin=0)
at(5, origin=0)
lim.hit(item, cost=2)
keys = lim.storage.sliding_window_keys(item.key_for(), 10, 5.0)
at(6, origin=0)
check("SWC first window after the Unix epoch (--unix-origin 0): previous key == current key, counts seen twice",
      (keys[0] == keys[1], lim.hit(item), stats(lim, item)[1]), (True, True, 0),
      "allowed(1) (3 of 4 used); int((at - expiry) / expiry) truncates -0.5 to 0, the current window's key")

print("\nlimits %s: %d findings checked, %d no longer reproduce" % (limits.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
