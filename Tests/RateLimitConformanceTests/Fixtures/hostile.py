#!/usr/bin/env python3
"""The Python example (Examples/python/ratelimiter.py), correct, with its answers rewritten one way
per --mode: the harness's tests drive it to prove that each rule of the suite bites.

    python3 hostile.py --mode MODE [--profile JSON] [--pids FILE]

Modes (the example's own answer is the starting point; "acquire" means acquire(n >= 1)):
  none                      no change (with --profile: checks that the harness keeps to it)
  conservative-then-unsafe  rejections in the first limiter come 1 ns late; in every later limiter
                            the first rejection becomes allowed(0)
  zero-retry                rejected(r) becomes rejected(0)
  negative-retry            rejected(r) becomes rejected(-5)
  negative-remaining        allowed(m) becomes allowed(-3)
  past-end                  rejected(r) becomes rejected(r + now + 1), past Int64.max when now > 0
  admit-invalid             acquire(n < 0) is answered allowed(1000)
  never-as-rejected         neverAllowed becomes rejected(1)
  reject-everything         every acquire is rejected with the longest well-formed retry-after
  reject-retry-1            every acquire is rejected(1): it never admits and never keeps its word
  answer-twice              the answer to the second event of every limiter is written twice
  crash-always              exits with status 3 at the first event of every process
  hang-always               never answers an event
  grandchild                starts `sleep 300` (its own child), writes both pids to the FIFO --pids,
                            which both keep open, and never answers an event
  stingy                    refuses every acquire the example admits with a retry-after of one quantum
                            (never more than CONF-5's bound), admitting only when its own previous
                            retry-after forces it; its state takes only what it admitted
  refuse-admin              answers invalid to every release, reset and reconfigure, applying none
  drop-garbage              answers every drop with a line that is not JSON

--profile JSON is sent as the hello's "profiles" entry for every strategy (protocol 2); the child
then answers {"type": "error"} to any message outside it (an instant or a configuration's span not
a multiple of the unit, an instant past the largest one, time going backwards on a monotonic
profile, an event kind it lacks).
"""
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "Examples", "python"))
import ratelimiter  # noqa: E402  (the example, unmodified)

INT64_MAX = (1 << 63) - 1
args = sys.argv[1:]
mode = args[args.index("--mode") + 1]
profile = json.loads(args[args.index("--profile") + 1]) if "--profile" in args else None
limiters = {}
strategies = {}
configurations = {}
promised = {}
first_limiter = None
unsafe_done = set()
events_per_limiter = {}
latest = {}
sleeper = None


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def off_unit(configuration):
    """A span of a configuration that is not a multiple of the profile's unit, or None."""
    unit = profile.get("timeUnitNanoseconds", 1)
    for name, value in (configuration or {}).items():
        if name.endswith("Nanoseconds") and isinstance(value, int) and value % unit != 0:
            return "%s %d is not a multiple of the unit %d" % (name, value, unit)
    return None


def quantum(strategy, c):
    """CONF-5's quantum of a configuration."""
    def ceil(a, b):
        return -(-a // b)
    if strategy == "token-bucket":
        return ceil(c["periodNanoseconds"], c["permitsPerPeriod"])
    if strategy == "leaky-bucket-meter":
        return ceil(c["periodNanoseconds"], c["leakPermitsPerPeriod"])
    if strategy in ("token-bucket-interval", "leaky-bucket-queue"):
        return c["intervalNanoseconds"]
    if strategy == "gcra":
        return c["emissionIntervalNanoseconds"]
    return c.get("windowNanoseconds", 0)


def outside_profile(message):
    """Why an event lies outside the declared profile, or None."""
    unit = profile.get("timeUnitNanoseconds", 1)
    now = message["now"]
    if now % unit != 0:
        return "instant %d is not a multiple of the unit %d" % (now, unit)
    if off_unit(message.get("event", {}).get("configuration")):
        return off_unit(message["event"]["configuration"])
    if now > profile.get("largestInstantNanoseconds", INT64_MAX):
        return "instant %d is past the largest instant" % now
    if profile.get("monotonic") and now < latest.get(message["id"], 0):
        return "time went backwards on a monotonic profile"
    event = message.get("event", {})
    kinds = set(profile.get("events", ["weighted", "query", "invalid", "reset", "reconfigure"]))
    kind = event.get("kind")
    if kind in ("reset", "reconfigure") and kind not in kinds:
        return "%s is not in the profile" % kind
    permits = event.get("permits", 1)
    if kind == "acquire" and permits > 1 and "weighted" not in kinds:
        return "a weighted acquire is not in the profile"
    if kind == "acquire" and permits == 0 and "query" not in kinds:
        return "acquire(0) is not in the profile"
    if permits < 0 and "invalid" not in kinds:
        return "negative permits are not in the profile"
    return None


def rewrite(message, answer):
    """The mode's change to the example's answer to an event."""
    global first_limiter
    lid, now, event, result = message["id"], message["now"], message["event"], answer["result"]
    kind, permits = event.get("kind"), event.get("permits", 0)
    acquire = kind == "acquire" and permits >= 1
    if first_limiter is None:
        first_limiter = lid
    if mode == "conservative-then-unsafe" and result["kind"] == "rejected":
        if lid == first_limiter:
            result["retryAfterNanoseconds"] += 1 if now + result["retryAfterNanoseconds"] < INT64_MAX else 0
        elif lid not in unsafe_done:
            unsafe_done.add(lid)
            answer["result"] = {"kind": "allowed", "remaining": 0}
    elif mode == "zero-retry" and result["kind"] == "rejected":
        result["retryAfterNanoseconds"] = 0
    elif mode == "negative-retry" and result["kind"] == "rejected":
        result["retryAfterNanoseconds"] = -5
    elif mode == "negative-remaining" and result["kind"] == "allowed":
        result["remaining"] = -3
    elif mode == "past-end" and result["kind"] == "rejected" and now > 0:
        result["retryAfterNanoseconds"] = INT64_MAX - now + 1
    elif mode == "admit-invalid" and kind == "acquire" and permits < 0:
        answer["result"] = {"kind": "allowed", "remaining": 1000}
    elif mode == "never-as-rejected" and result["kind"] == "neverAllowed" and now < INT64_MAX:
        answer["result"] = {"kind": "rejected", "retryAfterNanoseconds": 1}
    elif mode == "reject-everything" and acquire:
        answer["result"] = ({"kind": "rejected", "retryAfterNanoseconds": INT64_MAX - now}
                            if now < INT64_MAX else {"kind": "neverAllowed"})
    elif mode == "reject-retry-1" and acquire:
        answer["result"] = ({"kind": "rejected", "retryAfterNanoseconds": 1}
                            if now < INT64_MAX else {"kind": "neverAllowed"})
    return answer


for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "bye":
        sys.exit(0)
    if kind == "hello":
        answer = ratelimiter.handle(message, limiters)
        # One request at a time: its misbehaviours are placed on the step that sent it (the
        # example it wraps would accept a window, Spec/protocol.md "Pipelining").
        answer.pop("window", None)
        if profile is not None:
            answer["protocol"] = 2
            answer["profiles"] = {strategy: profile for strategy in answer["strategies"]}
        if mode == "grandchild":
            # Both keep the FIFO open for writing: its reader sees the end of file when both are gone.
            pids = open(args[args.index("--pids") + 1], "w")
            sleeper = subprocess.Popen(["sleep", "300"], pass_fds=(pids.fileno(),))
            pids.write("%d %d\n" % (os.getpid(), sleeper.pid))
            pids.flush()
        send(answer)
        continue
    if kind == "event":
        if mode == "crash-always":
            sys.exit(3)
        if mode in ("hang-always", "grandchild"):
            sys.stdin.readline()  # blocks: the harness sends nothing before this answer
            continue
        lid = message["id"]
        if profile is not None:
            reason = outside_profile(message)
            if reason is not None:
                send({"type": "error", "message": "outside the profile: " + reason})
                continue
            latest[lid] = max(latest.get(lid, 0), message["now"])
        events_per_limiter[lid] = events_per_limiter.get(lid, 0) + 1
        event, now = message["event"], message["now"]
        if mode == "refuse-admin" and event.get("kind") in ("release", "reset", "reconfigure"):
            send({"type": "result", "id": lid, "result": {"kind": "invalid", "field": "event", "problem": "notSupported"}})
            continue
        if mode == "stingy" and event.get("kind") == "acquire" and event.get("permits", 0) >= 1 \
                and strategies[lid] != "concurrency" and now < INT64_MAX:
            n = event["permits"]
            trial = ratelimiter.handle(message, {lid: copy.deepcopy(limiters[lid])})["result"]
            owed = promised.pop(lid, None)
            forced = owed is not None and n <= owed[0] and now >= owed[1]
            if trial["kind"] in ("allowed", "delayed") and not forced:
                r = min(max(1, quantum(strategies[lid], configurations[lid])), INT64_MAX - now)
                promised[lid] = (n, now + r)
                send({"type": "result", "id": lid, "result": {"kind": "rejected", "retryAfterNanoseconds": r}})
                continue
        promised.pop(lid, None)
        answer = rewrite(message, ratelimiter.handle(message, limiters))
        if event.get("kind") == "reconfigure" and answer["result"]["kind"] == "allowed":
            configurations[lid] = event["configuration"]
        if answer["result"]["kind"] == "rejected":
            promised[lid] = (event.get("permits", 0), now + answer["result"]["retryAfterNanoseconds"])
        if mode == "answer-twice" and events_per_limiter[lid] == 2:
            line = json.dumps(answer, separators=(",", ":")) + "\n"
            sys.stdout.write(line + line)  # one write, as a buffered double print would come
            sys.stdout.flush()
            continue
        send(answer)
        continue
    if kind == "create":
        strategies[message["id"]] = message["strategy"]
        configurations[message["id"]] = message["configuration"]
        if profile is not None:
            latest[message["id"]] = message["now"]
            if off_unit(message["configuration"]):
                send({"type": "error", "message": "outside the profile: " + off_unit(message["configuration"])})
                continue
    if kind == "drop" and mode == "drop-garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
        continue
    send(ratelimiter.handle(message, limiters))
