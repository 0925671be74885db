#!/usr/bin/env python3
"""An implementation that misbehaves on purpose, one way per --mode, for the harness's tests.

It greets properly (except in mode bad-hello), creates every limiter, answers the first events
with a plausible result, and misbehaves on the event number given by --at (default 1). With
--window it speaks protocol 2 and accepts the window the harness offers (pipelining)."""
import json, sys, time

mode = sys.argv[sys.argv.index("--mode") + 1]
at = int(sys.argv[sys.argv.index("--at") + 1]) if "--at" in sys.argv else 1
events = 0

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        if mode == "bad-hello":
            send({"type": "hello", "protocol": 99})
        elif mode == "bad-window":
            send({"type": "hello", "protocol": 2, "implementation": "misbehave " + mode, "strategies": ["fixed-window"],
                  "window": 100000})
        elif "--window" in sys.argv and message.get("window"):
            send({"type": "hello", "protocol": 2, "implementation": "misbehave " + mode, "strategies": ["fixed-window"],
                  "window": message["window"]})
        else:
            send({"type": "hello", "protocol": 1, "implementation": "misbehave " + mode, "strategies": ["fixed-window"]})
    elif kind == "create":
        send({"type": "created", "id": message["id"]})
    elif kind == "drop":
        send({"type": "dropped", "id": message["id"]})
    elif kind == "bye":
        sys.exit(0)
    elif kind == "event":
        events += 1
        if events == at:
            if mode == "invalid-json":
                sys.stdout.write("{this is not json\n"); sys.stdout.flush(); continue
            if mode == "crash":
                sys.exit(3)
            if mode == "hang":
                time.sleep(3600)
            if mode == "stderr":
                sys.stderr.write("debug: thinking hard\n"); sys.stderr.flush()
            if mode == "wrong-id":
                send({"type": "result", "id": "nope", "result": {"kind": "allowed", "remaining": 0}}); continue
            if mode == "missing-field":
                send({"type": "result", "id": message["id"]}); continue
            if mode == "bad-result":
                send({"type": "result", "id": message["id"], "result": {"kind": "allowed", "remaining": "many"}}); continue
        send({"type": "result", "id": message["id"], "result": {"kind": "allowed", "remaining": 0}})
