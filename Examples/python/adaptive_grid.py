#!/usr/bin/env python3
"""The model of ADAPT-16's whole-second claim (Spec/AdaptiveLimits.md), driven by this example's
adaptive rate: the source of the note's grid. A server admits by GCRA at R per second in bursts of
B and answers a refusal with `Retry-After` in whole seconds (at least one, as nginx's `limit_req`
and the tests' Python server do); the client's tasks send whenever their token bucket, set to the
learned limit, admits and no refusal holds them, each way of a request taking 1 ns to 1 ms; every
response goes to the adaptive rate. It is the Swift model's simulation
(Tests/RateLimitCoreTests/Support/SteadyServer.swift) with this example's machines, the same
numbers at the claim's points; the latencies come from Python's generator, so single runs differ.

    python3 Examples/python/adaptive_grid.py                    # the claim's points, then the grid
    python3 Examples/python/adaptive_grid.py --admissions 3000  # longer runs
    python3 Examples/python/adaptive_grid.py --doubling         # the start step doubles the rate

Each line gives, per start (as a share of the server's rate), the worst second half over 4 seeds of
1 and 8 tasks: the rate over the second half of the admissions as a share of R, and the most
refusals in the last third. No floating point decides anything; it only prints the shares."""

import argparse
import random

from ratelimit_example.adaptive import AdaptiveRate
from ratelimit_example.gcra import GCRA
from ratelimit_example.strategies import apply_event
from ratelimit_example.token_buckets import TokenBucket

SECOND = 1_000_000_000


def standard(rate, burst):  # HTTP-13: AdaptiveRate.standard(startingAt:)
    return AdaptiveRate.validate({
        "periodNanoseconds": SECOND, "maximumRate": 4 * rate, "initialRate": rate,
        "minimumRate": max(1, rate // 100), "burst": burst, "startIncrease": max(1, rate // 4),
        "increase": max(1, rate // 100), "decreasePercent": 10, "steepDecreasePercent": 50,
        "coolDownNanoseconds": SECOND})


class Doubling(AdaptiveRate):
    """The same machine, except that before its first decrease a round doubles the rate."""

    def serve(self, e):
        if not self.decreased:
            self.cfg = self.cfg[:5] + (self.rate,) + self.cfg[6:]
        return super().serve(e)


def bucket(rate, burst):  # the token bucket that enforces a learned limit (ADAPT-15)
    return {"capacity": burst, "permitsPerPeriod": rate, "periodNanoseconds": SECOND}


def run(server, start, tasks, seed, admissions=600, machine=AdaptiveRate):
    """One run: (second half's rate as a share of the server's, refusals in the last third)."""
    rnd = random.Random(seed)
    gcra = GCRA(GCRA.validate({"burst": server[1], "emissionIntervalNanoseconds": SECOND // server[0]}), 0)
    client = TokenBucket(TokenBucket.validate(bucket(*start)), 0)
    adaptive = machine(standard(*start), 0)
    limit = start
    held, admitted, refused = 0, [], []
    agenda = [(0, None)] * tasks  # per task: its next instant, and the response it then reads
    while len(admitted) < admissions:
        task = min(range(tasks), key=lambda i: agenda[i][0])
        now, response = agenda[task]
        if response is None:  # ready to send
            if held > now:
                agenda[task] = (held, None)
                continue
            answer = apply_event(client, {"kind": "acquire", "permits": 1}, now)
            if answer["kind"] == "rejected":
                agenda[task] = (now + answer["retryAfterNanoseconds"], None)
                continue
            arrival = now + rnd.randint(1, 1_000_000)
            verdict = apply_event(gcra, {"kind": "acquire", "permits": 1}, arrival)
            if verdict["kind"] == "allowed":
                admitted.append(arrival)
                response = (200, now, 0)
            else:  # Retry-After in whole seconds, counted from the response's arrival (HTTP-9)
                refused.append(arrival)
                wait = verdict["retryAfterNanoseconds"]
                response = (429, now, max(1, -(-wait // SECOND)) * SECOND)
            agenda[task] = (arrival + rnd.randint(1, 1_000_000), response)
            continue
        status, sent, hold = response
        held = max(held, now + hold)
        answer = adaptive.step({"kind": "response", "status": status, "latencyNanoseconds": now - sent,
                                "inFlight": 1}, now)
        if (answer["rate"], answer["burst"]) != limit:
            limit = (answer["rate"], answer["burst"])
            apply_event(client, {"kind": "reconfigure", "configuration": bucket(*limit)}, now)
        agenda[task] = (now, None)
    first, last = admitted[len(admitted) // 2], admitted[-1]
    share = (len(admitted) - len(admitted) // 2 - 1) * SECOND / (last - first) / server[0]
    third = admitted[2 * len(admitted) // 3]
    return share, sum(1 for t in refused if t >= third)


def worst(server, start, admissions, machine, seeds=4):
    runs = [run(server, start, tasks, seed, admissions, machine) for tasks in (1, 8) for seed in range(seeds)]
    return min(share for share, _ in runs), max(late for _, late in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admissions", type=int, default=600)
    parser.add_argument("--doubling", action="store_true", help="a round doubles the rate before the first decrease")
    args = parser.parse_args()
    machine = Doubling if args.doubling else AdaptiveRate
    print(f"{args.admissions} admissions; worst second half of 8 runs (4 seeds, 1 and 8 tasks), refusals in the last third")
    points = [((100, 10), (50, 5)), ((100, 10), (200, 20)), ((20, 6), (40, 10)), ((20, 6), (10, 3))]
    for server, start in points:
        share, late = worst(server, start, args.admissions, machine)
        print(f"server {server[0]}/s burst {server[1]}, client from {start[0]}/s burst {start[1]}: "
              f"{100 * share:.0f}%, {late} late")
    for server in ((100, 10), (20, 6)):
        row = []
        for percent in range(50, 201, 10):
            start = (server[0] * percent // 100, max(1, server[1] * percent // 100))
            share, late = worst(server, start, args.admissions, machine)
            row.append(f"{percent}%: {100 * share:.0f}" + ("*" * late))
        print(f"grid, server {server[0]}/s burst {server[1]} (* a refusal in the last third):")
        print("  " + ", ".join(row))


if __name__ == "__main__":
    main()
