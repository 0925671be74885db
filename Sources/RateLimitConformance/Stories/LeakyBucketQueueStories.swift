import RateLimitCore

// Spec/LeakyBucketQueue.md: one permit starts every T ns, Q permits may wait; B = Q + 1 and
// τ = B·T. An acquire of n (cost c = n·T) is admitted iff max(S − e, 0) + c ≤ τ, starting at
// s = max(S, e) (LBQ-4); remaining is ⌊(τ − max(S − e, 0)) / T⌋ (LBQ-5); a refusal is admitted
// at S + c − τ (LBQ-6).

extension VectorCatalogue {
    static func leakyBucketQueue() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func queue(_ capacity: Int64, every interval: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .leakyBucketQueue(try LeakyBucketQueue(queueCapacity: capacity, intervalNanoseconds: interval))
        }
        let twoWaiting = try queue(2, every: 10)
        let noQueue = try queue(0, every: 10)
        let stories = [
            StoryDraft(
                "spacing", "the first request goes at once, later ones exactly one interval apart",
                clauses: ["LBQ-4", "LBQ-5"], twoWaiting,
                [
                    (0, .acquire(1), allowed(2), "an idle schedule: starts now; next start 10"),
                    (0, .acquire(1), delayed(10, 1), "starts at 10"),
                    (0, .acquire(1), delayed(20, 0), "starts at 20: 2 waiting"),
                    (0, .acquire(1), rejected(10), "30 − 0 + 10 > 30: room at 30 + 10 − 30 = 10"),
                    (10, .acquire(1), delayed(20, 0), "starts at 30"),
                    (40, .acquire(1), allowed(2), "the schedule drained at 40"),
                ]),
            StoryDraft(
                "weighted-capacity",
                "the queue capacity counts the permits whose slot has not begun, a started request's included (LBQ-1, LBQ-11)",
                clauses: ["LBQ-1", "LBQ-4", "LBQ-11"], try queue(4, every: 5),
                [
                    (0, .acquire(3), allowed(2), "τ = 5·5 = 25; starts now and holds the schedule until 15"),
                    (
                        0, .acquire(3), rejected(5),
                        "15 + 15 > 25: 2 permits of the first have not begun; room at 15 + 15 − 25"
                    ),
                    (5, .acquire(3), delayed(10, 0), "10 + 15 = 25: admitted, starting at 15"),
                ]),
            StoryDraft(
                "weighted", "a weighted request occupies one interval per permit", clauses: ["LBQ-4"], twoWaiting,
                [
                    (0, .acquire(2), allowed(1), "starts now, holds the schedule until 20"),
                    (0, .acquire(1), delayed(20, 0), "starts 2 intervals later"),
                    (0, .acquire(1), rejected(10), "room at 30 + 10 − 30 = 10"),
                ]),
            StoryDraft(
                "retry-edge", "the retry-after is when room appears in the queue: one before, at, one after",
                clauses: ["LBQ-6"], twoWaiting,
                [
                    (0, .acquire(3), allowed(0), "the whole τ = 30 at once"),
                    (9, .acquire(1), rejected(1), "21 + 10 > 30: one before"),
                    (10, .acquire(0), allowed(1), "at: 20 + 10 ≤ 30"),
                    (11, .acquire(1), delayed(19, 0), "one after: starts at 30"),
                ]),
            StoryDraft(
                "backward-time", "a request admitted at the recorded instant waits from an earlier now",
                clauses: ["LBQ-3", "CORE-10"], twoWaiting,
                [
                    (100, .reset, allowed(3), "the schedule restarts at 100"),
                    (95, .acquire(1), delayed(5, 2), "evaluated at 100: starts at 100, 5 ns after 95"),
                    (95, .acquire(1), delayed(15, 1), "starts at 110"),
                    (90, .acquire(1), delayed(30, 0), "starts at 120"),
                    (120, .acquire(1), delayed(10, 1), "starts at 130"),
                ]),
            StoryDraft(
                "never", "more than queueCapacity + 1, or a start past the end of the timeline, is never allowed",
                clauses: ["LBQ-7", "CORE-7"], twoWaiting, createdAt: end(15),
                [
                    (end(15), .acquire(4), never, "4 > queueCapacity + 1 = 3"),
                    (end(15), .acquire(1), allowed(2), "starts now; next start Int64.max − 5"),
                    (end(15), .acquire(1), delayed(10, 0), "starts at Int64.max − 5; the next start is past the end"),
                    (end(15), .acquire(1), never, "its start would lie past Int64.max"),
                    (end(), .acquire(1), never, "still past it"),
                    (end(), .acquire(0), allowed(0), "remaining 0 while the next start is past the end"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the room; release and negative permits are invalid",
                clauses: ["LBQ-8"], twoWaiting,
                [
                    (0, .acquire(1), allowed(2), "starts now"),
                    (0, .acquire(0), allowed(2), "a query takes nothing"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(2), delayed(10, 0), "the invalid events changed nothing: starts at 10"),
                ]),
            StoryDraft(
                "reset-discards-schedule", "reset discards the schedule", clauses: ["LBQ-9"], twoWaiting,
                [
                    (0, .acquire(3), allowed(0), "the schedule is busy until 30"),
                    (1, .reset, allowed(3), "discarded: idle at 1"),
                    (1, .acquire(1), allowed(2), "starts at once"),
                    (1, .acquire(1), delayed(10, 1), "the next one interval later"),
                ]),
            StoryDraft(
                "reconfigure-keeps-schedule", "reconfigure keeps the schedule: waiting requests keep their turn",
                clauses: ["LBQ-10"], twoWaiting,
                [
                    (0, .acquire(1), allowed(2), "starts now"),
                    (0, .acquire(1), delayed(10, 1), "starts at 10"),
                    (0, .acquire(1), delayed(20, 0), "starts at 20: the schedule is busy until 30"),
                    (0, .reconfigure(try queue(0, every: 5)), allowed(0), "30 ns pending ≥ τ' = 5"),
                    (0, .acquire(1), rejected(30), "room at 30 + 5 − 5 = 30"),
                    (30, .acquire(1), allowed(0), "starts at 30 under the new interval"),
                    (31, .acquire(1), rejected(4), "room at 35 + 5 − 5 = 35"),
                ]),
            StoryDraft(
                "at-most-queue-waiting", "at most queueCapacity permits wait at any instant", clauses: ["LBQ-11"],
                try queue(1, every: 10),
                [
                    (0, .acquire(1), allowed(1), "starts now"),
                    (0, .acquire(1), delayed(10, 0), "one waiting"),
                    (0, .acquire(1), rejected(10), "a second may not wait"),
                    (5, .acquire(1), rejected(5), "still one waiting"),
                    (10, .acquire(1), delayed(10, 0), "the first waiter started: room for one"),
                    (20, .acquire(1), delayed(10, 0), "starts at 30"),
                ]),
            StoryDraft(
                "same-as-gcra", "the GCRA's boundary-conforms trace admits the same requests (scheduled here)",
                clauses: ["LBQ-12"], twoWaiting,
                [
                    (0, .acquire(3), allowed(0), "the whole τ, as gcra/boundary-conforms step 1"),
                    (9, .acquire(1), rejected(1), "one before room appears, as its step 2"),
                    (10, .acquire(1), delayed(20, 0), "admitted as by the GCRA, here scheduled at 30"),
                    (19, .acquire(0), allowed(0), "⌊(30 − 21)/10⌋ = 0"),
                    (20, .acquire(0), allowed(1), "⌊(30 − 20)/10⌋ = 1"),
                    (21, .acquire(0), allowed(1), "⌊(30 − 19)/10⌋ = 1"),
                ]),
            StoryDraft(
                "no-queue", "queueCapacity 0: only an idle schedule admits", clauses: ["LBQ-1"], noQueue,
                [
                    (0, .acquire(1), allowed(0), "starts now; busy until 10"),
                    (0, .acquire(1), rejected(10), "nothing may wait"),
                    (10, .acquire(1), allowed(0), "idle again at 10"),
                    (25, .acquire(1), allowed(0), "idle since 20"),
                    (2, .acquire(1), rejected(33), "evaluated at 25: room at 35"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "LBQ-3"], noQueue,
                [
                    (0, .acquire(1), allowed(0), "busy until 10"),
                    (20, .acquire(0), allowed(1), "a query at 20"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing: evaluated at 5"),
                    (20, .acquire(2), never, "2 > queueCapacity + 1 = 1"),
                    (5, .acquire(1), rejected(5), "the never-allowed acquire recorded nothing either"),
                    (20, .acquire(1), allowed(0), "at 20"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "LBQ-1"], twoWaiting,
                steps: [
                    DraftStep(0, .acquire(2), allowed(1), "busy until 20"),
                    DraftStep(
                        30, reconfigureTo: [("queueCapacity", -1), ("intervalNanoseconds", 10)],
                        invalid("queueCapacity", .mustNotBeNegative), "a negative queue capacity is refused (LBQ-1)"),
                    DraftStep(5, .acquire(1), delayed(15, 0), "evaluated at 5: starts at 20, the schedule kept"),
                    DraftStep(5, .acquire(1), rejected(5), "the old queue: room at 30 + 10 − 30 = 10"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-negative-queue", "a negative queue capacity",
                [("queueCapacity", -1), ("intervalNanoseconds", 10)],
                refusedAs: "queueCapacity", .mustNotBeNegative),
            RefusalDraft(
                "refuse-queue-at-max", "queueCapacity + 1 would overflow",
                [("queueCapacity", Int64.max), ("intervalNanoseconds", 1)],
                refusedAs: "queueCapacity", .exceedsMaximum(Int64.max - 1)),
            RefusalDraft(
                "refuse-zero-interval", "an interval of 0", [("queueCapacity", 0), ("intervalNanoseconds", 0)],
                refusedAs: "intervalNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-tolerance-overflow", "(queueCapacity + 1) × interval above Int64.max",
                [("queueCapacity", 1), ("intervalNanoseconds", Int64.max)],
                refusedAs: "intervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)),
        ]
        return (stories, refusals)
    }
}
