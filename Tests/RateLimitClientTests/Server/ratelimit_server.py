#!/usr/bin/env python3
"""A rate-limited HTTP server for the client's integration test (Spec/HTTP.md HTTP-11).

Standard library only. Listens on 127.0.0.1 on a free port, prints {"port": N} on one line, and
serves until its standard input closes (the test holds the other end: the server never outlives
it) or --lifetime seconds pass.

GET /limited?id=<request>  one request of the limited resource, admitted by GCRA in integer
                           nanoseconds (a leaky bucket): --rate per second, bursts of --burst. The
                           fields it answers with depend on --fields:
                           ratelimit    admitted: 200 with RateLimit-Policy "burst" and RateLimit
                                        (r = requests left now, t = seconds until the burst is
                                        whole again); refused: 429 with Retry-After (whole seconds,
                                        rounded up) and RateLimit r=0 (the default);
                           retry-after  admitted: 200 alone; refused: 429 with Retry-After alone;
                           policy       every answer states the rate, RateLimit-Policy
                                        "rate";q=<rate>;w=1; refused: 429 with Retry-After;
                           none         429 with no field at all (also --silent).
                           A retry of a refused id that arrives before its Retry-After expired is
                           counted as early.
GET /limited/<request>     the same request of the same resource, named by its path as an S3
                           object of bucket "limited" is (path-style): what botocore's adaptive
                           mode sends (botocore_client.py); a 429's body is S3's throttling error,
                           SlowDown, by which botocore recognises throttling.
GET /slow?id=<request>     one request to a server with --workers workers, each serving a request
                           in --service-ms milliseconds, first come first served: more requests in
                           flight than workers wait, so the latency grows with the requests in
                           flight beyond the workers. More than --refuse-above in flight: 503.
GET /hostile?kind=<kind>   the first request of each kind gets a hostile reply, later ones 200:
                           retry-after  429, Retry-After: 99999999 (three years);
                           ratelimit    200, RateLimit: "default";r=0;t=999999999999999;
                           date         429, Date: Thu, 01 Jan 1970 00:00:00 GMT and a date-form
                                        Retry-After 2 s after the server's own wall clock.
GET /stats                 JSON: admitted, refused, early, the ids admitted, arrivals (instant,
                           status, the Retry-After of a 429 in nanoseconds) and their ids; and
                           "slow": served, refused, the ids served, (arrival, requests in flight
                           then, latency) per request served.
"""

import argparse
import email.utils
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SECOND = 1_000_000_000


def ceil_seconds(nanoseconds):
    return -(-nanoseconds // SECOND)


class Limit:
    """GCRA: the theoretical arrival time `tat`; a request at t is admitted when
    tat - t <= (burst - 1) * interval, and then tat = max(tat, t) + interval."""

    def __init__(self, rate, burst, fields="ratelimit"):
        if SECOND % rate:
            raise SystemExit("--rate must divide 1,000,000,000 (an exact interval in nanoseconds)")
        self.interval = SECOND // rate
        self.burst = burst
        self.fields = fields
        self.rate = rate
        self.tolerance = (burst - 1) * self.interval
        self.tat = 0
        self.lock = threading.Lock()
        self.admitted = []          # ids, in order
        self.refused = 0
        self.early = []             # ids retried before their Retry-After expired
        self.refused_until = {}     # id -> instant its last Retry-After expires
        self.arrivals = []          # (instant, status, Retry-After in nanoseconds or 0)
        self.arrival_ids = []       # the id of each arrival
        self.origin = time.monotonic_ns()

    def decide(self, request_id):
        with self.lock:
            now = time.monotonic_ns() - self.origin
            until = self.refused_until.pop(request_id, None)
            if until is not None and now < until:
                self.early.append(request_id)
            tat = max(self.tat, now)
            if tat - now > self.tolerance:
                wait = tat - now - self.tolerance
                retry_after = max(1, ceil_seconds(wait))
                self.refused += 1
                self.refused_until[request_id] = now + retry_after * SECOND
                self.arrivals.append((now, 429, retry_after * SECOND))
                self.arrival_ids.append(request_id)
                if self.fields == "none":
                    return 429, {}
                if self.fields == "retry-after":
                    return 429, {"Retry-After": str(retry_after)}
                if self.fields == "policy":
                    return 429, {"Retry-After": str(retry_after), "RateLimit-Policy": f'"rate";q={self.rate};w=1'}
                return 429, {"Retry-After": str(retry_after), "RateLimit": f'"burst";r=0;t={retry_after}'}
            self.tat = tat + self.interval
            left = (self.tolerance - (self.tat - now)) // self.interval + 1
            self.admitted.append(request_id)
            self.arrivals.append((now, 200, 0))
            self.arrival_ids.append(request_id)
            if self.fields in ("none", "retry-after"):
                return 200, {}
            if self.fields == "policy":
                return 200, {"RateLimit-Policy": f'"rate";q={self.rate};w=1'}
            return 200, {
                "RateLimit-Policy": f'"burst";q={self.burst};w={ceil_seconds(self.burst * self.interval)}',
                "RateLimit": f'"burst";r={max(0, left)};t={ceil_seconds(self.tat - now)}',
            }

    def stats(self):
        with self.lock:
            return {
                "admitted": len(self.admitted), "refused": self.refused, "early": self.early,
                "admittedIDs": self.admitted, "arrivals": self.arrivals, "arrivalIDs": self.arrival_ids,
            }


class Workers:
    """A server whose latency grows with the requests in flight: `workers` serve one request each
    for `service` seconds, first come first served; more than `refuse_above` in flight are refused."""

    def __init__(self, workers, service_ms, refuse_above):
        self.slots = threading.Semaphore(workers)
        self.service = service_ms / 1000
        self.refuse_above = refuse_above
        self.lock = threading.Lock()
        self.in_flight = 0
        self.served = []            # ids, in order
        self.refused = 0
        # (arrival, in flight then, latency, a worker took it, the worker let it go), nanoseconds
        self.samples = []
        self.origin = time.monotonic_ns()

    def serve(self, request_id):
        arrival = time.monotonic_ns()
        with self.lock:
            self.in_flight += 1
            in_flight = self.in_flight
            if in_flight > self.refuse_above:
                self.in_flight -= 1
                self.refused += 1
                return 503
        with self.slots:
            started = time.monotonic_ns()
            time.sleep(self.service)
            finished = time.monotonic_ns()
        with self.lock:
            self.in_flight -= 1
            self.served.append(request_id)
            self.samples.append((arrival - self.origin, in_flight, time.monotonic_ns() - arrival,
                                 started - self.origin, finished - self.origin))
        return 200

    def stats(self):
        with self.lock:
            return {"served": len(self.served), "refused": self.refused, "servedIDs": self.served,
                    "samples": self.samples}


HOSTILE_SEEN = set()
HOSTILE_LOCK = threading.Lock()


def hostile_reply(kind):
    """The first request of `kind` gets the hostile reply; later ones 200."""
    with HOSTILE_LOCK:
        first = kind not in HOSTILE_SEEN
        HOSTILE_SEEN.add(kind)
    if not first:
        return 200, {}
    if kind == "retry-after":
        return 429, {"Retry-After": "99999999"}
    if kind == "ratelimit":
        return 200, {"RateLimit": '"default";r=0;t=999999999999999'}
    if kind == "date":
        retry_at = email.utils.formatdate(int(time.time()) + 2, usegmt=True)
        return 429, {"Date": "Thu, 01 Jan 1970 00:00:00 GMT", "Retry-After": retry_at}
    return 404, {}


SLOW_DOWN = b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>refused</Message></Error>'


def handler_for(limit, workers):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            url = urlparse(self.path)
            if url.path == "/hostile":
                status, fields = hostile_reply(parse_qs(url.query).get("kind", ["?"])[0])
                self.reply(status, fields, b"hostile\n", own_date="Date" in fields)
            elif url.path == "/limited":
                request_id = parse_qs(url.query).get("id", ["?"])[0]
                status, fields = limit.decide(request_id)
                self.reply(status, fields, b"ok\n" if status == 200 else b"slow down\n")
            elif url.path.startswith("/limited/"):
                status, fields = limit.decide(url.path[len("/limited/"):])
                self.reply(status, fields, b"ok\n" if status == 200 else SLOW_DOWN)
            elif url.path == "/slow":
                status = workers.serve(parse_qs(url.query).get("id", ["?"])[0])
                self.reply(status, {}, b"ok\n" if status == 200 else b"busy\n")
            elif url.path == "/stats":
                stats = limit.stats()
                stats["slow"] = workers.stats()
                self.reply(200, {"Content-Type": "application/json"}, json.dumps(stats).encode())
            else:
                self.reply(404, {}, b"not found\n")

        def reply(self, status, fields, body, own_date=False):
            if own_date:
                self.send_response_only(status)  # no Date of the server's: the reply brings its own
            else:
                self.send_response(status)
            for name, value in fields.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, required=True, help="requests per second")
    parser.add_argument("--burst", type=int, required=True, help="requests at once")
    parser.add_argument("--lifetime", type=float, default=120.0, help="seconds before it stops anyway")
    parser.add_argument("--silent", action="store_true", help="429 names no wait (the same as --fields none)")
    parser.add_argument("--fields", choices=["ratelimit", "retry-after", "policy", "none"], default="ratelimit",
                        help="the rate-limit fields /limited answers with")
    parser.add_argument("--workers", type=int, default=4, help="/slow: requests served at once")
    parser.add_argument("--service-ms", type=float, default=25.0, help="/slow: milliseconds per request")
    parser.add_argument("--refuse-above", type=int, default=1000, help="/slow: 503 beyond this many in flight")
    arguments = parser.parse_args()
    limit = Limit(arguments.rate, arguments.burst, "none" if arguments.silent else arguments.fields)
    workers = Workers(arguments.workers, arguments.service_ms, arguments.refuse_above)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(limit, workers))
    server.daemon_threads = True
    server.request_queue_size = 128
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    # Stop when the test closes our standard input (or dies), or when the lifetime ends.
    stopper = threading.Thread(target=lambda: sys.stdin.read(), daemon=True)
    stopper.start()
    stopper.join(arguments.lifetime)
    server.shutdown()


if __name__ == "__main__":
    main()
