import RateLimitCore

// Spec/ConcurrencyLimiter.md: at most N permits in flight (h); an acquire of n is admitted iff
// h + n ≤ N (CL-4), refused with shortfall h + n − N (CL-6); a release of more than h is invalid
// (CL-8). Time plays no part (CL-3).

extension VectorCatalogue {
    static func concurrency() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        let three = AnyRateLimitStrategy.concurrency(try ConcurrencyLimiter(limit: 3))
        /// A release of more than the `held` permits in flight.
        func overRelease(_ held: Int64) -> RateLimitResult { invalid("permits", .exceedsMaximum(held)) }
        let stories = [
            StoryDraft(
                "acquire-release", "acquire takes free permits; a refusal says how many must be released first",
                clauses: ["CL-4", "CL-5", "CL-6"], three,
                [
                    (0, .acquire(2), allowed(1), "2 in flight"),
                    (0, .acquire(1), allowed(0), "3 in flight"),
                    (0, .acquire(1), untilRelease(1), "3 + 1 − 3: one must be released first"),
                    (0, .acquire(2), untilRelease(2), "3 + 2 − 3 = 2"),
                    (0, .release(1), allowed(1), "2 in flight"),
                    (0, .acquire(2), untilRelease(1), "2 + 2 − 3 = 1"),
                    (0, .acquire(1), allowed(0), "3 in flight"),
                    (0, .release(3), allowed(3), "none in flight"),
                ]),
            StoryDraft(
                "time-ignored", "time plays no part: instants that go back change nothing", clauses: ["CL-3"], three,
                [
                    (100, .acquire(2), allowed(1), "2 in flight at 100"),
                    (5, .acquire(1), allowed(0), "an earlier instant changes nothing"),
                    (end(), .acquire(1), untilRelease(1), "nor does the end of the timeline"),
                    (0, .release(3), allowed(3), "released at 0"),
                ]),
            StoryDraft(
                "never", "more than the limit is never allowed", clauses: ["CL-7"], three,
                [
                    (0, .acquire(4), never, "4 > limit 3: no release helps"),
                    (0, .acquire(3), allowed(0), "the limit itself"),
                    (0, .acquire(4), never, "still never, not a shortfall"),
                ]),
            StoryDraft(
                "invalid-releases", "releasing more than is held, or a negative count, is invalid and changes nothing",
                clauses: ["CL-8"], three,
                [
                    (0, .acquire(2), allowed(1), "2 in flight"),
                    (0, .release(3), overRelease(2), "3 > the 2 held"),
                    (0, .release(-1), negativePermits, "a negative release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(0), allowed(1), "the invalid events changed nothing"),
                    (0, .release(0), allowed(1), "releasing nothing is allowed and changes nothing"),
                    (0, .release(2), allowed(3), "the 2 held"),
                    (0, .release(1), overRelease(0), "a double release"),
                ]),
            StoryDraft(
                "reset-forgets", "reset forgets the permits in flight; releasing them afterwards is invalid",
                clauses: ["CL-9"], three,
                [
                    (0, .acquire(3), allowed(0), "3 in flight"),
                    (0, .reset, allowed(3), "none in flight"),
                    (0, .release(1), overRelease(0), "a permit taken before the reset releases nothing"),
                    (0, .acquire(3), allowed(0), "the limit again"),
                ]),
            StoryDraft(
                "reconfigure-keeps-in-flight", "reconfigure keeps the permits in flight, even above the new limit",
                clauses: ["CL-10"], three,
                [
                    (0, .acquire(3), allowed(0), "3 in flight"),
                    (
                        0, .reconfigure(.concurrency(try ConcurrencyLimiter(limit: 2))), allowed(0),
                        "3 kept over limit 2: remaining 0"
                    ),
                    (0, .acquire(1), untilRelease(2), "3 + 1 − 2 = 2"),
                    (0, .release(2), allowed(1), "1 in flight"),
                    (0, .acquire(1), allowed(0), "2 in flight, the new limit"),
                ]),
            StoryDraft(
                "interleaved", "interleaved acquires and releases keep in flight = acquired − released",
                clauses: ["CL-11"], three,
                [
                    (0, .acquire(1), allowed(2), "1 in flight"),
                    (1, .acquire(1), allowed(1), "2 in flight"),
                    (2, .release(1), allowed(2), "1 in flight"),
                    (3, .acquire(2), allowed(0), "3 in flight"),
                    (4, .acquire(1), untilRelease(1), "still 3"),
                    (5, .release(2), allowed(2), "1 in flight"),
                    (6, .acquire(2), allowed(0), "3 in flight"),
                    (7, .release(3), allowed(3), "0: 6 acquired, 6 released"),
                    (8, .release(1), overRelease(0), "none left to release"),
                ]),
            StoryDraft(
                "not-a-semaphore", "unlike a semaphore, an over-release never raises the limit", clauses: ["CL-12"],
                three,
                [
                    (0, .acquire(1), allowed(2), "1 in flight"),
                    (0, .release(2), overRelease(1), "2 > the 1 held: refused, not counted as 2 free"),
                    (0, .acquire(2), allowed(0), "3 in flight"),
                    (0, .acquire(1), untilRelease(1), "the limit is still 3"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "CL-1"], three,
                steps: [
                    DraftStep(0, .acquire(2), allowed(1), "2 in flight"),
                    DraftStep(
                        0, reconfigureTo: [("limit", 0)], invalid("limit", .mustBePositive), "limit 0 is refused (CL-1)"
                    ),
                    DraftStep(0, .acquire(1), allowed(0), "the limit is still 3"),
                    DraftStep(0, .acquire(1), untilRelease(1), "3 in flight"),
                ]),
        ]
        let refusals = [
            RefusalDraft("refuse-zero-limit", "a limit below 1", [("limit", 0)], refusedAs: "limit", .mustBePositive),
            RefusalDraft(
                "refuse-negative-limit", "a negative limit", [("limit", -5)], refusedAs: "limit", .mustBePositive),
        ]
        return (stories, refusals)
    }
}
