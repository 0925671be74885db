#!/usr/bin/env bash
# Runs a command RUNS times in a row beside CPU-bound processes, stopping at the first failure, and
# prints each run's exit status and wall time: how the tests are shown to hold on a busy machine.
#
#   .ci/repeat-under-load.sh 10 swift test
#   LOAD=2 .ci/repeat-under-load.sh 10 make verify
#
# LOAD is how many busy loops run beside it (default 1: one of a 2-core machine's cores); each
# run's output goes to $REPEAT_DIR/run-N.log (default .build/repeat).
set -uo pipefail
runs=${1:?usage: $0 RUNS COMMAND...}
shift
load=${LOAD:-1}
logs=${REPEAT_DIR:-.build/repeat}
mkdir -p "$logs"
hogs=()
for _ in $(seq "$load"); do
    python3 -c 'while True: pass' &
    hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
echo "$* - $runs runs beside $load CPU-bound process(es) on $(nproc) cores"
for run in $(seq "$runs"); do
    started=$(date +%s)
    "$@" > "$logs/run-$run.log" 2>&1
    status=$?
    echo "run $run: exit $status in $(( $(date +%s) - started )) s"
    if [ "$status" -ne 0 ]; then
        echo "failed: $logs/run-$run.log"
        exit "$status"
    fi
done
echo "$runs of $runs passed"
