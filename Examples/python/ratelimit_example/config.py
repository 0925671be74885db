"""Configuration validation (CORE-3): each strategy's fields in the order of its Spec table (TB-1,
TBI-1, GCRA-1, PL-1, WU-1, FW-1, SWL-1, SWC-1, SWS-1, LBM-1, LBQ-1, CL-1), the first bad field
wins; a refusal is a ConfigError naming the field, the problem and the maximum, if any."""

import math

from .results import INT64_MAX, ceil_div


class ConfigError(Exception):
    def __init__(self, field, problem, maximum=None):
        Exception.__init__(self, field, problem, maximum)
        self.field = field
        self.problem = problem
        self.maximum = maximum


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _get(cfg, name, default=None, span=False):
    if name not in cfg:
        if default is not None:
            return default
        raise ConfigError(name, "mustBePositive")
    v = cfg[name]
    if isinstance(v, float):  # the protocol sends integers; be strict about anything else
        if not (math.isfinite(v) and v == math.floor(v)):
            raise ConfigError(name, "notWholeNanoseconds" if span else "notSupported")
        v = int(v)
    if not is_int(v):
        raise ConfigError(name, "notSupported")
    if v > INT64_MAX:  # CORE-3: too large for an integer
        raise ConfigError(name, "exceedsMaximum", INT64_MAX)
    return v


def positive(cfg, name, span=False):
    v = _get(cfg, name, span=span)
    if v < 1:
        raise ConfigError(name, "mustBePositive")
    return v


def non_negative(cfg, name, default, span=False):
    v = _get(cfg, name, default=default, span=span)
    if v < 0:
        raise ConfigError(name, "mustNotBeNegative")
    return v


def at_most(name, v, maximum):
    if v > maximum:
        raise ConfigError(name, "exceedsMaximum", maximum)


def validate_token_bucket(cfg):  # TB-1
    c = positive(cfg, "capacity")
    r = positive(cfg, "permitsPerPeriod")
    p = positive(cfg, "periodNanoseconds", span=True)
    i = non_negative(cfg, "initialTokens", c)
    at_most("initialTokens", i, c)
    at_most("periodNanoseconds", p, INT64_MAX * r // c)  # refill time, checked last
    return (c, r, p, i)


def validate_interval_bucket(cfg):  # TBI-1
    c = positive(cfg, "capacity")
    k = positive(cfg, "tokensPerInterval")
    i = positive(cfg, "intervalNanoseconds", span=True)
    init = non_negative(cfg, "initialTokens", c)
    at_most("initialTokens", init, c)
    at_most("intervalNanoseconds", i, INT64_MAX // ceil_div(c, k))  # refill time, checked last
    return (c, k, i, init)


def validate_gcra(cfg):  # GCRA-1
    b = positive(cfg, "burst")
    t = positive(cfg, "emissionIntervalNanoseconds", span=True)
    at_most("emissionIntervalNanoseconds", t, INT64_MAX // b)
    return (b, t)


def validate_pay_later(cfg):  # PL-1
    b = positive(cfg, "burst")
    t = positive(cfg, "emissionIntervalNanoseconds", span=True)
    i = non_negative(cfg, "initialTokens", b)
    at_most("initialTokens", i, b)
    at_most("emissionIntervalNanoseconds", t, INT64_MAX // b)  # tolerance, checked last
    return (b, t, i)


def validate_warm_up(cfg):  # WU-1
    b = positive(cfg, "burst")
    t = positive(cfg, "emissionIntervalNanoseconds", span=True)
    p = non_negative(cfg, "warmUpPeriodNanoseconds", None, span=True)
    at_most("emissionIntervalNanoseconds", t, INT64_MAX // b)  # tolerance, checked last
    return (b, t, p)


def validate_window(cfg):  # FW-1, SWL-1, SWC-1
    n = positive(cfg, "limit")
    w = positive(cfg, "windowNanoseconds", span=True)
    return (n, w)


def validate_segments(cfg):  # SWS-1
    n = positive(cfg, "limit")
    s = positive(cfg, "segmentsPerWindow")
    g = positive(cfg, "segmentNanoseconds", span=True)
    at_most("segmentNanoseconds", g, INT64_MAX // s)  # the window, checked last
    return (n, s, g)


def validate_meter(cfg):  # LBM-1
    c = positive(cfg, "capacity")
    r = positive(cfg, "leakPermitsPerPeriod")
    p = positive(cfg, "periodNanoseconds", span=True)
    lvl = non_negative(cfg, "initialLevel", 0)
    at_most("initialLevel", lvl, c)
    at_most("periodNanoseconds", p, INT64_MAX * r // c)  # drain time, checked last
    return (c, r, p, lvl)


def validate_queue(cfg):  # LBQ-1
    q = non_negative(cfg, "queueCapacity", None)
    at_most("queueCapacity", q, INT64_MAX - 1)
    t = positive(cfg, "intervalNanoseconds", span=True)
    at_most("intervalNanoseconds", t, INT64_MAX // (q + 1))  # tolerance, checked last
    return (q, t)


def validate_concurrency(cfg):  # CL-1
    return (positive(cfg, "limit"),)
