import RateLimitConformance
import RateLimitCore
import Testing

/// What an adapter's `tryAcquire` answers when the strategy alone answers `result` (queue empty).
private func expectedOutcome(_ result: RateLimitResult) -> WaitOutcome { WaitOutcome(result) }

/// The outcome as compared: an `invalid` keeps only field and problem.
private func comparable(_ outcome: WaitOutcome) -> WaitOutcome {
    switch outcome {
    case .rejected(.invalid(let error)):
        .rejected(.invalid(RateLimitInputError(field: error.field, value: nil, problem: error.problem)))
    case .granted(let result): .granted(result.comparable)
    default: outcome
    }
}

/// Runs every story of `file` created at 0 through every adapter of its strategy.
private func runStories<S: RateLimitStrategy>(_ type: S.Type, _ file: VectorFile) async throws -> Int {
    var checked = 0
    for story in file.stories where story.createdAt == 0 {
        guard let strategy = story.configuration.typed(as: S.self) else { continue }
        for (adapter, clock) in try adapters(strategy, queueLimit: 0) {
            if !adapter.queues,
                story.steps.contains(where: {
                    if case .release = $0.event { return true }
                    if case .reconfigure = $0.event { return true }
                    return false
                })
            {
                continue
            }
            for (index, step) in story.steps.enumerated() {
                move(clock, to: step.now)
                let (got, want): (String, String)
                switch step.event {
                case .acquire(let permits):
                    (got, want) = (
                        "\(comparable(await adapter.tryAcquire(permits, priority: .normal)))",
                        "\(comparable(expectedOutcome(step.expected)))"
                    )
                case .release(let permits):
                    (got, want) = ("\(await adapter.release(permits).comparable)", "\(step.expected.comparable)")
                case .reset:
                    (got, want) = ("\(await adapter.reset().comparable)", "\(step.expected.comparable)")
                case .reconfigure(let configuration):
                    guard let replacement = configuration.typed(as: S.self) else { continue }
                    (got, want) = (
                        "\(await adapter.reconfigure(replacement).comparable)", "\(step.expected.comparable)"
                    )
                }
                #expect(got == want, "\(adapter.name) \(story.id) step \(index + 1) at \(step.now) ns \(step.event)")
                if got != want { break }
                checked += 1
            }
            await adapter.close()
        }
    }
    return checked
}

@Suite("The vectors through every adapter")
struct AdapterVectorTests {
    @Test(
        "Every vector story (window edges at exact nanoseconds, weighted, zero, backward time, the end of the timeline) answers the same through every adapter",
        arguments: AnyRateLimitStrategy.identifiers)
    func vectors(_ identifier: String) async throws {
        let type = try #require(strategyTypes[identifier])
        let file = try VectorGenerator.file(identifier)
        let checked = try await runStories(type, file)
        #expect(checked >= 100, "only \(checked) steps were checked")
    }
}
