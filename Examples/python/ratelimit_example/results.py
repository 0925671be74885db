"""Results of an event (CORE-5 .. CORE-8: allowed, delayed, rejected, neverAllowed, invalid), the
Int64 bound of the timeline and the integer helpers every strategy uses. Python integers are
arbitrary precision, so every "128-bit" product of the Spec is exact here; wrap() is only for bugs
that imitate a fixed-width integer."""

import os
import sys

from .bugs import bug


INT64_MAX = (1 << 63) - 1


def wrap(value, bits):
    """`value` as a signed integer of `bits` bits holds it, wrapped (two's complement)."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def crash():
    """Ends the process at once, as a crash does: no answer, no goodbye."""
    sys.stdout.flush()
    os._exit(3)


def allowed(remaining):
    return {"kind": "allowed", "remaining": remaining}


def delayed(wait, remaining):
    return {"kind": "delayed", "waitNanoseconds": wait, "remaining": remaining}


def never():
    return {"kind": "neverAllowed"}


def invalid(field, problem, maximum=None):
    r = {"kind": "invalid", "field": field, "problem": problem}
    if maximum is not None:
        r["maximum"] = maximum
    return r


def refuse_at(a, now):
    """CORE-7: a refused acquire with admission instant a."""
    if a > INT64_MAX:
        if bug("never-allowed-saturates"):
            return {"kind": "rejected", "retryAfterNanoseconds": INT64_MAX - now}
        return never()
    return {"kind": "rejected", "retryAfterNanoseconds": a - now}


def ceil_div(a, b):
    return -((-a) // b)
