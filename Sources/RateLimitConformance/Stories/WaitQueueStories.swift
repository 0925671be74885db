import RateLimitCore

// Spec/WaitQueue.md: waiters served by priority then arrival, only the head offered to the
// strategy (WQ-3); a newcomer waits behind any waiter of its priority or higher, a critical one
// never waits (WQ-4); serving at an instant times out, grants, times out again (WQ-5); every
// operation first serves each wake-up that fell due, at its own instant (WQ-7); outcomes come in
// the order WQ-14 gives.

extension ScenarioCatalogue {
    static func waitQueueCases() -> [ScenarioCase] {
        let machine = ScenarioMachine.waitQueue
        /// A queue of `queueLimit` permits in front of a strategy.
        func queue(_ strategy: String, _ fields: KeyValuePairs<String, Int64>, queueLimit: Int64) -> JSONValue {
            .object([
                ("strategy", .string(strategy)), ("configuration", self.fields(fields)),
                ("queueLimit", .integer(queueLimit)),
            ])
        }
        func bucket(_ capacity: Int64, initial: Int64? = nil, queueLimit: Int64 = 5) -> JSONValue {
            queue(TokenBucket.identifier, tokenBucket(capacity, initial: initial), queueLimit: queueLimit)
        }
        /// An acquire that may wait, named `ticket`.
        func request(
            _ ticket: Int64, _ permits: Int64, _ priority: String = "normal", deadline: Int64? = nil,
            arrival: Int64? = nil
        ) -> JSONValue {
            .object(
                [
                    ("kind", .string("acquire")), ("ticket", .integer(ticket)), ("permits", .integer(permits)),
                    ("priority", .string(priority)),
                ] + (deadline.map { [("deadline", JSONValue.integer($0))] } ?? [])
                    + (arrival.map { [("arrival", JSONValue.integer($0))] } ?? []))
        }
        func tryAcquire(_ permits: Int64, _ priority: String = "normal") -> JSONValue {
            .object([("kind", .string("tryAcquire")), ("permits", .integer(permits)), ("priority", .string(priority))])
        }
        func availability(_ permits: Int64, _ priority: String = "normal") -> JSONValue {
            .object([
                ("kind", .string("availability")), ("permits", .integer(permits)), ("priority", .string(priority)),
            ])
        }
        func cancel(_ ticket: Int64) -> JSONValue {
            .object([("kind", .string("cancel")), ("ticket", .integer(ticket))])
        }
        let advance = JSONValue.object([("kind", .string("advance"))])
        let close = JSONValue.object([("kind", .string("close"))])

        // Answers: the outcomes decided, in order, then the next wake-up.
        func served(_ completions: [(Int64, JSONValue, Int64)], wake: Int64? = nil, _ first: (String, JSONValue)...)
            -> JSONValue
        {
            .object(
                first + [
                    ("completions", self.completions(completions)),
                    ("nextWakeUp", wake.map(JSONValue.integer) ?? .null),
                ])
        }
        func answered(_ outcome: JSONValue, wake: Int64? = nil) -> JSONValue {
            served([], wake: wake, ("outcome", outcome))
        }
        func stepResult(_ result: JSONValue, _ completions: [(Int64, JSONValue, Int64)] = [], wake: Int64? = nil)
            -> JSONValue
        {
            served(completions, wake: wake, ("result", result))
        }
        let bypassed = outcome("bypassed")
        let timedOut = outcome("timedOut")

        return [
            story(
                machine, "keeps-its-place",
                "a request naming an earlier arrival (a retry) is served before the waiters of its priority that arrived after it",
                clauses: ["WQ-3", "WQ-4"], bucket(1, initial: 0),
                [
                    (0, request(1, 1), served([], wake: 10), "the bucket starts empty: #1 waits for the token of 10"),
                    (2, request(2, 1), served([], wake: 10), "#1 is ahead: #2 waits"),
                    (4, request(3, 1, arrival: 1), served([], wake: 10), "arrived at 1: after #1 (0), before #2 (2)"),
                    (10, advance, served([(1, granted(allowed(0)), 10)], wake: 20), "#1 first"),
                    (20, advance, served([(3, granted(allowed(0)), 20)], wake: 30), "then #3, which kept its place"),
                    (30, advance, served([(2, granted(allowed(0)), 30)]), "then #2"),
                    (31, request(4, 1), served([], wake: 40), "the token of 30 is taken: #4 waits for 40"),
                    (35, request(5, 1, arrival: 31), served([], wake: 40), "the same arrival as #4, made after it"),
                    (36, request(6, 1, arrival: 30), served([], wake: 40), "arrived at 30: before #4"),
                    (40, advance, served([(6, granted(allowed(0)), 40)], wake: 50), "#6 first"),
                    (50, advance, served([(4, granted(allowed(0)), 50)], wake: 60), "then #4"),
                    (60, advance, served([(5, granted(allowed(0)), 60)]), "then #5"),
                    (61, request(7, 1, arrival: 1_000), served([], wake: 70), "an arrival after its own counts as 61"),
                    (62, request(8, 1), served([], wake: 70), "#7 arrived at 61: ahead"),
                    (70, advance, served([(7, granted(allowed(0)), 70)], wake: 80), "#7 first"),
                    (80, advance, served([(8, granted(allowed(0)), 80)]), "then #8"),
                ]),
            story(
                machine, "fifo-and-late-wake-up",
                "waiters are served in arrival order, each at the instant its turn comes, however late the wake-up",
                clauses: ["WQ-3", "WQ-5", "WQ-7"], bucket(2, queueLimit: 3),
                [
                    (0, request(1, 2), served([(1, granted(allowed(0)), 0)]), "nobody waits: granted at once"),
                    (0, request(2, 1), served([], wake: 10), "the bucket is empty: it waits; a token at 10"),
                    (1, request(3, 1), served([], wake: 10), "a waiter of its priority is ahead: it waits behind #2"),
                    (
                        10, advance, served([(2, granted(allowed(0)), 10)], wake: 20),
                        "the head takes the token of 10; the next token, for #3, at 20"
                    ),
                    (
                        25, advance, served([(3, granted(allowed(0)), 20)]),
                        "woken 5 ns late: #3 is granted at 20, the instant its token came"
                    ),
                    (25, tryAcquire(1), answered(limited(5)), "half a token since 20: the bucket's own retry-after"),
                    (25, availability(1), .object([("outcome", limited(5))]), "the same answer, taking nothing"),
                    (30, tryAcquire(1), answered(granted(allowed(0))), "availability took nothing: the token of 30"),
                ]),
            story(
                machine, "priorities",
                "higher priorities first, nobody overtakes a waiter of its own priority or higher, critical never waits",
                clauses: ["WQ-2", "WQ-3", "WQ-4"], bucket(1),
                [
                    (0, request(1, 1), served([(1, granted(allowed(0)), 0)]), "the one token"),
                    (0, request(2, 1, "low"), served([], wake: 10), "low waits"),
                    (
                        0, request(3, 1, "high"), served([], wake: 10),
                        "no waiter of high or above: refused, so it waits"
                    ),
                    (0, request(4, 1), served([], wake: 10), "#3, of a higher priority, is ahead: it waits"),
                    (
                        0, tryAcquire(1, "low"), answered(refused("waitersAhead"), wake: 10),
                        "a waiter of low or above is ahead"
                    ),
                    (
                        0, tryAcquire(1, "critical"), answered(bypassed, wake: 10),
                        "critical is never queued: let through"
                    ),
                    (0, request(5, 1, "critical"), served([(5, bypassed, 0)], wake: 10), "the same for an acquire"),
                    (10, advance, served([(3, granted(allowed(0)), 10)], wake: 20), "high first"),
                    (
                        30, advance, served([(4, granted(allowed(0)), 20), (2, granted(allowed(0)), 30)]),
                        "normal at 20, then low at 30, each at its own instant"
                    ),
                    (40, request(6, 1, "critical"), served([(6, granted(allowed(0)), 40)]), "a token is there: taken"),
                ]),
            story(
                machine, "deadlines",
                "a deadline passed times a waiter out; a deadline exactly now may still be granted",
                clauses: ["WQ-4", "WQ-5", "WQ-11"], bucket(1),
                [
                    (0, request(1, 1), served([(1, granted(allowed(0)), 0)]), "the one token"),
                    (
                        0, request(2, 1, deadline: 0), served([(2, timedOut, 0)]),
                        "it would wait, but its deadline is now"
                    ),
                    (0, request(3, 1, deadline: 5), served([], wake: 5), "its deadline, 5, comes before the token, 10"),
                    (0, request(4, 1, deadline: 10), served([], wake: 5), "waits behind #3"),
                    (
                        10, advance, served([(3, timedOut, 5), (4, granted(allowed(0)), 10)]),
                        "#3 timed out at 5; #4's deadline is 10, the token's instant: granted at 10"
                    ),
                    (10, request(5, 1, deadline: 19), served([], wake: 19), "the next token at 20, after its deadline"),
                    (10, request(6, 1), served([], wake: 19), "no deadline: it waits behind #5"),
                    (
                        20, advance, served([(5, timedOut, 19), (6, granted(allowed(0)), 20)]),
                        "#5 is not refused early: it times out at 19; #6 takes the token of 20"
                    ),
                ]),
            story(
                machine, "cancel-forgets-deadline",
                "the next wake-up never names the deadline of a waiter already gone",
                clauses: ["WQ-6", "WQ-7"], bucket(1, initial: 0),
                [
                    (0, request(1, 1, deadline: 5), served([], wake: 5), "its deadline, 5, before the token, 10"),
                    (0, request(2, 1), served([], wake: 5), "no deadline, behind #1"),
                    (
                        1, cancel(1), served([(1, .object([("kind", .string("cancelled"))]), 1)], wake: 10),
                        "#1 gone: the next wake-up is #2's token at 10, not #1's deadline"
                    ),
                    (10, advance, served([(2, granted(allowed(0)), 10)]), "#2 at 10"),
                ]),
            story(
                machine, "timeouts-in-order",
                "waiters timed out at one instant end in deadline order, then arrival order",
                clauses: ["WQ-5", "WQ-14"], bucket(1, initial: 0),
                [
                    (0, request(1, 1, deadline: 5), served([], wake: 5), "the first token at 10"),
                    (0, request(2, 1, "high", deadline: 5), served([], wake: 5), "high: the head"),
                    (0, request(3, 1, "low", deadline: 3), served([], wake: 3), "the earliest deadline"),
                    (
                        7, advance, served([(3, timedOut, 3), (1, timedOut, 5), (2, timedOut, 5)]),
                        "#3 at 3; at 5, #1 then #2 by arrival, whatever their priority"
                    ),
                ]),
            story(
                machine, "queue-limit-and-cancel",
                "the queue limit counts permits; a cancelled waiter takes nothing and lets the next one be served",
                clauses: ["WQ-1", "WQ-4", "WQ-6"], bucket(2, initial: 0, queueLimit: 3),
                [
                    (0, request(1, 2), served([], wake: 20), "two tokens by 20"),
                    (0, request(2, 2), served([(2, refused("queueFull"), 0)], wake: 20), "2 waiting + 2 > 3"),
                    (0, request(3, 1), served([], wake: 20), "2 + 1 ≤ 3: it waits"),
                    (0, request(4, 3), served([(4, refused("neverAllowed"), 0)], wake: 20), "3 > capacity 2"),
                    (
                        0, request(5, -1),
                        served(
                            [
                                (
                                    5,
                                    refused(
                                        "invalid", ("field", .string("permits")),
                                        ("problem", .string("mustNotBeNegative"))), 0
                                )
                            ], wake: 20),
                        "negative permits"
                    ),
                    (0, request(6, 0), served([(6, granted(allowed(0)), 0)], wake: 20), "a query: granted at once"),
                    (
                        5, cancel(1), served([(1, .object([("kind", .string("cancelled"))]), 5)], wake: 10),
                        "#1 leaves; #3 is the head: half a token, the next at 10"
                    ),
                    (5, cancel(1), served([], wake: 10), "a ticket that has its outcome: nothing happens"),
                    (5, request(7, 2), served([], wake: 10), "1 + 2 ≤ 3: it waits"),
                    (10, advance, served([(3, granted(allowed(0)), 10)], wake: 30), "#3 at 10; #7 needs 2 tokens: 30"),
                ]),
            story(
                machine, "nobody-waits", "a queue limit of 0: nobody waits", clauses: ["WQ-1", "WQ-4"],
                bucket(1, queueLimit: 0),
                [
                    (0, request(1, 1), served([(1, granted(allowed(0)), 0)]), "the one token"),
                    (0, request(2, 1), served([(2, refused("queueFull"), 0)]), "it would wait: the queue is full"),
                ]),
            story(
                machine, "release-reset-close",
                "a release serves the waiters; a reset keeps them; close ends every waiter",
                clauses: ["WQ-8", "WQ-9"], queue(ConcurrencyLimiter.identifier, ["limit": 2], queueLimit: 4),
                [
                    (0, request(1, 2), served([(1, granted(allowed(0)), 0)]), "2 in flight"),
                    (0, request(2, 1), served([]), "it waits; only a release can help: no wake-up"),
                    (0, tryAcquire(1), answered(refused("waitersAhead")), "#2 is ahead"),
                    (
                        0, tryAcquire(1, "high"),
                        answered(refused("untilRelease", ("shortfall", .integer(1)))),
                        "nobody of high waits: the limit's own refusal"
                    ),
                    (3, release(1), stepResult(allowed(1), [(2, granted(allowed(0)), 3)]), "freed, then #2 takes it"),
                    (3, release(5), stepResult(invalid("permits", .exceedsMaximum(2))), "more than the 2 held"),
                    (4, request(3, 2), served([]), "2 in flight: it waits"),
                    (4, reset, stepResult(allowed(2), [(3, granted(allowed(0)), 4)]), "reset frees all: #3 served"),
                    (5, request(4, 1), served([]), "it waits"),
                    (6, close, served([(4, .object([("kind", .string("closed"))]), 6)]), "every waiter ends closed"),
                ]),
            story(
                machine, "reconfigure",
                "waiters stay through a reconfigure; one the new configuration can never admit is refused at the head",
                clauses: ["WQ-8", "WQ-5"], bucket(1, initial: 0),
                [
                    (0, request(1, 2, "high"), served([(1, refused("neverAllowed"), 0)]), "2 > capacity 1"),
                    (0, request(2, 1), served([], wake: 10), "the first token at 10"),
                    (
                        2, reconfigure(fields(tokenBucket(4, initial: 4))), stepResult(allowed(0), wake: 10),
                        "capacity 4: the 0.2 token held is kept; #2 still at 10"
                    ),
                    (2, request(3, 3), served([], wake: 10), "behind #2"),
                    (10, advance, served([(2, granted(allowed(0)), 10)], wake: 40), "#2; #3 needs 3 tokens: 40"),
                    (
                        12, reconfigure(fields(tokenBucket(2, initial: 2))),
                        stepResult(allowed(0), [(3, refused("neverAllowed"), 12)]),
                        "capacity 2: #3's 3 permits can never be admitted"
                    ),
                ]),
            story(
                machine, "scheduled-starts",
                "a leaky bucket queue grants a delayed start; the queue serves whoever it refuses",
                clauses: ["WQ-2", "WQ-12"],
                queue(LeakyBucketQueue.identifier, ["queueCapacity": 1, "intervalNanoseconds": 10], queueLimit: 2),
                [
                    (0, request(1, 1), served([(1, granted(allowed(1)), 0)]), "starts now"),
                    (0, request(2, 1), served([(2, granted(delayed(10, 0)), 0)]), "a start at 10"),
                    (0, request(3, 1), served([], wake: 10), "the schedule is full until 10"),
                    (10, advance, served([(3, granted(delayed(10, 0)), 10)]), "granted at 10, to start at 20"),
                ]),
            refusal(
                machine, "refuse-negative-queue-limit", "a negative queue limit", clauses: ["WQ-1"],
                bucket(1, queueLimit: -1), "queueLimit", .mustNotBeNegative),
            refusal(
                machine, "refuse-strategy-first", "the strategy's configuration is checked before the queue limit",
                clauses: ["WQ-1", "CORE-3"], bucket(0, initial: 0, queueLimit: -1), "capacity", .mustBePositive),
        ]
    }
}
