import RateLimitCore

// Spec/CompositeLimit.md: a request passes only if every limit admits it, and then every limit
// records it (COMP-4); when one refuses, none records anything and the answer is the first
// invalid, else neverAllowed, else the largest shortfall, else the largest retry-after (COMP-5).

extension ScenarioCatalogue {
    static func compositeCases() -> [ScenarioCase] {
        let machine = ScenarioMachine.composite
        func composite(_ limits: JSONValue...) -> JSONValue { .object([("limits", .array(limits))]) }
        // 2 tokens, one per 10 ns; and 4 per window of 100 ns.
        let bucket = limit(TokenBucket.identifier, tokenBucket(2))
        let window = limit(FixedWindow.identifier, ["limit": 4, "windowNanoseconds": 100])
        let bucketAndWindow = composite(bucket, window)
        let inFlight = limit(ConcurrencyLimiter.identifier, ["limit": 2])
        let log = limit(SlidingWindowLog.identifier, ["limit": 3, "windowNanoseconds": 100])
        let queue = limit(LeakyBucketQueue.identifier, ["queueCapacity": 2, "intervalNanoseconds": 10])
        return [
            story(
                machine, "all-or-nothing",
                "a token bucket and a fixed window: admitted only when both admit, recorded by both or by neither",
                clauses: ["COMP-4", "COMP-5"], bucketAndWindow,
                [
                    (
                        0, acquire(1), allowed(1),
                        "both admit; remaining is the smaller: bucket 2 − 1 = 1, window 4 − 1 = 3"
                    ),
                    (
                        0, acquire(2), rejected(10),
                        "the bucket holds 1 of 2: one token in 10 ns; the window would admit"
                    ),
                    (
                        10, acquire(2), allowed(0),
                        "the bucket refilled to 2 takes 2; the window counts 1 + 2 = 3: the refusal at 0 recorded nothing"
                    ),
                    (25, acquire(1), allowed(0), "the bucket holds 1.5 (15 ns), the window 1: both admit; 0 left"),
                    (
                        26, acquire(1), rejected(74),
                        "both refuse: the bucket in 4 ns (0.6 held), the window at its end, 100 − 26 = 74: the larger"
                    ),
                    (
                        99, acquire(1), rejected(1),
                        "one before the window's end: the full bucket admits, the window 1 ns"
                    ),
                    (100, acquire(2), allowed(0), "a new window: 2 of 4; the bucket 2 − 2 = 0"),
                    (100, acquire(3), never, "3 > 2, the smallest maximum (the bucket's capacity): never (COMP-6)"),
                    (100, acquire(0), allowed(0), "a query: the smallest remainder, recording nothing"),
                ]),
            story(
                machine, "in-flight-and-rate",
                "a concurrency limit and a sliding window log: a shortfall comes before a retry-after",
                clauses: ["COMP-5", "COMP-7"], composite(inFlight, log),
                [
                    (0, acquire(2), allowed(0), "2 in flight of 2; the log holds 2 of 3"),
                    (0, acquire(1), untilRelease(1), "in flight 2 + 1 − 2: one release needed; the log would admit"),
                    (5, release(1), allowed(1), "the release goes to the concurrency limit: 1 free; the log 1"),
                    (5, acquire(1), allowed(0), "2 in flight; the log full: 3 of 3"),
                    (6, release(2), allowed(0), "none in flight; the log still full: the smaller is 0"),
                    (6, acquire(1), rejected(94), "the log's first 2 entries leave at 0 + 100: 94 ns"),
                    (6, acquire(3), never, "3 > 2, the concurrency limit"),
                    (7, release(1), invalid("permits", .exceedsMaximum(0)), "none is held: invalid, nothing changes"),
                    (7, release(-1), invalid("permits", .mustNotBeNegative), "a negative release"),
                    (100, acquire(2), allowed(0), "the entries of 0 left at 100: the log holds 1 + 2; 2 in flight"),
                    (
                        100, acquire(1), untilRelease(1),
                        "both refuse (the log until 105): time alone does not help, so the shortfall is the answer"
                    ),
                    (100, release(1), allowed(0), "1 free in flight; the log still full"),
                    (101, acquire(1), rejected(4), "now only the log refuses: its entry of 5 leaves at 105"),
                ]),
            story(
                machine, "reset-and-reconfigure",
                "reset resets every limit; a reconfigure keeps the shape: the same strategies in the same order",
                clauses: ["COMP-7", "COMP-8"], bucketAndWindow,
                [
                    (0, acquire(2), allowed(0), "bucket empty; window 2 of 4"),
                    (1, reset, allowed(2), "every limit reset: the bucket full (2), the window empty (4)"),
                    (
                        1, reconfigure(composite(limit(TokenBucket.identifier, tokenBucket(3, initial: 0)), window)),
                        allowed(2), "a larger bucket keeps its 2 tokens; the window keeps its count: the smaller, 2"
                    ),
                    (1, reconfigure(composite(bucket)), invalid("limits", .notSupported), "another number of limits"),
                    (
                        1, reconfigure(composite(window, bucket)), invalid("limits[0]", .notSupported),
                        "the same limits in another order: another strategy at position 0"
                    ),
                    (
                        1,
                        reconfigure(
                            composite(limit(TokenBucket.identifier, tokenBucket(0, initial: 0)), window)),
                        invalid("capacity", .mustBePositive), "a limit its own strategy refuses: that refusal"
                    ),
                    (1, acquire(3), rejected(10), "capacity 3 is in force (no never): 2 held, one more in 10 ns"),
                    (11, acquire(3), allowed(0), "3 tokens at 11; the window 3 of 4"),
                ]),
            story(
                machine, "release-without-holder",
                "a release with no concurrency limit is not supported, whatever the count",
                clauses: ["COMP-7"], bucketAndWindow,
                [
                    (0, release(1), invalid("release", .notSupported), "no limit holds permits"),
                    (0, release(-1), invalid("release", .notSupported), "whatever the count"),
                    (0, acquire(-1), invalid("permits", .mustNotBeNegative), "negative permits (CORE-9)"),
                    (0, acquire(0), allowed(2), "nothing changed"),
                ]),
            story(
                machine, "never-before-shortfall",
                "near the end of the timeline: an admission past its end is never, before a concurrency shortfall",
                clauses: ["COMP-5", "COMP-6"], composite(bucket, inFlight), createdAt: end(5),
                [
                    (end(5), acquire(2), allowed(0), "the bucket empty, 2 in flight of 2"),
                    (
                        end(5), acquire(1), never,
                        "a token in 10 ns would come after Int64.max: never, though a release would also be needed"
                    ),
                    (end(5), release(2), allowed(0), "none in flight; the bucket still empty"),
                    (end(), acquire(1), never, "0.5 token at the end of the timeline: the next half never comes"),
                ]),
            refusal(
                machine, "refuse-empty", "a composite of no limit", clauses: ["COMP-2"], composite(), "limits",
                .mustBePositive),
            refusal(
                machine, "refuse-queue", "a leaky bucket queue schedules starts: it cannot be part of a composite",
                clauses: ["COMP-2"], composite(bucket, queue), "limits[1]", .notSupported),
            refusal(
                machine, "refuse-limit", "a limit its own strategy refuses is refused as that strategy refuses it",
                clauses: ["COMP-2", "CORE-3"],
                composite(window, limit(TokenBucket.identifier, tokenBucket(0, initial: 0))), "capacity",
                .mustBePositive),
            refusal(
                machine, "refuse-first", "the first refusal in the order of the limits: the queue at position 0",
                clauses: ["COMP-2"], composite(queue, limit(TokenBucket.identifier, tokenBucket(0, initial: 0))),
                "limits[0]", .notSupported),
        ]
    }
}
