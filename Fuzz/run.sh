#!/usr/bin/env bash
# Builds the fuzz targets (libFuzzer with AddressSanitizer), seeds their corpora from the vectors
# and runs each for SECONDS (default 30), printing its executions and what it added; a crash, a
# leak or an input slower than 10 s fails the run and leaves the input as Fuzz/crash-* (replay it
# with `Fuzz/.build/debug/TARGET Fuzz/crash-...`).
#
#   Fuzz/run.sh [SECONDS] [TARGET...]      (make fuzz, make fuzz-long)
set -uo pipefail
cd "$(dirname "$0")"
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(FuzzHTTP FuzzProtocol FuzzJSON FuzzFiles FuzzConfigurations FuzzRedis)
# `--sanitize fuzzer` makes SwiftPM link libFuzzer's `main`, but SwiftPM passes each sanitizer as
# its own `-sanitize=` flag and swiftc keeps only the last one: with `--sanitize address` after it,
# no coverage counters. One `-sanitize=fuzzer,address` passed last instruments both ways. Dead
# stripping would drop the counters' sections (nothing references them by name).
swift build --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address --disable-dead-strip 2>&1 \
    | grep -vE "ld.gold: warning: Cannot export local symbol"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
python3 seed-corpora.py
mkdir -p logs
status=0
for target in "${targets[@]}"; do
    log="logs/$target.log"
    .build/debug/"$target" "corpus/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=./ > "$log" 2>&1
    code=$?
    runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    added=$(grep -E '^stat::new_units_added' "$log" | awk '{print $2}')
    if ! grep -q "inline 8-bit counters" "$log"; then
        echo "fuzz: $target FAILED: built without coverage counters (see Fuzz/$log)"
        status=1
    elif [ "$code" -eq 0 ]; then
        echo "fuzz: $target: ${runs:-0} inputs in $seconds s, ${added:-0} new to the corpus, nothing found"
    else
        echo "fuzz: $target FAILED (exit $code): see Fuzz/$log"
        grep -E "ERROR|SUMMARY|Fatal error|artifact" "$log" | head -5
        status=1
    fi
done
exit $status
