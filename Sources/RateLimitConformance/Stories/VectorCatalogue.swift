import RateLimitCore

/// The stories the vector files are generated from: hand-written ones per strategy (one file per
/// strategy in this folder), plus seeded random ones that sweep the edges. Answers are never
/// written here; `VectorGenerator` takes them from the reference model.
package enum VectorCatalogue {
    /// Random stories per strategy, and steps per random story.
    static let randomStories = 6
    static let randomSteps = 40
    /// Fixed: changing it rewrites every random story (and needs a generator version bump).
    static let randomSeed: UInt64 = 20_261_121

    /// The drafts of `strategy`'s stories and refusals.
    package static func drafts(_ strategy: String) throws(ConformanceFormatError) -> ([StoryDraft], [RefusalDraft]) {
        do {
            let (stories, refusals): ([StoryDraft], [RefusalDraft])
            switch strategy {
            case TokenBucket.identifier: (stories, refusals) = try tokenBucket()
            case IntervalTokenBucket.identifier: (stories, refusals) = try intervalTokenBucket()
            case GCRA.identifier: (stories, refusals) = try gcra()
            case FixedWindow.identifier: (stories, refusals) = try fixedWindow()
            case SlidingWindowLog.identifier: (stories, refusals) = try slidingWindowLog()
            case SlidingWindowCounter.identifier: (stories, refusals) = try slidingWindowCounter()
            case LeakyBucketMeter.identifier: (stories, refusals) = try leakyBucketMeter()
            case LeakyBucketQueue.identifier: (stories, refusals) = try leakyBucketQueue()
            case ConcurrencyLimiter.identifier: (stories, refusals) = try concurrency()
            default: throw RateLimitInputError(field: "strategy", value: nil, problem: .notSupported)
            }
            return (stories + random(strategy), refusals)
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
                "random-\(index)", "seeded random trace \(index) (seed \(randomSeed)): edge-biased events and instants",
                clauses: [], trace.configuration, createdAt: trace.createdAt, trace.steps.map { ($0.now, $0.event) })
        }
    }
}

/// The instant `Int64.max − offset`, for stories near the end of the timeline.
func end(_ offset: Int64 = 0) -> Int64 { Int64.max - offset }
