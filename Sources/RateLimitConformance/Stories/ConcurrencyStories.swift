import RateLimitCore

extension VectorCatalogue {
    static func concurrency() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        let three = AnyRateLimitStrategy.concurrency(try ConcurrencyLimiter(limit: 3))
        let stories = [
            StoryDraft(
                "acquire-release", "acquire takes free permits; a refusal says how many must be released first",
                clauses: ["CL-4", "CL-5", "CL-6"], three,
                [
                    (0, .acquire(2)), (0, .acquire(1)), (0, .acquire(1)), (0, .acquire(2)), (0, .release(1)),
                    (0, .acquire(2)),
                    (0, .acquire(1)), (0, .release(3)),
                ]),
            StoryDraft(
                "time-ignored", "time plays no part: instants that go back change nothing", clauses: ["CL-3"], three,
                [
                    (100, .acquire(2)), (5, .acquire(1)), (end(), .acquire(1)), (0, .release(3)),
                ]),
            StoryDraft(
                "never", "more than the limit is never allowed", clauses: ["CL-7"], three,
                [
                    (0, .acquire(4)), (0, .acquire(3)), (0, .acquire(4)),
                ]),
            StoryDraft(
                "invalid-releases", "releasing more than is held, or a negative count, is invalid and changes nothing",
                clauses: ["CL-8"], three,
                [
                    (0, .acquire(2)), (0, .release(3)), (0, .release(-1)), (0, .acquire(-1)), (0, .acquire(0)),
                    (0, .release(0)),
                    (0, .release(2)), (0, .release(1)),
                ]),
            StoryDraft(
                "reset-forgets", "reset forgets the permits in flight; releasing them afterwards is invalid",
                clauses: ["CL-9"], three,
                [
                    (0, .acquire(3)), (0, .reset), (0, .release(1)), (0, .acquire(3)),
                ]),
            StoryDraft(
                "reconfigure-keeps-in-flight", "reconfigure keeps the permits in flight, even above the new limit",
                clauses: ["CL-10"], three,
                [
                    (0, .acquire(3)), (0, .reconfigure(.concurrency(try ConcurrencyLimiter(limit: 2)))),
                    (0, .acquire(1)),
                    (0, .release(2)), (0, .acquire(1)),
                ]),
            StoryDraft(
                "interleaved", "interleaved acquires and releases keep in flight = acquired − released",
                clauses: ["CL-11"], three,
                [
                    (0, .acquire(1)), (1, .acquire(1)), (2, .release(1)), (3, .acquire(2)), (4, .acquire(1)),
                    (5, .release(2)),
                    (6, .acquire(2)), (7, .release(3)), (8, .release(1)),
                ]),
            StoryDraft(
                "not-a-semaphore", "unlike a semaphore, an over-release never raises the limit", clauses: ["CL-12"],
                three,
                [
                    (0, .acquire(1)), (0, .release(2)), (0, .acquire(2)), (0, .acquire(1)),
                ]),
        ]
        let refusals = [
            RefusalDraft("refuse-zero-limit", "a limit below 1", [("limit", 0)]),
            RefusalDraft("refuse-negative-limit", "a negative limit", [("limit", -5)]),
        ]
        return (stories, refusals)
    }
}
