#!/usr/bin/env python3
"""Python `rush` (sigmavirus24/rush), in-memory `DictionaryStore`, driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/rush/shim.py

Strategies, each a `Throttle(rate=Quota(...), limiter=...)` over its own `DictionaryStore`, one key:
- `gcra`: `GenericCellRatelimiter` with `Quota(period=B*T, count=B)` (its emission interval is
  `period / (count + maximum_burst)` = T, its tolerance `emission_interval * limit` = B*T);
- `fixed-window`: `PeriodicLimiter` with `Quota(period=W, count=N)`, FW-13's `first-event` variant
  (a period starts at the call that finds the last one over).
Spans are `datetime.timedelta`s of whole microseconds (the library's unit). See README.md.

The library is used unmodified. Its one clock reading is `BaseStore.current_time()`, which calls
`datetime.datetime.now(tzinfo)` (rush/stores/base.py:76) through the name `datetime` of the module
`rush.stores.base`; the shim binds that name to a stand-in whose `datetime.now(tz)` returns the
protocol's instant as an aware UTC datetime (`ORIGIN + now` microseconds). Every other name of the
real `datetime` module stays the real one. Nothing else reads a clock on the paths the shim uses
(`LimitData`'s default `created_at` and `RateLimitResult._now` are never reached: the limiters pass
`created_at=now`, and the shim never asks `resets_at()` / `retry_at()`).
"""

import datetime as _datetime
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

import rush  # noqa: E402
import rush.stores.base as base_module  # noqa: E402
from rush.limiters.gcra import GenericCellRatelimiter  # noqa: E402
from rush.limiters.periodic import PeriodicLimiter  # noqa: E402
from rush.quota import Quota  # noqa: E402
from rush.stores.dictionary import DictionaryStore  # noqa: E402
from rush.throttle import Throttle  # noqa: E402

US = 1_000  # ns per microsecond: datetime and timedelta resolve whole microseconds
UTC = _datetime.timezone.utc
# The protocol's instant 0: Unix time 1,700,000,000 s (2023-11-14T22:13:20Z), where the wall clock
# reads in real use. The timeline's end (+292 years, 2315) is far inside datetime's year 9999.
ORIGIN = _datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
KEY = "conformance"


class Clock:
    """The instant of the request being answered, in whole microseconds since the protocol's origin."""

    us = 0


CLOCK = Clock()


class _DatetimeClass:
    """`datetime.datetime` as rush.stores.base calls it: only `now(tz)` is looked up there."""

    @staticmethod
    def now(tz=None):
        moment = ORIGIN + _datetime.timedelta(microseconds=CLOCK.us)
        if tz is None:
            return moment.replace(tzinfo=None)
        return moment.astimezone(tz)


# The one clock rush reads, replaced where rush/stores/base.py looks it up (`datetime.datetime.now`);
# `datetime.timezone`, `datetime.tzinfo` and `datetime.timedelta` stay the real ones.
base_module.datetime = types.SimpleNamespace(
    datetime=_DatetimeClass, timezone=_datetime.timezone, tzinfo=_datetime.tzinfo, timedelta=_datetime.timedelta)

LIMITERS = {"gcra": GenericCellRatelimiter, "fixed-window": PeriodicLimiter}

PROFILE = {
    # datetime / timedelta: whole microseconds, exact integer arithmetic.
    "timeUnitNanoseconds": US,
    # Quota periods are timedeltas: whole microseconds.
    "configurationUnitNanoseconds": US,
    # The last whole microsecond of the timeline (2315, far before datetime.max).
    "largestInstantNanoseconds": INT64_MAX // US * US,
    # datetime.now(timezone.utc) is the wall clock: it may go back.
    "monotonic": False,
    # check(key, n) for any int n; peek (check with 0) as the query; clear as the reset; the same key
    # checked with another Quota as the reconfigure (rush takes the quota with every call).
    "events": ["weighted", "query", "invalid", "reset", "reconfigure"],
    # None: instants and spans are exact whole microseconds; what float arithmetic the GCRA does
    # (remaining = floor(distance / emission_interval + 0.5)) is the library's, never covered.
    "toleranceNanoseconds": 0,
    "validation": True,
    # A Throttle reads no clock when it is built: the state begins at the first check.
    "createdAtFirstEvent": True,
}


def _quota(strategy, configuration):
    """The Quota of a configuration; raises Refused (Quota's own ValueError, named by field) or
    Unsupported (a span that is not whole microseconds, or beyond timedelta's range)."""
    if strategy == "gcra":
        burst, interval = configuration.get("burst"), configuration.get("emissionIntervalNanoseconds")
        if not is_int(burst):
            raise Refused("burst", "notSupported")
        if not is_int(interval):
            raise Refused("emissionIntervalNanoseconds", "notSupported")
        if interval % US:
            raise Unsupported("emission intervals are whole microseconds (timedelta)")
        period_us, count = burst * (interval // US), burst
        # Quota validates the period (B*T), then the count (B): the field a refusal names is the
        # one whose value makes the period non-positive (B first), or the count B.
        period_field = "burst" if burst <= 0 else "emissionIntervalNanoseconds"
        count_field = "burst"
    else:
        limit, window = configuration.get("limit"), configuration.get("windowNanoseconds")
        if not is_int(limit):
            raise Refused("limit", "notSupported")
        if not is_int(window):
            raise Refused("windowNanoseconds", "notSupported")
        if window % US:
            raise Unsupported("periods are whole microseconds (timedelta)")
        period_us, count = window // US, limit
        period_field, count_field = "windowNanoseconds", "limit"
    try:
        period = _datetime.timedelta(microseconds=period_us)
    except OverflowError:
        raise Unsupported("a period of %d us is beyond datetime.timedelta (999999999 days)" % period_us)
    try:
        return Quota(period=period, count=count)
    except ValueError as error:
        message = str(error)
        if "period" in message:  # "The period must be a positive value." (quota.py:46)
            raise Refused(period_field, "mustBePositive")
        if "count" in message:  # "The quota's count must be non-negative." (quota.py:51)
            raise Refused(count_field, "mustNotBeNegative")
        raise


class Entry:
    def __init__(self, strategy, quota):
        self.strategy = strategy
        self.throttle = Throttle(rate=quota, limiter=LIMITERS[strategy](store=DictionaryStore()))


class RushShim(shimproto.Shim):
    implementation = "rush %s (DictionaryStore)" % (rush.__version__,)
    strategies = ["gcra", "fixed-window"]

    def profiles(self):
        profiles = {strategy: dict(PROFILE) for strategy in self.strategies}
        # FW-13: PeriodicLimiter starts a period at the check that finds the last one over.
        profiles["fixed-window"]["alignment"] = "first-event"
        return profiles

    def create(self, strategy, configuration, now):
        if strategy not in LIMITERS:
            raise Unsupported("not offered by rush")
        # Quota validates nothing else: whatever it accepts is created (count 0, periods whose
        # tolerance passes Int64.max ns), and the suite reports the acceptance (CORE-3).
        return Entry(strategy, _quota(strategy, configuration))

    def event(self, entry, event, now):
        CLOCK.us = now // US
        kind = event.get("kind")
        throttle = entry.throttle
        if kind == "acquire":
            permits = event.get("permits")
            if permits == 0:
                # The library's query: Throttle.peek(key), "equivalent to calling check with a
                # quantity of 0" (throttle.py:56-70); it stores what check(key, 0) stores.
                return allowed(throttle.peek(KEY).remaining)
            try:
                # Any int, negative included: rush does not check the quantity.
                result = throttle.check(KEY, permits)
            except OverflowError:
                # datetime / timedelta arithmetic on quantity * emission_interval leaves their
                # range (gcra.py:26, 32): the library raises instead of answering. Its API cannot
                # take this count (rule 6 of ../README.md).
                return invalid("permits", "notSupported")
            if not result.limited:
                # The library's own remaining (sent as it is, negative included: CONF-1).
                return allowed(result.remaining)
            # Refused: the library's own retry_after (a timedelta of whole microseconds).
            wait = result.retry_after
            return refused_for(now, (wait.days * 86_400_000_000 + wait.seconds * 1_000_000 + wait.microseconds) * US)
        if kind == "release":
            return invalid("release", "notSupported")  # rush has no release
        if kind == "reset":
            return allowed(throttle.clear(KEY).remaining)  # limiter.reset(key, rate)
        if kind == "reconfigure":
            try:
                quota = _quota(entry.strategy, event.get("configuration") or {})
            except Refused as refusal:
                return invalid(refusal.field, refusal.problem, refusal.maximum)
            except Unsupported:
                raise ValueError("a reconfigure to a configuration the shim cannot represent")
            # The same key, store and limiter, checked from now on with the new quota; the answer
            # is the library's query under it.
            throttle.rate = quota
            return allowed(throttle.peek(KEY).remaining)
        raise ValueError("event %r is outside the declared profile" % (kind,))


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(shimproto.serve(RushShim()))
