#!/usr/bin/env python3
"""A rate limiter written from the Spec alone (Spec/*.md), speaking the
ratelimit-conformance JSON-lines protocol (Spec/protocol.md) on stdin/stdout.

Every strategy of the Spec (and composite limits, the wait queue and the adaptive rate and
concurrency of the scenario vectors), exact integer arithmetic (Python ints are arbitrary precision,
so every "128-bit" product of the Spec is exact here), no floating point in any
decision.

    python3 ratelimiter.py               speak the protocol on stdin/stdout
    python3 ratelimiter.py --list-bugs   print the names of the injectable bugs
    python3 ratelimiter.py --bug NAME    speak the protocol with one bug injected (repeat
                                         --bug NAME to inject several)
    python3 ratelimiter.py --fixed-window-alignment creation|first-event
                                         fixed windows aligned otherwise than to the origin
                                         (FW-13), declared in the fixed window's profile
    python3 ratelimiter.py --segments-alignment creation
                                         segments aligned to the creation (SWS-13), declared
                                         likewise

Standard library only; Python 3.9+.

This file is the command line; the code is in the package ratelimit_example beside it (its
__init__.py lists the modules). `import ratelimiter` gives handle(message, limiters), which answers
one message of the protocol, and main(argv).
"""

import json
import os
import sys

# The package beside this file, wherever the current directory is and however this file is run.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from ratelimit_example.bugs import BUGS, SAFETY_BUGS, inject  # noqa: E402
from ratelimit_example.protocol import PROFILE, handle, serve  # noqa: E402
from ratelimit_example.windows import ALIGNMENT  # noqa: E402

__all__ = ["BUGS", "SAFETY_BUGS", "PROFILE", "handle", "main", "serve"]  # what importers use: handle


def main(argv):
    # Nothing may ever reach standard error (the harness fails a case on it).
    try:
        sys.stderr = open(os.devnull, "w")
    except OSError:
        pass
    args = argv[1:]
    if args[:1] == ["--list-bugs"]:
        for name in BUGS:
            sys.stdout.write("%s %s\n" % (name, "safety" if name in SAFETY_BUGS else "exact"))
        sys.stdout.flush()
        return 0
    while args[:1] == ["--bug"]:
        if len(args) < 2 or args[1] not in BUGS:
            sys.stdout.write(json.dumps({"type": "error", "message": "unknown bug"}) + "\n")
            sys.stdout.flush()
            return 2
        inject(args[1])  # the one registry every module reads (ratelimit_example/bugs.py)
        args = args[2:]
    # FW-13, SWS-13: windows aligned otherwise than to the origin; the hello declares the variant
    # in the strategy's profile, which is then judged as it. Either flag, in either order.
    flags = {"--fixed-window-alignment": ("fixed-window", ("origin", "creation", "first-event")),
             "--segments-alignment": ("sliding-window-segments", ("origin", "creation"))}
    while args[:1] and args[0] in flags and len(args) >= 2:
        strategy, known = flags[args[0]]
        if args[1] not in known:
            sys.stdout.write(json.dumps({"type": "error", "message": "unknown alignment"}) + "\n")
            sys.stdout.flush()
            return 2
        ALIGNMENT[strategy] = args[1]
        args = args[2:]
    if args[:1] == ["--profile"] and len(args) >= 2:
        # Declares a narrower profile than the implementation's own (its members override
        # PROFILE's): how the harness's handling of thin profiles is tested. Answers are unchanged.
        PROFILE.update(json.loads(args[1]))
        args = args[2:]
    if args:
        sys.stdout.write(json.dumps({"type": "error", "message": "unknown arguments"}) + "\n")
        sys.stdout.flush()
        return 2
    return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
