#!/usr/bin/env python3
"""Runs an implementation (the rest of the command line) and appends every protocol line, both
ways, to the file named by RECORD_FILE: one JSON message per line, for schema validation."""
import os, subprocess, sys, threading

log = open(os.environ["RECORD_FILE"], "a", buffering=1)
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

def answers():
    for line in child.stdout:
        log.write(line)
        sys.stdout.write(line)
        sys.stdout.flush()

reader = threading.Thread(target=answers, daemon=True)
reader.start()
for line in sys.stdin:
    log.write(line)
    child.stdin.write(line)
    child.stdin.flush()
child.stdin.close()
child.wait()
reader.join(timeout=2)
