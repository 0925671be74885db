# make verify: what CI runs (.ci/run) and what a newcomer runs on a fresh machine.
SWIFT ?= swift
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: verify test tsan build core-purity vectors conformance bench bench-smoke clean

## Build everything with warnings as errors, check the core's purity, run every test, run the
## benchmark's smoke mode, then the concurrent code's tests again under ThreadSanitizer.
verify: core-purity test bench-smoke tsan

## Build (warnings are errors) and run all tests in one process; RATELIMIT_SEED=<n> replays
## property tests. Long tests take turns in one heavy lane off the cooperative pool (RateLimitTestSupport),
## so the tests with a real-time watchdog (a stuck waiter fails after 10 s) hold under load too. The
## client's tests against a real HTTP server measure rates in real time, so they run alone, last.
test:
	$(SWIFT) test $(SWIFT_FLAGS)
	RATELIMIT_SERVER_TESTS=1 $(SWIFT) test --filter ServerIntegrationTests $(SWIFT_FLAGS)

## The adapters, the client, the manual clock and the linearizability checker under ThreadSanitizer (its own
## build folder, so the ordinary build is not rebuilt); any reported race fails the run.
TSAN_TESTS ?= RateLimitAdapterTests|RateLimitClientTests|ManualClockTests|LinearizabilityTests
tsan:
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan --filter '$(TSAN_TESTS)' $(SWIFT_FLAGS)

build:
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)

## RateLimitCore imports nothing but the standard library, RateLimitHTTP nothing but the core, and
## neither uses floating point (CORE-2).
core-purity:
	@if grep -rnE '^[[:space:]]*(@_[a-zA-Z]+[[:space:]]+)?import[[:space:]]' Sources/RateLimitCore; then \
		echo "RateLimitCore must import nothing (standard library only)"; exit 1; fi
	@if grep -rnwE 'Double|Float|Float16|Float32|Float64|Float80|CGFloat|TimeInterval' Sources/RateLimitCore; then \
		echo "RateLimitCore must not use floating point"; exit 1; fi
	@if grep -rnE '^[[:space:]]*(@_[a-zA-Z]+[[:space:]]+)?import[[:space:]]' Sources/RateLimitHTTP | grep -v 'import RateLimitCore$$'; then \
		echo "RateLimitHTTP must import nothing but RateLimitCore"; exit 1; fi
	@if grep -rnwE 'Double|Float|Float16|Float32|Float64|Float80|CGFloat|TimeInterval' Sources/RateLimitHTTP; then \
		echo "RateLimitHTTP must not use floating point"; exit 1; fi
	@echo "core-purity: RateLimitCore imports nothing, RateLimitHTTP only the core; neither uses floating point"

## The benchmarks in release mode: each cost with its ratio to the bare primitive measured in the
## same run (README, "Benchmarks"); BENCH_FLAGS=--json for machines, --check to fail on a missed target.
bench:
	$(SWIFT) run -c release ratelimit-bench $(BENCH_FLAGS)

## Every benchmark for a few operations, once, in debug, with valid JSON out: so it never rots.
bench-smoke:
	$(SWIFT) run $(SWIFT_FLAGS) ratelimit-bench --smoke --json | python3 -m json.tool > /dev/null
	@echo "bench-smoke: every benchmark ran; the JSON is valid"

## Regenerate Spec/vectors from the reference model (review the diff before committing).
vectors:
	$(SWIFT) run ratelimit-conformance --write-vectors Spec/vectors

## The conformance suite against the reference and against the Python example (random traces too).
conformance:
	$(SWIFT) run ratelimit-conformance
	$(SWIFT) run ratelimit-conformance --exec "python3 Examples/python/ratelimiter.py" --random 50 --seed 1

clean:
	rm -rf .build .build-tsan
