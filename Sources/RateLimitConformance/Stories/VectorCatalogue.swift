import RateLimitCore

/// The stories the vector files are generated from: hand-written ones per strategy (one file per
/// strategy in this folder), plus seeded random ones that sweep the edges.
///
/// Each step of a hand-written story carries the answer worked out by hand from the strategy's
/// Spec clauses, and a comment saying what it checks (the arithmetic, where there is some). This
/// is the one place those answers are written: `VectorGenerator` runs the reference model over
/// every story and fails, naming the story and the step, where the model answers otherwise; the
/// core's tests run the same check (`CatalogueTests`). Random stories carry no answers: theirs are
/// the model's, and the files keep them apart (`randomStories`).
package enum VectorCatalogue {
    /// Random stories per strategy, and steps per random story.
    static let randomStories = 6
    static let randomSteps = 40
    /// Fixed: changing it rewrites every random story (and needs a generator version bump).
    static let randomSeed: UInt64 = 20_261_121

    /// The drafts of `strategy`'s stories (hand-written, then random) and refusals.
    package static func drafts(_ strategy: String) throws(ConformanceFormatError) -> ([StoryDraft], [RefusalDraft]) {
        let (stories, refusals) = try handWritten(strategy)
        return (stories + random(strategy), refusals)
    }

    /// The hand-written stories and refusals of `strategy`.
    package static func handWritten(_ strategy: String) throws(ConformanceFormatError) -> (
        [StoryDraft], [RefusalDraft]
    ) {
        do {
            switch strategy {
            case TokenBucket.identifier: return try tokenBucket()
            case IntervalTokenBucket.identifier: return try intervalTokenBucket()
            case GCRA.identifier: return try gcra()
            case PayLater.identifier: return try payLater()
            case WarmUp.identifier: return try warmUp()
            case FixedWindow.identifier: return try fixedWindow()
            case SlidingWindowLog.identifier: return try slidingWindowLog()
            case SlidingWindowCounter.identifier: return try slidingWindowCounter()
            case SlidingWindowSegments.identifier: return try slidingWindowSegments()
            case LeakyBucketMeter.identifier: return try leakyBucketMeter()
            case LeakyBucketQueue.identifier: return try leakyBucketQueue()
            case ConcurrencyLimiter.identifier: return try concurrency()
            default: throw RateLimitInputError(field: "strategy", value: nil, problem: .notSupported)
            }
        } catch {
            throw ConformanceFormatError(
                "the catalogue of \(strategy) holds a configuration the Spec refuses: \(error)")
        }
    }

    /// Seeded random stories: edge-biased configurations, events and instants (TraceGenerator).
    static func random(_ strategy: String) -> [StoryDraft] {
        (1...randomStories).compactMap { index in
            var rng = SeededGenerator(seed: randomSeed, stream: strategy, index: index)
            guard let trace = TraceGenerator.trace(strategy, steps: randomSteps, using: &rng) else { return nil }
            return StoryDraft(
                random: "random-\(index)",
                "seeded random trace \(index) (seed \(randomSeed)): edge-biased events and instants",
                trace.configuration, createdAt: trace.createdAt, trace.steps)
        }
    }

    // MARK: The answers, as the stories write them (CORE-5)

    /// `allowed(remaining)`.
    static func allowed(_ remaining: Int64) -> RateLimitResult { .allowed(remaining: remaining) }
    /// `delayed(wait, remaining)`.
    static func delayed(_ wait: Int64, _ remaining: Int64) -> RateLimitResult {
        .delayed(waitNanoseconds: wait, remaining: remaining)
    }
    /// `rejected(retryAfter)`.
    static func rejected(_ retryAfter: Int64) -> RateLimitResult { .rejected(retryAfterNanoseconds: retryAfter) }
    /// `rejectedUntilRelease(shortfall)`.
    static func untilRelease(_ shortfall: Int64) -> RateLimitResult { .rejectedUntilRelease(shortfall: shortfall) }
    /// `neverAllowed`.
    static let never = RateLimitResult.neverAllowed
    /// `invalid`, naming a field and a problem (the value and the reason are not part of the answer).
    static func invalid(_ field: String, _ problem: RateLimitInputError.Problem) -> RateLimitResult {
        .invalid(RateLimitInputError(field: field, value: nil, problem: problem))
    }
    /// A release to a strategy that holds no permits (CORE-11).
    static let releaseNotSupported = invalid("release", .notSupported)
    /// Negative permits (CORE-9).
    static let negativePermits = invalid("permits", .mustNotBeNegative)
}

/// The instant `Int64.max − offset`, for stories near the end of the timeline.
func end(_ offset: Int64 = 0) -> Int64 { Int64.max - offset }
