import RateLimitCore

// Spec/Registry.md: which rule governs a key (REG-2), the registry's instant (REG-3), key states
// (REG-4), requests and their one outcome (REG-5), quota status and its events at the exact
// instant time improves it (REG-6), reset, reconfigure and restoring a rule (REG-7), bounded memory (REG-8),
// statistics (REG-9), events (REG-10), wake-ups (REG-11), removing keys (REG-12). No story has
// two keys' time events due at the same instant: REG-11 leaves their order open.

extension ScenarioCatalogue {
    static func registryCases() -> [ScenarioCase] {
        let machine = ScenarioMachine.registry
        // Configurations.
        func exact(_ key: String) -> JSONValue { .object([("match", .string("exact")), ("key", .string(key))]) }
        func prefix(_ key: String) -> JSONValue { .object([("match", .string("prefix")), ("key", .string(key))]) }
        let anyKey = JSONValue.object([("match", .string("any"))])
        func bucket(_ capacity: Int64, period: Int64 = 10) -> JSONValue {
            limit(TokenBucket.identifier, tokenBucket(capacity, period: period))
        }
        let reject = JSONValue.object([("policy", .string("reject"))])
        func queue(_ limit: Int64, timeout: Int64? = nil) -> JSONValue {
            .object([
                ("policy", .string("queue")), ("queueLimit", .integer(limit)),
                ("timeoutNanoseconds", timeout.map(JSONValue.integer) ?? .null),
            ])
        }
        func rule(_ keys: JSONValue, _ limit: JSONValue, _ overflow: JSONValue? = nil, warning: Int64 = 0) -> JSONValue
        {
            .object([
                ("keys", keys), ("limit", limit), ("overflow", overflow ?? reject),
                ("warningThreshold", .integer(warning)),
            ])
        }
        func registry(_ rules: [JSONValue], maximumKeys: Int64 = 10_000) -> JSONValue {
            .object([("rules", .array(rules)), ("maximumKeys", .integer(maximumKeys))])
        }

        // Events.
        func event(_ kind: String, _ members: (String, JSONValue)...) -> JSONValue {
            .object([("kind", .string(kind))] + members)
        }
        func acquire(_ key: String, ticket: Int64, _ permits: Int64 = 1, timeout: Int64? = nil) -> JSONValue {
            .object(
                [
                    ("kind", .string("acquire")), ("key", .string(key)), ("ticket", .integer(ticket)),
                    ("permits", .integer(permits)), ("priority", .string("normal")),
                ] + (timeout.map { [("timeoutNanoseconds", JSONValue.integer($0))] } ?? []))
        }
        func tryAcquire(_ key: String, _ permits: Int64 = 1, _ priority: String = "normal") -> JSONValue {
            event("tryAcquire", ("key", .string(key)), ("permits", .integer(permits)), ("priority", .string(priority)))
        }
        func availability(_ key: String, _ permits: Int64 = 1) -> JSONValue {
            event(
                "availability", ("key", .string(key)), ("permits", .integer(permits)), ("priority", .string("normal")))
        }
        func onKey(_ kind: String, _ key: String) -> JSONValue { event(kind, ("key", .string(key))) }
        func throttle(_ key: String, until: Int64) -> JSONValue {
            event("throttle", ("key", .string(key)), ("until", .integer(until)))
        }
        let advance = event("advance")
        let inspect = event("inspect")

        // Answers: the outcomes decided, in order, the events, then the next wake-up.
        func served(
            _ completions: [(Int64, JSONValue, Int64)] = [], _ events: [JSONValue] = [], wake: Int64? = nil,
            with first: [(String, JSONValue)] = []
        ) -> JSONValue {
            .object(
                first + [
                    ("completions", self.completions(completions)),
                    ("events", .array(events)), ("nextWakeUp", wake.map(JSONValue.integer) ?? .null),
                ])
        }
        func answered(_ outcome: JSONValue, _ events: [JSONValue] = [], wake: Int64? = nil) -> JSONValue {
            served([], events, wake: wake, with: [("outcome", outcome)])
        }
        let bypassed = outcome("bypassed")
        // Events (REG-10).
        func rejectedEvent(_ key: String, _ permits: Int64, _ outcome: JSONValue, at: Int64) -> JSONValue {
            event(
                "rejected", ("key", .string(key)), ("permits", .integer(permits)), ("outcome", outcome),
                ("at", .integer(at)))
        }
        func status(_ key: String, _ from: String, _ to: String, remaining: Int64, at: Int64) -> JSONValue {
            event(
                "statusChanged", ("key", .string(key)), ("from", .string(from)), ("to", .string(to)),
                ("remaining", .integer(remaining)), ("at", .integer(at)))
        }
        func state(_ name: String, until: Int64? = nil) -> JSONValue {
            .object([("state", .string(name))] + (until.map { [("until", JSONValue.integer($0))] } ?? []))
        }
        func stateEvent(_ key: String, _ from: JSONValue, _ to: JSONValue, at: Int64) -> JSONValue {
            event("stateChanged", ("key", .string(key)), ("from", from), ("to", to), ("at", .integer(at)))
        }
        func statistics(admitted: Int64, rejected: Int64, queued: Int64, waiting: Int64 = 0) -> JSONValue {
            .object([
                ("admitted", .integer(admitted)), ("rejected", .integer(rejected)), ("queued", .integer(queued)),
                ("waiting", .integer(waiting)),
            ])
        }
        func inspected(_ keys: [String], _ totals: JSONValue, wake: Int64? = nil) -> JSONValue {
            .object([
                ("keys", .array(keys.map(JSONValue.string))), ("totals", totals),
                ("nextWakeUp", wake.map(JSONValue.integer) ?? .null),
            ])
        }
        func quota(_ key: String, _ state: JSONValue, _ status: String, remaining: Int64, _ statistics: JSONValue)
            -> JSONValue
        {
            .object([
                (
                    "quota",
                    .object([
                        ("key", .string(key)), ("state", state), ("status", .string(status)),
                        ("remaining", .integer(remaining)), ("statistics", statistics),
                    ])
                )
            ])
        }
        let accepting = state("accepting")
        // Refusals (REG-1).
        func registryRefusal(
            _ name: String, _ summary: String, _ configuration: JSONValue, _ expect: [(String, JSONValue)]
        ) -> ScenarioCase {
            ScenarioCase(
                id: "registry/\(name)", summary: summary, clauses: ["REG-1"], configuration: configuration,
                body: .refusal(try! ScenarioRefusal(json: .object(expect))))
        }
        func invalidRule(_ rule: JSONValue, _ field: String, _ problem: String, maximum: Int64? = nil) -> [(
            String, JSONValue
        )] {
            [
                ("error", .string("invalidRule")), ("rule", rule), ("field", .string(field)),
                ("problem", .string(problem)),
            ]
                + (maximum.map { [("maximum", JSONValue.integer($0))] } ?? [])
        }

        return [
            story(
                machine, "rule-by-key",
                "the exact rule, else the longest matching prefix; a key no rule matches is never created",
                clauses: ["REG-2", "REG-3", "REG-9"],
                registry([
                    rule(exact("a"), bucket(1)), rule(prefix("u:"), bucket(2)),
                    rule(prefix("u:x"), bucket(3, period: 15)),
                ]),
                [
                    (
                        0, tryAcquire("a"),
                        answered(granted(allowed(0)), [status("a", "ok", "limited", remaining: 0, at: 0)], wake: 10),
                        "the exact rule's bucket of 1: its last token, so the status falls to limited; a token at 10"
                    ),
                    (
                        0, tryAcquire("u:xy", 3),
                        answered(granted(allowed(0)), [status("u:xy", "ok", "limited", remaining: 0, at: 0)], wake: 10),
                        "u:x is the longest prefix: a bucket of 3, emptied (its token at 15)"
                    ),
                    (
                        0, tryAcquire("u:y", 3),
                        answered(
                            refused("neverAllowed"), [rejectedEvent("u:y", 3, refused("neverAllowed"), at: 0)], wake: 10
                        ),
                        "only u: matches: 3 permits never fit a bucket of 2; the key is created all the same"
                    ),
                    (
                        0, tryAcquire("b"),
                        answered(
                            refused("unknownKey"), [rejectedEvent("b", 1, refused("unknownKey"), at: 0)], wake: 10),
                        "no rule, no default: refused, and not created"
                    ),
                    (
                        0, availability("u:z", 2), .object([("outcome", granted(allowed(0)))]),
                        "a key not held reads as a new one of its rule (u:, 2 tokens), and is not created"
                    ),
                    (
                        0, inspect,
                        inspected(["a", "u:xy", "u:y"], statistics(admitted: 2, rejected: 2, queued: 0), wake: 10),
                        "three keys held, sorted; the totals count the refusal of b too"
                    ),
                    (
                        10, advance, served([], [status("a", "limited", "ok", remaining: 1, at: 10)], wake: 15),
                        "a's token at 10: an acquire of 1 would be admitted, so a is ok again"
                    ),
                    (
                        20, onKey("quota", "u:xy"),
                        quota("u:xy", accepting, "ok", remaining: 1, statistics(admitted: 1, rejected: 0, queued: 0)),
                        "read at 20: one token since 15"
                    ),
                    (
                        20, advance, served([], [status("u:xy", "limited", "ok", remaining: 1, at: 15)]),
                        "reported late, stamped 15, the instant it happened"
                    ),
                ]),
            story(
                machine, "instants-go-back",
                "an operation earlier than one already seen applies at the latest instant; its waits count from the caller's",
                clauses: ["REG-3", "REG-6"], registry([rule(anyKey, bucket(1))]),
                [
                    (
                        20, tryAcquire("k"),
                        answered(granted(allowed(0)), [status("k", "ok", "limited", remaining: 0, at: 20)], wake: 30),
                        "created at 20 with its token; the next at 30"
                    ),
                    (
                        5, tryAcquire("k"),
                        answered(limited(25), [rejectedEvent("k", 1, limited(25), at: 20)], wake: 30),
                        "applied at 20, refused for 10 ns; from the caller's 5 that is 25"
                    ),
                    (5, availability("k"), .object([("outcome", limited(25))]), "the same answer, taking nothing"),
                    (
                        30, tryAcquire("k"),
                        answered(
                            granted(allowed(0)),
                            [
                                status("k", "limited", "ok", remaining: 1, at: 30),
                                status("k", "ok", "limited", remaining: 0, at: 30),
                            ], wake: 40),
                        "what fell due at 30 is served first (ok), then the request takes the token (limited)"
                    ),
                ]),
            story(
                machine, "throttle",
                "a throttle refuses all but critical requests until it ends, and every change of state is one event",
                clauses: ["REG-4", "REG-6", "REG-10", "REG-11"], registry([rule(anyKey, bucket(2))]),
                [
                    (
                        0, throttle("k", until: 50),
                        served(
                            [],
                            [
                                stateEvent("k", accepting, state("throttled", until: 50), at: 0),
                                status("k", "ok", "limited", remaining: 0, at: 0),
                            ], wake: 50),
                        "created and throttled: nothing remains while throttled, so limited"
                    ),
                    (
                        10, tryAcquire("k"),
                        answered(limited(40), [rejectedEvent("k", 1, limited(40), at: 10)], wake: 50),
                        "refused until the throttle ends: max(50 − 10, 0) = 40"
                    ),
                    (
                        10, tryAcquire("k", 1, "critical"), answered(bypassed, wake: 50),
                        "critical passes, bypassed: the throttled limit admits nothing, and records nothing"
                    ),
                    (
                        20, throttle("k", until: 30),
                        served(
                            [], [stateEvent("k", state("throttled", until: 50), state("throttled", until: 30), at: 20)],
                            wake: 30),
                        "a later throttle replaces the instant"
                    ),
                    (
                        35, advance,
                        served(
                            [],
                            [
                                stateEvent("k", state("throttled", until: 30), accepting, at: 30),
                                status("k", "limited", "ok", remaining: 2, at: 30),
                            ]),
                        "the throttle ends at 30, reported at 30, with the bucket full; no wake-up left at 50"
                    ),
                    (
                        40, throttle("k", until: 40), served(),
                        "a throttle that ends by now leaves an accepting key as it is"
                    ),
                    (
                        40, onKey("disable", "k"), served([], [stateEvent("k", accepting, state("disabled"), at: 40)]),
                        "disabled: the limit is off (and the status stays ok)"
                    ),
                    (40, throttle("k", until: 100), served(), "a disabled key stays disabled"),
                    (40, tryAcquire("k", 5), answered(bypassed), "every request passes, whatever its size"),
                    (
                        41, onKey("resume", "k"), served([], [stateEvent("k", state("disabled"), accepting, at: 41)]),
                        "resume: the limit kept its state, 2 tokens, so ok"
                    ),
                ]),
            story(
                machine, "queue",
                "under a queue policy a refused request waits, up to the queue limit and the rule's timeout, and gets one outcome",
                clauses: ["REG-5", "REG-9", "REG-10", "REG-11"],
                registry([rule(anyKey, bucket(1), queue(2, timeout: 25))]),
                [
                    (
                        0, acquire("k", ticket: 1),
                        served(
                            [(1, granted(allowed(0)), 0)], [status("k", "ok", "limited", remaining: 0, at: 0)], wake: 10
                        ),
                        "granted at once: its outcome is a completion"
                    ),
                    (0, acquire("k", ticket: 2), served(wake: 10), "refused, so it waits (deadline 25, the rule's)"),
                    (
                        0, acquire("k", ticket: 3, timeout: 5), served(wake: 5),
                        "its own timeout, 5: its deadline comes first"
                    ),
                    (
                        0, acquire("k", ticket: 4),
                        served(
                            [(4, refused("queueFull"), 0)], [rejectedEvent("k", 1, refused("queueFull"), at: 0)],
                            wake: 5),
                        "2 permits wait, the queue limit: full"
                    ),
                    (
                        0, tryAcquire("k"),
                        answered(
                            refused("waitersAhead"), [rejectedEvent("k", 1, refused("waitersAhead"), at: 0)], wake: 5),
                        "a request that cannot wait, behind waiters"
                    ),
                    (
                        7, advance,
                        served(
                            [(3, outcome("timedOut"), 5)], [rejectedEvent("k", 1, outcome("timedOut"), at: 5)], wake: 10
                        ),
                        "#3 timed out at 5: reported as refused"
                    ),
                    (8, acquire("k", ticket: 5), served(wake: 10), "waits behind #2"),
                    (
                        9, event("cancel", ("ticket", .integer(5))), served([(5, outcome("cancelled"), 9)], wake: 10),
                        "cancelled: no event"
                    ),
                    (
                        12, advance, served([(2, granted(allowed(0)), 10)], wake: 20),
                        "#2 takes the token of 10: still limited, and ok at 20"
                    ),
                    (
                        12, onKey("quota", "k"),
                        quota("k", accepting, "limited", remaining: 0, statistics(admitted: 2, rejected: 3, queued: 3)),
                        "admitted #1, #2; refused #4, the tryAcquire, #3 (timed out); #2, #3 and #5 waited"
                    ),
                    (
                        25, advance, served([], [status("k", "limited", "ok", remaining: 1, at: 20)]),
                        "the status recovers at 20, the instant an acquire of 1 would be admitted"
                    ),
                ]),
            story(
                machine, "quota-status",
                "the status follows the remaining quota against the threshold, and time improves it at the exact instant",
                clauses: ["REG-6", "REG-10", "REG-11"], registry([rule(anyKey, bucket(4), warning: 2)]),
                [
                    (0, tryAcquire("k"), answered(granted(allowed(3))), "3 left, above the threshold 2: ok, no event"),
                    (
                        0, tryAcquire("k"),
                        answered(granted(allowed(2)), [status("k", "ok", "warning", remaining: 2, at: 0)], wake: 10),
                        "2 left: warning, until 3 remain (at 10)"
                    ),
                    (
                        0, tryAcquire("k", 2),
                        answered(
                            granted(allowed(0)), [status("k", "warning", "limited", remaining: 0, at: 0)], wake: 10),
                        "none left: limited, until 1 remains (at 10)"
                    ),
                    (
                        15, advance, served([], [status("k", "limited", "warning", remaining: 1, at: 10)], wake: 30),
                        "one token at 10: warning; 3 tokens at 30"
                    ),
                    (
                        30, tryAcquire("k"),
                        answered(
                            granted(allowed(2)),
                            [
                                status("k", "warning", "ok", remaining: 3, at: 30),
                                status("k", "ok", "warning", remaining: 2, at: 30),
                            ], wake: 40),
                        "ok at 30 first, then the request takes a token"
                    ),
                    (
                        30, onKey("quota", "k"),
                        quota("k", accepting, "warning", remaining: 2, statistics(admitted: 4, rejected: 0, queued: 0)),
                        "the quota as an app shows it"
                    ),
                ]),
            story(
                machine, "reconfigure",
                "a key's own configuration, a rule's new configuration, and what is refused",
                clauses: ["REG-7", "COMP-1"], registry([rule(prefix("p:"), bucket(2), warning: 1)]),
                [
                    (
                        0, tryAcquire("p:a"),
                        answered(granted(allowed(1)), [status("p:a", "ok", "warning", remaining: 1, at: 0)], wake: 10),
                        "1 left, the threshold: warning"
                    ),
                    (
                        0, event("reconfigure", ("key", .string("p:a")), ("limit", bucket(1))),
                        served(
                            [], wake: 10, with: [("result", invalid("warningThreshold", .exceedsMaximum(0)))]),
                        "a maximum of 1 leaves no room above the threshold 1: refused"
                    ),
                    (
                        0, event("reconfigure", ("key", .string("p:a")), ("limit", bucket(4))),
                        served(wake: 10, with: [("result", allowed(1))]),
                        "its own bucket of 4 keeps its 1 token: still warning"
                    ),
                    (
                        0,
                        event(
                            "reconfigureRule", ("rule", prefix("p:")),
                            ("limit", limit(GCRA.identifier, ["burst": 2, "emissionIntervalNanoseconds": 10]))),
                        .object([
                            (
                                "refused",
                                .object(invalidRule(prefix("p:"), "configuration", "notSupported"))
                            )
                        ]),
                        "another strategy: refused, nothing changes"
                    ),
                    (
                        0, event("reconfigureRule", ("rule", exact("q")), ("limit", bucket(2))),
                        .object([("refused", .object([("error", .string("unknownRule")), ("rule", exact("q"))]))]),
                        "no such rule"
                    ),
                    (
                        0, event("reconfigureRule", ("rule", prefix("p:")), ("limit", bucket(3))), served(wake: 10),
                        "the rule's keys without a configuration of their own: none yet"
                    ),
                    (
                        0, tryAcquire("p:b", 3),
                        answered(granted(allowed(0)), [status("p:b", "ok", "limited", remaining: 0, at: 0)], wake: 10),
                        "a new key starts with the rule's new bucket of 3"
                    ),
                ]),
            story(
                machine, "restore-rule",
                "a key's own configuration dropped: its tokens kept under the rule's, which it follows again; a key with one is never forgotten, one following its rule is once idle",
                clauses: ["REG-7", "REG-8"], registry([rule(prefix("p:"), bucket(3))], maximumKeys: 1),
                [
                    (
                        0, onKey("restoreRule", "p:a"), served(with: [("result", .null)]),
                        "not held: nothing to restore"
                    ),
                    (0, tryAcquire("p:a"), answered(granted(allowed(2))), "3 tokens, 2 left"),
                    (
                        0, event("reconfigure", ("key", .string("p:a")), ("limit", bucket(1))),
                        served(with: [("result", allowed(1))]), "its own capacity of 1 keeps 1 of the 2 tokens: full"
                    ),
                    (
                        0, tryAcquire("p:b"),
                        answered(refused("tooManyKeys"), [rejectedEvent("p:b", 1, refused("tooManyKeys"), at: 0)]),
                        "p:a is full, but has a configuration of its own: never forgotten, p:b is refused"
                    ),
                    (
                        0, onKey("restoreRule", "p:a"), served(with: [("result", allowed(1))]),
                        "the rule's capacity of 3 again, keeping the 1 token"
                    ),
                    (
                        0, onKey("restoreRule", "p:a"), served(with: [("result", .null)]),
                        "it follows its rule: nothing changes"
                    ),
                    (
                        19, tryAcquire("p:b"),
                        answered(refused("tooManyKeys"), [rejectedEvent("p:b", 1, refused("tooManyKeys"), at: 19)]),
                        "p:a has 2 tokens (one came at 10): not idle yet"
                    ),
                    (20, tryAcquire("p:b"), answered(granted(allowed(2))), "p:a is full at 20: forgotten for p:b"),
                    (
                        20, inspect, inspected(["p:b"], statistics(admitted: 2, rejected: 2, queued: 0)),
                        "only p:b is held"
                    ),
                ]),
            story(
                machine, "bounded-memory",
                "a full registry forgets idle keys for a new one, and refuses it while every key is busy",
                clauses: ["REG-8", "REG-9"], registry([rule(anyKey, bucket(1))], maximumKeys: 1),
                [
                    (
                        0, tryAcquire("a"),
                        answered(granted(allowed(0)), [status("a", "ok", "limited", remaining: 0, at: 0)], wake: 10),
                        "the one key"
                    ),
                    (
                        0, tryAcquire("b"),
                        answered(
                            refused("tooManyKeys"), [rejectedEvent("b", 1, refused("tooManyKeys"), at: 0)], wake: 10),
                        "a is not idle (its bucket is not full): b is refused"
                    ),
                    (0, availability("b"), .object([("outcome", refused("tooManyKeys"))]), "the same, taking nothing"),
                    (
                        5, onKey("reset", "a"),
                        served([], [status("a", "limited", "ok", remaining: 1, at: 5)], with: [("result", allowed(1))]),
                        "a reset fills a's bucket: a is idle"
                    ),
                    (
                        5, tryAcquire("b"),
                        answered(granted(allowed(0)), [status("b", "ok", "limited", remaining: 0, at: 5)], wake: 15),
                        "a is forgotten for b"
                    ),
                    (
                        5, inspect, inspected(["b"], statistics(admitted: 2, rejected: 1, queued: 0), wake: 15),
                        "only b is held"
                    ),
                    (
                        5, onKey("quota", "a"),
                        quota("a", accepting, "ok", remaining: 1, statistics(admitted: 0, rejected: 0, queued: 0)),
                        "a forgotten key reads as a new one"
                    ),
                ]),
            story(
                machine, "remove",
                "removing a key closes its waiters and forgets it; the next request creates it anew",
                clauses: ["REG-12", "REG-9"], registry([rule(anyKey, bucket(1), queue(5))]),
                [
                    (
                        0, acquire("k", ticket: 1),
                        served(
                            [(1, granted(allowed(0)), 0)], [status("k", "ok", "limited", remaining: 0, at: 0)], wake: 10
                        ),
                        "the token"
                    ),
                    (0, acquire("k", ticket: 2), served(wake: 10), "waits, with no timeout"),
                    (
                        3, onKey("remove", "k"), served([(2, outcome("closed"), 3)], with: [("removed", .bool(true))]),
                        "its waiter is closed (no event), the key forgotten"
                    ),
                    (3, onKey("remove", "k"), served(with: [("removed", .bool(false))]), "a key not held: nothing"),
                    (
                        3, tryAcquire("k"),
                        answered(granted(allowed(0)), [status("k", "ok", "limited", remaining: 0, at: 3)], wake: 13),
                        "created anew, with a full bucket: a fresh quota"
                    ),
                    (
                        3, inspect, inspected(["k"], statistics(admitted: 2, rejected: 0, queued: 1), wake: 13),
                        "the totals keep the removed key's requests"
                    ),
                ]),
            story(
                machine, "disable-lets-waiters-through",
                "disabling a key lets its waiters through as bypassed; resuming brings the limit's state back",
                clauses: ["REG-4", "REG-6"], registry([rule(anyKey, bucket(1), queue(5))]),
                [
                    (
                        0, acquire("k", ticket: 1),
                        served(
                            [(1, granted(allowed(0)), 0)], [status("k", "ok", "limited", remaining: 0, at: 0)], wake: 10
                        ),
                        "the token"
                    ),
                    (0, acquire("k", ticket: 2), served(wake: 10), "waits"),
                    (
                        2, onKey("disable", "k"),
                        served(
                            [(2, bypassed, 2)],
                            [
                                stateEvent("k", accepting, state("disabled"), at: 2),
                                status("k", "limited", "ok", remaining: 1, at: 2),
                            ]),
                        "the waiter passes; a disabled key is ok, with the limit's maximum"
                    ),
                    (
                        4, onKey("resume", "k"),
                        served(
                            [],
                            [
                                stateEvent("k", state("disabled"), accepting, at: 4),
                                status("k", "ok", "limited", remaining: 0, at: 4),
                            ], wake: 10),
                        "the bucket is as it was: empty until 10"
                    ),
                    (12, advance, served([], [status("k", "limited", "ok", remaining: 1, at: 10)]), "its token at 10"),
                ]),
            registryRefusal(
                "refuse-empty-key", "an exact key that is empty", registry([rule(exact(""), bucket(1))]),
                [("error", .string("emptyKey")), ("rule", exact(""))]),
            registryRefusal(
                "refuse-duplicate-rule", "two rules with the same pattern",
                registry([rule(prefix("a"), bucket(1)), rule(prefix("a"), bucket(2))]),
                [("error", .string("duplicateRule")), ("rule", prefix("a"))]),
            registryRefusal(
                "refuse-limit", "a limit its own strategy refuses: the rule is invalid, with the strategy's refusal",
                registry([rule(anyKey, bucket(0))]), invalidRule(anyKey, "capacity", "mustBePositive")),
            registryRefusal(
                "refuse-negative-queue-limit", "a queue limit below 0",
                registry([rule(anyKey, bucket(1), queue(-1))]), invalidRule(anyKey, "queueLimit", "mustNotBeNegative")),
            registryRefusal(
                "refuse-negative-timeout", "a timeout below 0",
                registry([rule(anyKey, bucket(1), queue(1, timeout: -1))]),
                invalidRule(anyKey, "timeout", "mustNotBeNegative")),
            registryRefusal(
                "refuse-threshold-at-maximum", "a warning threshold that leaves no room for ok",
                registry([rule(anyKey, bucket(2), warning: 2)]),
                invalidRule(anyKey, "warningThreshold", "exceedsMaximum", maximum: 1)),
            registryRefusal(
                "refuse-no-key", "maximumKeys below 1", registry([rule(anyKey, bucket(1))], maximumKeys: 0),
                [("error", .string("invalidMaximumKeys"))]),
            registryRefusal(
                "refusals-in-order",
                "rule by rule (pattern, limit, overflow, threshold), then maximumKeys, then a pattern given twice",
                registry(
                    [
                        rule(prefix("a"), bucket(1)), rule(exact(""), bucket(0)),
                        rule(prefix("a"), bucket(1, period: -1)),
                    ],
                    maximumKeys: 0),
                [("error", .string("emptyKey")), ("rule", exact(""))]),
            registryRefusal(
                "maximum-keys-before-duplicates", "maximumKeys is checked before a pattern given twice",
                registry([rule(prefix("a"), bucket(1)), rule(prefix("a"), bucket(1))], maximumKeys: 0),
                [("error", .string("invalidMaximumKeys"))]),
        ]
    }
}
