#!/usr/bin/env python3
"""The Redis rate limiter scripts (Sources/RateLimitRedis/Scripts/*.lua) behind the ratelimit-conformance
JSON-lines protocol (Spec/protocol.md, version 2) on stdin/stdout.

Each protocol limiter is one Redis key, unique to this run (a random prefix); each event is one
EVALSHA of its strategy's script (or FCALL of its function, --functions) on a real redis-server, with the instant of the event as `now`
(the suite's clock, not the server's TIME) and the limiter's configuration as ARGV. The shim does
no arithmetic and keeps no state but the configuration of each limiter: every decision is the
script's.

    REDIS_URL=redis://127.0.0.1:6390 python3 shim.py     (or REDIS_PORT=6390, host 127.0.0.1)
    python3 shim.py             with neither set: on a redis-server of its own, started and
                                stopped with the shim (../common/redisclock.py; the matrix's row)
    --expire                    also expire each key on the suite's clock (SHARED-5); the clock
                                is then declared monotonic
    --functions                 FCALL each strategy's function of the library functions.lua
                                (SHARED-14, Redis 7.0+), loaded on "Function not found", instead
                                of EVALSHA of its script

Standard library only; Python 3.8+.
"""

import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INT64_MAX = (1 << 63) - 1
# A lease that outlasts every instant of the timeline: under the suite, no lease ever expires and
# the script is the plain concurrency limiter of Spec/ConcurrencyLimiter.md (SHARED-6).
SUITE_LEASE_NANOSECONDS = 1 << 63

# Each strategy's configuration fields, in its Spec table's order (the order of the script's ARGV).
FIELDS = {
    "gcra": ["burst", "emissionIntervalNanoseconds"],
    "token-bucket": ["capacity", "permitsPerPeriod", "periodNanoseconds", "initialTokens"],
    "token-bucket-interval": ["capacity", "tokensPerInterval", "intervalNanoseconds", "initialTokens"],
    "fixed-window": ["limit", "windowNanoseconds"],
    "sliding-window-log": ["limit", "windowNanoseconds"],
    "leaky-bucket-meter": ["capacity", "leakPermitsPerPeriod", "periodNanoseconds", "initialLevel"],
    "concurrency": ["limit"],
}


# ---------------------------------------------------------------------------------------------
# The connection: ../common/redisclock.py's RESP2 client, and its server when none is named.

sys.path.insert(0, os.path.join(HERE, "..", "common"))
import redisclock  # noqa: E402
from redisclock import Connection, RedisError  # noqa: E402


# ---------------------------------------------------------------------------------------------
# The scripts: prelude.lua followed by the strategy's file, run by EVALSHA, loaded on NOSCRIPT.


# The scripts live with the Swift product that embeds them; this shim drives the same files.
SCRIPTS = os.path.join(HERE, "..", "..", "Sources", "RateLimitRedis", "Scripts")


class Scripts:
    def __init__(self, redis):
        self.redis = redis
        self.sources = {}
        with open(os.path.join(SCRIPTS, "prelude.lua"), "rb") as f:
            prelude = f.read()
        for strategy in FIELDS:
            with open(os.path.join(SCRIPTS, strategy + ".lua"), "rb") as f:
                source = prelude + b"\n" + f.read()
            self.sources[strategy] = (hashlib.sha1(source).hexdigest(), source)
        # The composite limit's script is whole as `make redis-scripts` writes it.
        with open(os.path.join(SCRIPTS, "composite-script.lua"), "rb") as f:
            source = f.read()
        self.sources["composite"] = (hashlib.sha1(source).hexdigest(), source)

    def run(self, strategy, keys, *argv):
        """The script's reply to `argv` on `keys` (a key, or a composite's list of its limits' keys)."""
        keys = [keys] if isinstance(keys, str) else keys
        sha, source = self.sources[strategy]
        try:
            reply = self.redis.call("EVALSHA", sha, len(keys), *keys, *argv)
        except RedisError as error:
            if not str(error).startswith("NOSCRIPT"):
                raise
            self.redis.call("SCRIPT", "LOAD", source)
            reply = self.redis.call("EVALSHA", sha, len(keys), *keys, *argv)
        return dict(zip(reply[0::2], reply[1::2]))


class Functions:
    """The same files as one Redis Functions library (functions.lua, written by `make
    redis-scripts`): FCALL of the strategy's function, FUNCTION LOAD when the server has none."""

    def __init__(self, redis):
        self.redis = redis
        with open(os.path.join(SCRIPTS, "functions.lua"), "rb") as f:
            self.library = f.read()
        first = self.library.split(b"\n", 1)[0].decode()
        self.name = first[len("#!lua name="):]

    def run(self, strategy, keys, *argv):
        keys = [keys] if isinstance(keys, str) else keys
        function = "%s_%s" % (self.name, strategy.replace("-", "_"))
        try:
            reply = self.redis.call("FCALL", function, len(keys), *keys, *argv)
        except RedisError as error:
            if "Function not found" not in str(error):
                raise
            self.redis.call("FUNCTION", "LOAD", self.library)
            reply = self.redis.call("FCALL", function, len(keys), *keys, *argv)
        return dict(zip(reply[0::2], reply[1::2]))


# ---------------------------------------------------------------------------------------------
# The protocol.


def integer(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("not an integer: %r" % (value,))
    return str(value)


def configuration_argv(strategy, configuration):
    """The configuration's fields as ARGV; an optional field left out is "" (its default)."""
    return [integer(configuration[name]) if name in configuration else "" for name in FIELDS[strategy]]


def composite_keys(key, configuration):
    """A composite's keys, one per limit: `<key>:1`, `<key>:2`, ... (SHARED-9)."""
    limits = configuration.get("limits") if isinstance(configuration, dict) else None
    return ["%s:%d" % (key, i) for i in range(1, len(limits) + 1)] if isinstance(limits, list) else [key]


def composite_argv(configuration):
    """A composite configuration as the composite script's ARGV: the number of limits, then each
    limit's strategy and fields. A strategy without a script is sent by name alone: the script
    refuses it (notSupported), as the leaky bucket queue must be (COMP-2)."""
    limits = configuration.get("limits") if isinstance(configuration, dict) else None
    if not isinstance(limits, list):
        raise ValueError("a composite configuration needs \"limits\": %r" % (configuration,))
    argv = [str(len(limits))]
    for limit in limits:
        strategy = limit.get("strategy") if isinstance(limit, dict) else None
        if strategy not in FIELDS:
            argv.append("unsupported:%s" % (strategy,))
            break
        argv.append(strategy)
        argv += configuration_argv(strategy, limit.get("configuration") or {})
    return argv


def refused_json(lid, reply):
    answer = {"type": "refused", "id": lid, "field": reply["field"], "problem": reply["problem"]}
    if "maximum" in reply:
        answer["maximum"] = int(reply["maximum"])
    return answer


def result_json(reply):
    kind = reply["kind"]
    result = {"kind": kind}
    for name in ("remaining", "retryAfterNanoseconds", "shortfall", "maximum"):
        if name in reply:
            result[name] = int(reply[name])
    for name in ("field", "problem"):
        if name in reply:
            result[name] = reply[name]
    return result


class Shim:
    def __init__(self, scripts, expire):
        self.scripts = scripts
        self.expire = expire
        self.prefix = os.urandom(8).hex()
        self.limiters = {}  # id -> {"strategy", "configuration", "idle"}
        self.composites = {}  # scenario id -> its composite configuration

    def key(self, lid):
        # Each limiter its own hash tag: a script touches one key, so one Redis Cluster slot.
        return "ratelimit-conformance:{%s:%s}" % (self.prefix, lid)

    def profile(self):
        # The Spec's own profile: nanoseconds, the whole timeline (the scripts' integers are exact
        # up to 2^127, prelude.lua), time that goes back, every event, no tolerance, validation.
        return {
            "timeUnitNanoseconds": 1,
            "largestInstantNanoseconds": INT64_MAX,
            "monotonic": self.expire,  # SHARED-5: expiry on a clock that goes back forgets too early
            "events": ["weighted", "query", "invalid", "reset", "reconfigure"],
            "toleranceNanoseconds": 0,
            "validation": True,
            "createdAtFirstEvent": False,
        }

    def handle(self, msg):
        kind = msg.get("type")
        if kind == "hello":
            offered = msg.get("protocol")
            version = 2 if isinstance(offered, int) and offered >= 2 else 1
            answer = {"type": "hello", "protocol": version, "implementation": "redis-lua 1 (shim.py)",
                      "strategies": list(FIELDS)}
            if version == 2:
                answer["profiles"] = {strategy: self.profile() for strategy in FIELDS}
                # Composite limits of these strategies: one script over their keys (SHARED-9).
                answer["extensions"] = ["composite"]
            return answer
        lid = msg.get("id")
        if kind == "create":
            strategy = msg.get("strategy")
            if strategy not in FIELDS:
                return {"type": "unsupported", "id": lid, "reason": "no Redis script for %s" % strategy}
            configuration = msg.get("configuration") or {}
            reply = self.scripts.run(strategy, self.key(lid), "create", integer(msg.get("now")),
                                     *configuration_argv(strategy, configuration))
            if reply["kind"] == "refused":
                return refused_json(lid, reply)
            if reply["kind"] != "created":
                return {"type": "error", "message": "create answered %r" % (reply,)}
            self.limiters[lid] = {"strategy": strategy, "configuration": configuration, "idle": reply.get("idle")}
            return {"type": "created", "id": lid}
        if kind == "event":
            limiter = self.limiters.get(lid)
            if limiter is None:
                return {"type": "error", "message": "unknown limiter %r" % (lid,)}
            return {"type": "result", "id": lid, "result": self.event(lid, limiter, msg.get("now"), msg.get("event"))}
        if kind == "scenario":
            if msg.get("machine") != "composite":
                return {"type": "error", "message": "no Redis script for the %r machine" % (msg.get("machine"),)}
            configuration = msg.get("configuration") or {}
            reply = self.scripts.run("composite", composite_keys(self.key(lid), configuration), "create",
                                     integer(msg.get("now")), *composite_argv(configuration))
            if reply["kind"] == "refused":
                return refused_json(lid, reply)
            if reply["kind"] != "created":
                return {"type": "error", "message": "create answered %r" % (reply,)}
            self.composites[lid] = configuration
            return {"type": "created", "id": lid}
        if kind == "step":
            configuration = self.composites.get(lid)
            if configuration is None:
                return {"type": "error", "message": "unknown scenario %r" % (lid,)}
            event = msg.get("event") or {}
            now = msg.get("now")
            argv = [integer(now)] + composite_argv(configuration)
            operation = event.get("kind")
            if operation == "acquire":
                # Leases longer than the timeline: the plain concurrency limiter (as for one limit).
                argv += [integer(event.get("permits")), str(SUITE_LEASE_NANOSECONDS)]
            elif operation == "release":
                argv += [integer(event.get("permits"))]
            elif operation == "reconfigure":
                argv += composite_argv(event.get("configuration") or {})
            elif operation != "reset":
                raise ValueError("unknown event %r" % (operation,))
            reply = self.scripts.run("composite", composite_keys(self.key(lid), configuration), operation, *argv)
            if operation == "reconfigure" and reply["kind"] == "allowed":
                self.composites[lid] = event.get("configuration")
            return {"type": "answer", "id": lid, "answer": result_json(reply)}
        if kind == "drop":
            if self.limiters.pop(lid, None) is not None:
                self.scripts.redis.call("DEL", self.key(lid))
            configuration = self.composites.pop(lid, None)
            if configuration is not None and composite_keys(self.key(lid), configuration):
                self.scripts.redis.call("DEL", *composite_keys(self.key(lid), configuration))
            return {"type": "dropped", "id": lid}
        return {"type": "error", "message": "unknown message type %r" % (kind,)}

    def event(self, lid, limiter, now, event):
        strategy, key = limiter["strategy"], self.key(lid)
        if self.expire and limiter["idle"] not in (None, "never") and int(limiter["idle"]) <= now:
            # SHARED-5: what Redis does to a key whose expiry has passed, on the suite's clock.
            self.scripts.redis.call("DEL", key)
            limiter["idle"] = None
        argv = [integer(now)] + configuration_argv(strategy, limiter["configuration"])
        kind = event.get("kind")
        if kind == "acquire":
            argv += [integer(event.get("permits"))]
            if strategy == "concurrency":
                argv += [str(SUITE_LEASE_NANOSECONDS)]
        elif kind == "release":
            argv += [integer(event.get("permits"))]
        elif kind == "reconfigure":
            argv += configuration_argv(strategy, event.get("configuration") or {})
        elif kind != "reset":
            raise ValueError("unknown event %r" % (kind,))
        reply = self.scripts.run(strategy, key, kind, *argv)
        if "idle" in reply:
            limiter["idle"] = reply["idle"]
        if kind == "reconfigure" and reply["kind"] == "allowed":
            limiter["configuration"] = event.get("configuration")
        return result_json(reply)


def main(argv):
    options = argv[1:]
    if any(option not in ("--expire", "--functions") for option in options):
        sys.stderr.write("usage: shim.py [--expire] [--functions]\n")
        return 2
    expire = "--expire" in options
    url = os.environ.get("REDIS_URL") or (
        "redis://127.0.0.1:%s" % os.environ["REDIS_PORT"] if os.environ.get("REDIS_PORT") else None)
    if url is None:
        # No server named: one of the shim's own, started and stopped with it (the matrix's row).
        server = redisclock.start_for_shim()
        if server is None:
            return 2
        connection = server.connection
    else:
        connection = Connection(url)
    shim = Shim((Functions if "--functions" in options else Scripts)(connection), expire)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            if msg.get("type") == "bye":
                return 0
            answer = shim.handle(msg)
        except (RedisError, ValueError, KeyError, TypeError, AttributeError) as error:
            answer = {"type": "error", "message": "%s: %s" % (type(error).__name__, error)}
        sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
