#!/usr/bin/env python3
"""A rate-limited HTTP server for the client's integration test (Spec/HTTP.md HTTP-11).

Standard library only. Listens on 127.0.0.1 on a free port, prints {"port": N} on one line, and
serves until its standard input closes (the test holds the other end: the server never outlives
it) or --lifetime seconds pass.

GET /limited?id=<request>  one request of the limited resource, admitted by GCRA in integer
                           nanoseconds: --rate per second, bursts of --burst. Admitted: 200 with
                           RateLimit-Policy and RateLimit (r = requests left now, t = seconds until
                           the burst is whole again). Refused: 429 with Retry-After (whole seconds,
                           rounded up) and RateLimit r=0, or with no field at all under --silent.
                           A retry of a refused id that arrives before its Retry-After expired is
                           counted as early.
GET /hostile?kind=<kind>   the first request of each kind gets a hostile reply, later ones 200:
                           retry-after  429, Retry-After: 99999999 (three years);
                           ratelimit    200, RateLimit: "default";r=0;t=999999999999999;
                           date         429, Date: Thu, 01 Jan 1970 00:00:00 GMT and a date-form
                                        Retry-After 2 s after the server's own wall clock.
GET /stats                 JSON: admitted, refused, early, the ids admitted, arrival instants.
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

    def __init__(self, rate, burst, silent=False):
        if SECOND % rate:
            raise SystemExit("--rate must divide 1,000,000,000 (an exact interval in nanoseconds)")
        self.interval = SECOND // rate
        self.burst = burst
        self.silent = silent
        self.tolerance = (burst - 1) * self.interval
        self.tat = 0
        self.lock = threading.Lock()
        self.admitted = []          # ids, in order
        self.refused = 0
        self.early = []             # ids retried before their Retry-After expired
        self.refused_until = {}     # id -> instant its last Retry-After expires
        self.arrivals = []          # (instant, status)
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
                self.arrivals.append((now, 429))
                if self.silent:
                    return 429, {}
                return 429, {"Retry-After": str(retry_after), "RateLimit": f'"burst";r=0;t={retry_after}'}
            self.tat = tat + self.interval
            left = (self.tolerance - (self.tat - now)) // self.interval + 1
            self.admitted.append(request_id)
            self.arrivals.append((now, 200))
            return 200, {
                "RateLimit-Policy": f'"burst";q={self.burst};w={ceil_seconds(self.burst * self.interval)}',
                "RateLimit": f'"burst";r={max(0, left)};t={ceil_seconds(self.tat - now)}',
            }

    def stats(self):
        with self.lock:
            return {
                "admitted": len(self.admitted), "refused": self.refused, "early": self.early,
                "admittedIDs": self.admitted, "arrivals": self.arrivals,
            }


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


def handler_for(limit):
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
            elif url.path == "/stats":
                self.reply(200, {"Content-Type": "application/json"}, json.dumps(limit.stats()).encode())
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
    parser.add_argument("--silent", action="store_true", help="429 names no wait (no Retry-After, no RateLimit)")
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(Limit(arguments.rate, arguments.burst, arguments.silent)))
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
