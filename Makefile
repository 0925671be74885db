# make verify: what CI runs (.ci/run) and what a newcomer runs on a fresh machine.
SWIFT ?= swift
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: verify tools test tsan tsan-all build core-purity format lint docs api api-check readme readme-check redis-scripts redis-scripts-check facades facades-check vectors conformance exhaustive matrix matrix-setup matrix-quick bench bench-smoke bench-redis bench-peers soak fuzz fuzz-long new-user botocore clean

## Check the formatting, the core's purity and that the generated sources (the Redis scripts
## embedded in RateLimitRedis, the Dispatch adapter's shared members) are up to date, build
## everything with warnings as errors, run every test, check the public API against its listing
## and the README's examples against their files, build the DocC documentation without a warning
## and run the benchmarks' smoke modes: about 7.5 minutes on a fresh clone of a 2-core machine. ThreadSanitizer's build and run would double that: .ci/run runs every test under
## it after verify (make tsan-all); make tsan runs the concurrent code's tests under it.
verify: lint core-purity redis-scripts-check facades-check tools test api-check readme-check docs bench-smoke

## What some tests need from the system; each such test says it skipped when its tool is missing.
tools:
	@command -v chromium >/dev/null 2>&1 || echo "note: chromium is not installed: the browser test of the HTML report is skipped (apt-get install chromium; .ci/run installs it)"
	@command -v redis-server >/dev/null 2>&1 || echo "note: redis-server is not installed: the Redis tests are skipped (apt-get install redis-server; .ci/run installs it)"
	@[ -x /usr/sbin/nginx ] || echo "note: nginx is not installed: the adaptive client's test against nginx is skipped (apt-get install nginx-light; .ci/run installs it)"

## Build (warnings are errors) and run every test in one process (Swift Testing runs them in
## parallel; long ones take turns in the heavy lane, and every watchdog counts served time, so a busy
## machine slows them but never fails them), then the client's tests against a real HTTP server,
## which measure rates in real time, alone (RATELIMIT_SERVER_TESTS=1). RATELIMIT_SEED=<n> replays
## property tests; README.md, "Running the tests", says how to run or skip the real-time tests.
test:
	$(SWIFT) test $(SWIFT_FLAGS)
	RATELIMIT_SERVER_TESTS=1 $(SWIFT) test --filter ServerIntegrationRealTimeTests $(SWIFT_FLAGS)

## The adapters, the client, the manual clock, the linearizability checker and the Redis limiters under ThreadSanitizer (its own
## build folder, so the ordinary build is not rebuilt); any reported race fails the run.
TSAN_TESTS ?= RateLimitAdapterTests|RateLimitClientTests|ManualClockTests|LinearizabilityTests|RateLimitRedisTests
tsan:
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan --filter '$(TSAN_TESTS)' $(SWIFT_FLAGS)

## Every test under ThreadSanitizer (about 20 minutes on 2 cores with its build: .ci/run runs it
## after verify, and it passes on a busy machine as `swift test` does).
tsan-all:
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan $(SWIFT_FLAGS)

## botocore (the AWS SDK for Python), pinned, in a Python of its own (.build/botocore): the adaptive
## client's test against nginx runs its adaptive retry mode beside ours (skipped, saying so, without it).
BOTOCORE_VERSION ?= 1.44.8
botocore:
	python3 -m venv .build/botocore
	.build/botocore/bin/pip install --quiet botocore==$(BOTOCORE_VERSION)

## The toolchain's swift-format with the team's configuration (.swift-format: 4 spaces, 120 columns).
FORMATTED = Sources Tests Examples Package.swift Fuzz/Sources Fuzz/Package.swift
format:
	$(SWIFT) format format --in-place --recursive --parallel $(FORMATTED)
lint:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMATTED)

build:
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)

## RateLimitCore imports nothing but the standard library, reads no clock and touches no
## concurrency (outside comments); RateLimitHTTP imports nothing but the core; neither uses
## floating point (CORE-2).
CONCURRENCY_WORDS = Clock|ContinuousClock|SuspendingClock|Task|AsyncStream|AsyncSequence|CheckedContinuation|UnsafeContinuation|withTaskCancellationHandler|withCheckedContinuation|actor|async|await|Mutex|Atomic|nonisolated|Thread|DispatchQueue
core-purity:
	@if grep -rnE --include='*.swift' '^[[:space:]]*(@_[a-zA-Z]+[[:space:]]+)?import[[:space:]]' Sources/RateLimitCore; then \
		echo "RateLimitCore must import nothing (standard library only)"; exit 1; fi
	@if grep -rnwE --include='*.swift' 'Double|Float|Float16|Float32|Float64|Float80|CGFloat|TimeInterval' Sources/RateLimitCore; then \
		echo "RateLimitCore must not use floating point"; exit 1; fi
	@if grep -rnwE --include='*.swift' '$(CONCURRENCY_WORDS)' Sources/RateLimitCore | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//'; then \
		echo "RateLimitCore must not read a clock or touch concurrency (shell code lives in RateLimitShell and the adapters)"; exit 1; fi
	@if grep -rnE --include='*.swift' '^[[:space:]]*(@_[a-zA-Z]+[[:space:]]+)?import[[:space:]]' Sources/RateLimitHTTP | grep -v 'import RateLimitCore$$'; then \
		echo "RateLimitHTTP must import nothing but RateLimitCore"; exit 1; fi
	@if grep -rnwE --include='*.swift' 'Double|Float|Float16|Float32|Float64|Float80|CGFloat|TimeInterval' Sources/RateLimitHTTP; then \
		echo "RateLimitHTTP must not use floating point"; exit 1; fi
	@echo "core-purity: RateLimitCore imports nothing, reads no clock and touches no concurrency, RateLimitHTTP imports only the core; neither uses floating point"

## Each product's public API, listed from the toolchain's symbol graphs into API/<Product>.md;
## api-check fails when the built API and the committed listing differ (run `make api` and commit).
## Every product's DocC documentation (symbol graphs + the toolchain's docc; warnings are errors),
## into .build/docs/<Product>.doccarchive.
docs: build
	python3 .ci/docs.py

api: build
	python3 .ci/public-api.py write
api-check: build
	python3 .ci/public-api.py check

## The README's Swift examples are Examples/Swift/*/main.swift verbatim (each an executable target
## built with its one product); readme copies the files into the README.
readme:
	python3 .ci/readme-examples.py write
	$(SWIFT) build --product ratelimit-conformance $(SWIFT_FLAGS)
	python3 .ci/report-excerpt.py write
readme-check:
	python3 .ci/readme-examples.py check
	$(SWIFT) build --product ratelimit-conformance $(SWIFT_FLAGS)
	python3 .ci/report-excerpt.py check

## The Redis scripts (Sources/RateLimitRedis/Scripts/*.lua, the one source of truth) embedded in the
## RateLimitRedis target: redis-scripts writes Sources/RateLimitRedis/RedisScriptSources.swift,
## redis-scripts-check fails when it differs from the files.
redis-scripts:
	python3 .ci/redis-scripts.py write
redis-scripts-check:
	python3 .ci/redis-scripts.py check

## The members the Dispatch adapter shares with the lock adapter, written once in the lock adapter's
## files (between their BEGIN and END lines): facades writes the Dispatch adapter's *+Shared.swift,
## facades-check fails when they differ.
facades:
	python3 .ci/facades.py write
facades-check:
	python3 .ci/facades.py check

## The benchmarks in release mode: each cost with its ratio to the bare primitive measured in the
## same run (Performance.md has the figures); BENCH_FLAGS=--json for machines, --check to fail on a missed target.
bench:
	$(SWIFT) run -c release ratelimit-bench $(BENCH_FLAGS)

## A shared limiter's decision against one round trip of a trivial script on the same connection,
## on a redis-server the benchmark starts (the RateLimitRedis article "Shared limits with Redis"); BENCH_FLAGS as above.
bench-redis:
	$(SWIFT) run -c release ratelimit-redis-bench $(BENCH_FLAGS)

## Side by side with Go's golang.org/x/time/rate (not in verify: it needs Go and the Debian
## golang-golang-x-time-dev): the Swift loops and Go's, run in alternation in the same minutes, each
## pair printed as a ratio (Performance.md, "Side by side with Go"). PEERS_FLAGS=--rounds N, --json.
bench-peers:
	$(SWIFT) build -c release --product ratelimit-bench
	python3 .ci/bench-peers.py $(PEERS_FLAGS)

## Every benchmark for a few operations, once, in debug, with valid JSON out: so it never rots.
bench-smoke:
	$(SWIFT) run $(SWIFT_FLAGS) ratelimit-bench --smoke --json | python3 -m json.tool > /dev/null
	$(SWIFT) run $(SWIFT_FLAGS) ratelimit-redis-bench --smoke --json | python3 -m json.tool > /dev/null
	$(SWIFT) run $(SWIFT_FLAGS) ratelimit-bench --soak 10
	$(SWIFT) run $(SWIFT_FLAGS) ratelimit-redis-bench --soak 10
	@echo "bench-smoke: every benchmark ran; the JSON is valid; the registry, the client and the Redis limiters held up for 10 s of soak each"

## The registry under sustained mixed traffic for SOAK_SECONDS (keys coming and going past the key
## limit, throttles, queued requests timing out or cancelled, rule changes, resets), in simulated
## time, memory sampled each round: it fails when the heap grows after warm-up, a descriptor leaks,
## a key admits past GCRA-11's bound or a queued request gets other than one outcome (Soak.swift).
## Then the rate-limited client for as long, on a manual clock, against a simulated server that
## refuses, fails and drops connections while requests are cancelled and limits learned: it fails
## also when a request never ends, a sleeper is left on the clock, or a request goes out inside a
## server's wait the client announced (HTTP-12; ClientSoak.swift). Then the Redis limiters for as long against a real redis-server, with its script cache flushed
## and every connection killed along the way (Tests/ratelimit-redis-bench/Soak.swift).
SOAK_SECONDS ?= 300
soak:
	$(SWIFT) run -c release ratelimit-bench --soak $(SOAK_SECONDS)
	$(SWIFT) run -c release ratelimit-redis-bench --soak $(SOAK_SECONDS)

## A new user's path, replayed as README.md and the pages it links say (Examples/new-user.sh): an
## app that depends on this checkout and waits its turn, a limit shared through a local
## redis-server (skipped, saying so, without one), the quick start's GCRA through the suite.
new-user:
	SWIFT_FLAGS="$(SWIFT_FLAGS)" Examples/new-user.sh

## The conformance matrix of real libraries (not in verify: it needs the libraries). matrix-setup
## installs the pinned versions into git-ignored folders (Implementations/README.md); matrix runs
## every implementation of Implementations/matrix.json, writes reports/MATRIX.md and reports/matrix.html,
## and appends the run to reports/matrix-history.jsonl (MATRIX.md ends with that history).
## Traces of 100 steps, not the command's 10,000: Spec/Conformance.md, "Who conforms", says why.
## Two rows at once (--jobs 2): each runs in processes of its own and its answers are not timed
## (--timeout 60 only ends a hang: a busy machine can keep a Python shim from answering for seconds).
MATRIX_FLAGS ?= --random 50 --random-steps 100 --seed 1 --jobs 2 --timeout 60
matrix-setup:
	sh Implementations/setup.sh
## Every row on the vectors alone, printed and written nowhere: that each shim still starts and
## speaks the protocol with its library (CI runs it after setup; the levels are not judged).
matrix-quick: matrix-setup
	$(SWIFT) build --product ratelimit-conformance
	$(SWIFT) run ratelimit-conformance --matrix Implementations/matrix.json --random 0 --jobs 2 --timeout 60
matrix: matrix-setup
	$(SWIFT) build --product ratelimit-conformance
	$(SWIFT) run ratelimit-conformance --matrix Implementations/matrix.json $(MATRIX_FLAGS) \
		--markdown reports/MATRIX.md --html reports/matrix.html --history reports/matrix-history.jsonl
	@# The README's picture: Go's answer when time goes back (CORE-10), drawn and rendered by chromium.
	$(SWIFT) run ratelimit-conformance --exec Implementations/go-x-time-rate/.build-go/shim \
		--draw token-bucket/refusals-record-nothing > .build/go-time-backwards.svg
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=980,320 \
		--screenshot=reports/images/go-time-backwards.png file://$(CURDIR)/.build/go-time-backwards.svg 2>/dev/null

## Regenerate Spec/vectors from the reference model (review the diff before committing).
vectors:
	$(SWIFT) run ratelimit-conformance --write-vectors Spec/vectors

## The exhaustive pass deeper than `make verify` runs it (Spec/Conformance.md, "Exhaustive checking",
## has the numbers): the strategies' walks to their fixpoint as in verify, the wait queues to 7
## operations (4 in verify) and their paths through the adapters to 4 (3), then the Python
## example replayed at the default depth.
exhaustive:
	RATELIMIT_EXHAUSTIVE=deep $(SWIFT) test --filter Exhaustive $(SWIFT_FLAGS)
	$(SWIFT) run $(SWIFT_FLAGS) ratelimit-conformance --exec "python3 Examples/python/ratelimiter.py" --exhaustive default

## Coverage-guided fuzzing (libFuzzer, AddressSanitizer) of every parser of input the package does
## not control: response fields, the protocol's answers, JSON, vector and expectation files,
## configurations, Redis replies. Fuzz/ is a package of its own (the main package's products are
## unchanged); each target runs FUZZ_SECONDS, and a crash, leak or hang fails with its input kept.
FUZZ_SECONDS ?= 30
fuzz:
	Fuzz/run.sh $(FUZZ_SECONDS)

## The same, ten minutes per target; the corpora grow in Fuzz/corpus between runs.
fuzz-long:
	Fuzz/run.sh 600

## The conformance suite against the reference and against the Python example (random traces too).
conformance:
	$(SWIFT) run ratelimit-conformance
	$(SWIFT) run ratelimit-conformance --exec "python3 Examples/python/ratelimiter.py" --random 50 --seed 1

clean:
	rm -rf .build .build-tsan Fuzz/.build
