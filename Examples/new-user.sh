#!/usr/bin/env bash
# A new user's path, replayable on a fresh clone with only the toolchain (and python3): an app that
# depends on this checkout and waits its turn, a limit shared through a local redis-server, and a
# conformance run of the quick start's 50-line GCRA. Each step is what README.md and the pages it
# links say, run as written there; each checks what the user should see. `make new-user` runs it;
# CI runs it after `make verify`. Building the app compiles the package once more, in the app's own
# folder (a few minutes on 2 cores).
#
#   Examples/new-user.sh            every step (Redis is skipped, saying so, without redis-server)
#   KEEP=1 Examples/new-user.sh     keeps the scratch folder to look at
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
redis_pid=
cleanup() {
    if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi
    if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
expect() {  # expect FILE TEXT: the user sees TEXT
    grep -qF -- "$2" "$1" || { echo "new-user: expected \"$2\" in the output above"; exit 1; }
}

step "1. An app (README, Install and An app in five minutes): the manifest and the example, as shown"
mkdir -p "$work/MyApp/Sources/MyApp"
# The README's manifest names a checkout two folders up; here the checkout is $repo.
sed "s|path: \"../..\"|path: \"$repo\"|" "$repo/Examples/Package/Package.swift" > "$work/MyApp/Package.swift"
cp "$repo/Examples/Swift/Actor/main.swift" "$work/MyApp/Sources/MyApp/main.swift"
(cd "$work/MyApp" && swift run --quiet MyApp) | tee "$work/app.txt"
expect "$work/app.txt" "go with 2"  # the limiter waited its turn and granted
expect "$work/app.txt" "fetched"    # the concurrency limit held while the body ran

step "2. A limit shared through Redis (RateLimitRedis, Shared limits with Redis): twice, sharing one quota"
if command -v redis-server > /dev/null; then
    port=$((20000 + RANDOM % 20000))
    redis-server --port "$port" --save "" --appendonly no --daemonize no > "$work/redis.log" 2>&1 &
    redis_pid=$!
    up=
    for _ in $(seq 50); do
        kill -0 "$redis_pid" 2> /dev/null || { cat "$work/redis.log"; echo "new-user: redis-server did not start"; exit 1; }
        if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then up=1; break; fi
        sleep 0.1
    done
    [ -n "$up" ] || { echo "new-user: redis-server did not listen on port $port within 5 s"; exit 1; }
    export REDIS_URL="redis://127.0.0.1:$port"
    # SWIFT_FLAGS (make passes its own) keeps the build `make verify` left, instead of another.
    # shellcheck disable=SC2086
    (cd "$repo" && swift build ${SWIFT_FLAGS:-} --product example-redis > /dev/null)
    # shellcheck disable=SC2086
    (cd "$repo" && swift run ${SWIFT_FLAGS:-} --skip-build example-redis) | tee "$work/redis-1.txt"
    # shellcheck disable=SC2086
    (cd "$repo" && swift run ${SWIFT_FLAGS:-} --skip-build example-redis) | tee "$work/redis-2.txt"
    expect "$work/redis-1.txt" "every answer came from Redis at 127.0.0.1:$port"
    expect "$work/redis-2.txt" "every answer came from Redis at 127.0.0.1:$port"
    expect "$work/redis-1.txt" "request 10: call the partner"
    expect "$work/redis-1.txt" "request 11: retry in"
    # The second process shares the burst the first one spent: less than a whole burst is left
    # (one permit comes back every 720 ms between the two runs).
    called=$(grep -c "call the partner" "$work/redis-2.txt" || true)
    if [ "$called" -ge 10 ]; then echo "new-user: the second run had a whole burst: not shared"; exit 1; fi
    echo "(the second run called the partner $called times of its 12: the quota is shared)"
else
    echo "skipped: redis-server is not installed (apt-get install redis-server; .ci/run installs it)"
fi

step "3. Checking an implementation (Spec/QuickStart.md): the 50-line GCRA, vectors alone, as shown"
# shellcheck disable=SC2086
(cd "$repo" && swift run ${SWIFT_FLAGS:-} --quiet ratelimit-conformance --exec "python3 Examples/quickstart/gcra.py" --quick) \
    | tee "$work/conformance.txt"
expect "$work/conformance.txt" "PASS: 1 of 12 strategies conform at level exact or better"

printf '\nnew-user: every step did what the documents say\n'
