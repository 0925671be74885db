import Testing

@testable import RateLimitCore

/// An instant of a hand-written trace (tests only write non-negative literals).
func t(_ nanoseconds: Int64) -> RateLimitInstant { RateLimitInstant(validated: nanoseconds) }

/// One row of a story: at `nanoseconds`, `event` must be answered `expected`.
typealias StoryStep<S: RateLimitStrategy> = (nanoseconds: Int64, event: RateLimitEvent<S>, expected: RateLimitResult)

/// Runs a hand-written story on one limiter created at `createdAt` and reports each wrong answer as
/// `step N at Tns: got X, want Y`. Expected values are worked out by hand in the test, never with
/// the implementation's formula.
func story<S: RateLimitStrategy>(
    _ strategy: S, createdAt: Int64 = 0, _ steps: [StoryStep<S>],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var limiter = RateLimiter(strategy, at: t(createdAt))
    for (index, step) in steps.enumerated() {
        let got = limiter.step(step.event, at: t(step.nanoseconds))
        #expect(
            got == step.expected,
            "step \(index + 1) at \(step.nanoseconds)ns \(step.event): got \(got), want \(step.expected)",
            sourceLocation: sourceLocation)
    }
}

/// Asserts that building a configuration fails naming `field` with `problem`.
func expectRefused<T>(
    field: String, _ problem: RateLimitInputError.Problem, sourceLocation: SourceLocation = #_sourceLocation,
    _ build: () throws(RateLimitInputError) -> T
) {
    do {
        let built = try build()
        Issue.record("expected \(field) to be refused, built \(built)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.field == field, "\(error)", sourceLocation: sourceLocation)
        #expect(error.problem == problem, "\(error)", sourceLocation: sourceLocation)
    }
}
