#!/usr/bin/env bash
# Usage: .ci/deadline.sh MINUTES command...
#
# Runs the command; if it is still running after MINUTES of wall-clock time, prints the stacks of
# every thread of each test process it started (gdb, when installed), kills the command and fails.
# A hang then ends as a failure that says where it hung, not as CI's own timeout with no trace.
# The tests' own watchdogs count served time (Tests/RateLimitTestSupport/ServedTime.swift), which
# stands still when the pool itself is stuck: this is the guard of last resort, set far above what
# a run takes on a busy 2-core machine.
set -uo pipefail
minutes=$1
shift
setsid "$@" &
leader=$!
trap 'kill -TERM -- -"$leader" 2>/dev/null' INT TERM
(
    # The sleep holds no descriptor of ours, and dies with this watcher: nothing outlives the run.
    sleep $((minutes * 60)) </dev/null >/dev/null 2>&1 &
    nap=$!
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    wait "$nap"
    kill -0 "$leader" 2>/dev/null || exit 0
    echo "deadline.sh: '$*' still running after $minutes minutes: the stacks of its test processes" >&2
    for pid in $(pgrep -s "$leader" -f 'PackageTests.xctest|ratelimit-conformance' || true); do
        echo "=== process $pid: $(tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null | cut -c1-200)" >&2
        if command -v gdb >/dev/null 2>&1; then
            timeout 300 gdb -p "$pid" --batch -ex "thread apply all bt 30" 2>&1 | grep -E '^(Thread|#)' >&2
        else
            echo "(gdb is not installed: no stacks)" >&2
        fi
    done
    kill -TERM -- -"$leader" 2>/dev/null
    sleep 10
    kill -KILL -- -"$leader" 2>/dev/null
) &
watcher=$!
wait "$leader"
status=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
if [ "$status" -ne 0 ]; then echo "deadline.sh: '$*' failed (status $status)" >&2; fi
exit "$status"
