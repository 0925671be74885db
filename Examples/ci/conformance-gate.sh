#!/usr/bin/env bash
# A CI gate on the conformance suite (Spec/Conformance.md, "Add the suite to your CI"): the first
# run writes today's findings as expectations, to review and commit; every later run fails only on
# a finding that is new or worse than expected, and writes a JUnit report for the CI's test view.
#
#   conformance-gate.sh "COMMAND THAT SPEAKS THE PROTOCOL" [EXPECTATIONS_FILE]
#
# RATELIMIT_CONFORMANCE  the command's path (default: ratelimit-conformance on the PATH)
# RATELIMIT_SEED         the seed of the random traces and generated scenarios (default 1): the
#                        expectations hold for the seed and options they were written with
# RATELIMIT_ARGS         more options, the same on every run (for example "--budget 120" or "--quick")
# RATELIMIT_JUNIT        where the JUnit report goes (default conformance.xml)
set -uo pipefail
implementation=${1:?usage: $0 \"COMMAND\" [EXPECTATIONS_FILE]}
expectations=${2:-conformance-expectations.json}
cli=${RATELIMIT_CONFORMANCE:-ratelimit-conformance}
read -r -a extra <<< "${RATELIMIT_ARGS:-}"
run=("$cli" --exec "$implementation" --seed "${RATELIMIT_SEED:-1}" --junit "${RATELIMIT_JUNIT:-conformance.xml}" ${extra[@]+"${extra[@]}"})
if [ ! -f "$expectations" ]; then
    "${run[@]}" --write-expect "$expectations"
    status=$?
    # 0: it conforms; 1: findings, now expected. 2 (usage) and 3 (not run) fail the job.
    if [ "$status" -gt 1 ]; then exit "$status"; fi
    echo "conformance-gate: wrote $expectations; review it and commit it: later runs fail only on what is new or worse"
    exit 0
fi
"${run[@]}" --expect "$expectations"
