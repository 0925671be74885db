"""The window strategies: fixed window (Spec/FixedWindow.md, FW-*), sliding window log
(Spec/SlidingWindowLog.md, SWL-*), sliding window counter (Spec/SlidingWindowCounter.md, SWC-*) and
segmented sliding window (Spec/SlidingWindowSegments.md, SWS-*).
Each strategy class has acquire(n, now) for n >= 0, reset(now), reconfigure(cfg, now) and
validate(cfg), its configuration's check (config.py).
"""

from .bugs import bug
from .config import validate_segments, validate_window
from .results import allowed, crash, never, refuse_at, wrap


# Where fixed windows start (FW-13): "origin" (the Spec's design), "creation" or "first-event";
# where segments start (SWS-13): "origin" or "creation". --fixed-window-alignment and
# --segments-alignment set them (ratelimiter.py) and the hello declares them (protocol.py).
ALIGNMENT = {"fixed-window": "origin", "sliding-window-segments": "origin"}


class FixedWindow:  # FW
    validate = staticmethod(validate_window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.t0 = t0
        self.align = ALIGNMENT["fixed-window"]
        self.anchor = 0 if self.align == "origin" else t0  # FW-13: windows are counted from it
        self.u, self.last = 0, t0
        self.history = []  # window-history-crash: one count per window, at most 256

    def index(self, t):
        w = self.cfg[1]
        if bug("window-edge-off-by-one"):
            return (t - 1) // w
        if bug("window-aligned-to-creation"):
            return (t - self.t0) // w
        return (t - self.anchor) // w

    def start(self, j):
        w = self.cfg[1]
        if bug("window-aligned-to-creation"):
            return self.t0 + j * w
        return self.anchor + j * w

    def counted(self, now):  # FW-3
        e = max(now, self.last)
        u = 0 if self.index(e) > self.index(self.last) else self.u
        if bug("window-history-crash") and self.index(e) > self.index(self.last):
            if len(self.history) == 256:
                crash()
            self.history.append(self.u)
        return e, u

    def left(self, lim, u):
        left = max(0, lim - u)
        return min(left, 999) if bug("counter-remaining-capped") else left

    def acquire(self, n, now):
        lim = self.cfg[0]
        if n > lim:
            return never()  # FW-7
        e, u = self.counted(now)
        if n == 0:
            return allowed(self.left(lim, u))
        if bug("window-counter-32-bit") and wrap(u + n, 32) <= lim:
            self.u, self.last = wrap(u + n, 32), e
            return allowed(max(0, lim - self.u))
        if n <= lim - u:  # FW-4
            if self.align == "first-event" and u == 0:
                self.anchor = e  # FW-13: the first admission with no window open opens one
            self.u, self.last = u + n, e
            return allowed(self.left(lim, self.u))
        if bug("count-rejected"):
            self.u, self.last = u + n, e
        return refuse_at(self.start(self.index(e) + 1), now)  # FW-6

    def reset(self, now):  # FW-9
        self.u, self.last = 0, max(now, self.last)
        if self.align != "origin":
            self.anchor = self.last  # FW-13: as created at e
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # FW-10
        e, u = self.counted(now)
        self.cfg = cfg
        if self.align == "first-event" and (u == 0 or e - self.anchor >= cfg[1]):
            self.anchor = e  # FW-13: the kept count belongs to a window that contains e
        self.u, self.last = u, e
        return allowed(max(0, cfg[0] - u))


class SlidingWindowLog:  # SWL
    validate = staticmethod(validate_window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.log = []  # [instant, permits], increasing instants
        self.last = t0
        self.appends = 0

    def in_force(self, a, t, w):  # SWL-3
        if bug("log-expiry-inclusive"):
            return a + w >= t
        return a + w > t

    def live(self, e, w):
        return [x for x in self.log if self.in_force(x[0], e, w)]

    def acquire(self, n, now):
        lim, w = self.cfg
        if n > lim:
            return never()  # SWL-7
        e = max(now, self.last)
        entries = self.live(e, w)
        f = sum(x[1] for x in entries)
        if n == 0:
            return allowed(max(0, lim - f))
        if f + n <= lim:  # SWL-4
            if entries and entries[-1][0] == e:
                entries[-1] = [e, entries[-1][1] + n]
            elif bug("log-merges-nearby") and entries and e - entries[-1][0] <= 16:
                entries[-1] = [entries[-1][0], entries[-1][1] + n]
            else:
                entries.append([e, n])
                self.appends += 1
                if bug("log-capped-at-64") and len(entries) > 64:
                    entries = entries[-64:]
                if bug("log-compaction-drops-newest") and self.appends % 128 == 0:
                    entries = entries[:-1]
            self.log, self.last = entries, e
            return allowed(max(0, lim - f - n))
        x = f + n - lim  # SWL-6
        acc = 0
        for a, m in entries:
            acc += m
            if acc >= x:
                return refuse_at(a + w, now)
        return never()  # unreachable: n <= lim

    def reset(self, now):  # SWL-9
        self.log, self.last = [], max(now, self.last)
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # SWL-10
        e = max(now, self.last)
        if not bug("log-reconfigure-keeps-expired"):
            self.log = self.live(e, self.cfg[1])
        self.cfg = cfg
        self.last = e
        f = sum(x[1] for x in self.live(e, cfg[1]))
        return allowed(max(0, cfg[0] - f))


class SlidingWindowCounter:  # SWC
    validate = staticmethod(validate_window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.c, self.p, self.last = 0, 0, t0

    def index(self, t):
        w = self.cfg[1]
        if bug("window-edge-off-by-one"):
            return (t - 1) // w
        if bug("counter-window-index-16-bit"):
            return t // w % 65536
        return t // w

    def rolled(self, now):  # SWC-3
        w = self.cfg[1]
        e = max(now, self.last)
        d = self.index(e) - self.index(self.last)
        c, p = self.c, self.p
        if d == 1:
            p, c = c, 0
        elif d >= 2:
            p, c = 0, 0
        o = e % w if bug("counter-window-index-16-bit") else e - self.index(e) * w  # e mod W
        return e, c, p, o

    def remaining(self, c, p, o):  # SWC-5
        lim, w = self.cfg
        x = p * (w - o)
        if bug("sliding-counter-floor"):
            return max(0, lim - x // w - c)
        if x > lim * w:
            return 0
        return max(0, (lim * w - x) // w - c)

    def acquire(self, n, now):
        lim, w = self.cfg
        if n > lim:
            return never()  # SWC-7
        e, c, p, o = self.rolled(now)
        if n == 0:
            return allowed(self.remaining(c, p, o))
        if bug("sliding-counter-floor"):
            ok = p * (w - o) // w + c + n <= lim
        elif bug("counter-product-wraps"):
            ok = wrap(wrap(p * (w - o), 64) + (c + n) * w, 64) <= lim * w
        elif bug("counter-rounds-nearest"):
            ok = (2 * p * (w - o) + w) // (2 * w) + c + n <= lim
        else:
            ok = p * (w - o) + (c + n) * w <= lim * w  # SWC-4
        if ok:
            self.c, self.p, self.last = c + n, p, e
            return allowed(self.remaining(c + n, p, o))
        k = self.index(e)  # SWC-6
        s = lim - c - n
        if s >= 0 and p > 0:
            q = s * w // p
            if q >= 1:
                return refuse_at(k * w + (w - q), now)
        if c <= lim - n:
            return refuse_at((k + 1) * w, now)
        q = (lim - n) * w // c
        if q >= 1:
            return refuse_at((k + 1) * w + (w - q), now)
        return refuse_at((k + 2) * w, now)

    def reset(self, now):  # SWC-9
        self.c, self.p, self.last = 0, 0, max(now, self.last)
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # SWC-10
        e, c, p, _ = self.rolled(now)
        self.cfg = cfg
        self.c, self.p, self.last = c, p, e
        o = e % cfg[1] if bug("counter-window-index-16-bit") else e - self.index(e) * cfg[1]
        return allowed(self.remaining(c, p, o))


class SlidingWindowSegments:  # SWS
    validate = staticmethod(validate_segments)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.t0 = t0
        self.creation = ALIGNMENT["sliding-window-segments"] == "creation"
        self.anchor = t0 if self.creation else 0  # SWS-13: segments are counted from it
        self.segments, self.last = [], t0  # [j, count], increasing j (SWS-2)

    def start(self, j, g):  # the first instant of segment j
        if bug("segments-aligned-to-creation"):
            return self.t0 + j * g
        return self.anchor + j * g

    def index(self, t, g):  # the segment of instant t
        if bug("segments-aligned-to-creation"):
            return (t - self.t0) // g
        return (t - self.anchor) // g

    def live(self, e, cfg):  # SWS-3: segments k - S < j <= k
        _, s, g = cfg
        k = self.index(e, g)
        first = k - s + 2 if bug("segments-slide-one-early") else k - s + 1
        if bug("segments-ring-of-16"):
            first = max(first, k - 15)
        return [[j, c] for j, c in self.segments if j >= first]

    def acquire(self, n, now):
        lim, s, g = self.cfg
        if n > lim:
            return never()  # SWS-7
        e = max(now, self.last)
        live = self.live(e, self.cfg)
        u = sum(c for _, c in live)
        if n == 0:
            return allowed(max(0, lim - u))  # SWS-5
        if u + n <= lim:  # SWS-4
            k = self.index(e, g)
            if live and live[-1][0] == k:
                live[-1][1] += n
            else:
                live.append([k, n])
            self.segments, self.last = live, e
            return allowed(lim - u - n)
        x = u + n - lim  # SWS-6: oldest segments first
        acc = 0
        for j, c in live:
            acc += c
            if acc >= x:
                shift = s - 1 if bug("segments-slide-one-early") else s
                return refuse_at(self.start(j + shift, g), now)
        return never()  # unreachable: n <= lim

    def reset(self, now):  # SWS-9
        self.segments, self.last = [], max(now, self.last)
        if self.creation:
            self.anchor = self.last  # SWS-13: as created at e
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # SWS-10
        e = max(now, self.last)
        g, g2 = self.cfg[2], cfg[2]
        moved = []
        for j, c in self.live(e, self.cfg):
            if bug("segments-reconfigure-at-first-instant"):
                t = self.start(j, g)
            else:
                t = min(self.start(j + 1, g) - 1, e)  # its last instant, not after e
            j2 = self.index(t, g2)
            if moved and moved[-1][0] == j2:
                moved[-1][1] += c
            else:
                moved.append([j2, c])
        if bug("segments-reconfigure-drops-current") and cfg[1] > 8 and moved:
            if moved[-1][0] == self.index(e, g2):
                moved.pop()
        self.cfg = cfg
        self.segments, self.last = moved, e
        u = sum(c for _, c in self.live(e, cfg))
        return allowed(max(0, cfg[0] - u))
