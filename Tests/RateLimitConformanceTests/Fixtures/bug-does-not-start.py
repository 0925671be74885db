#!/usr/bin/env python3
"""The Python example (Examples/python), except that with `--bug window-edge-off-by-one` it exits
at once, before its hello: how --mutation-score is tested to record a bug that does not start and
go on to the next one."""
import os, sys

if sys.argv[1:3] == ["--bug", "window-edge-off-by-one"]:
    sys.exit(3)
os.execvp("python3", ["python3", "Examples/python/ratelimiter.py"] + sys.argv[1:])
