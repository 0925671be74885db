import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// A wait past the end of the timeline (Spec/Conformance.md CONF-1): a library whose clock outlives
// Int64.max ns answers waits that end after it. They are well formed and judged.

@Suite("A wait past the end of the timeline (CONF-1)")
struct PastTheEndTests {
    /// A wait from `now` that ends `beyond` ns past the end of the timeline (Int64.max when longer).
    private static func pastTheEnd(from now: Int64, by beyond: Int64 = 5) -> RateLimitResult {
        let wait = Int64.max - now
        return .rejected(retryAfterNanoseconds: wait > Int64.max - beyond ? Int64.max : wait + beyond)
    }

    @Test(
        "CONF-1 CORE-7 a wait past the end where the Spec's admission lies past it too is the Spec's neverAllowed, and exact"
    )
    func pastTheEndWhereTheSpecIsTooIsExact() async throws { try await offThePool { try exactOnThread() } }

    private func exactOnThread() throws {
        final class Count: @unchecked Sendable {
            // Written only by the subject, which the suite calls on this test's thread.
            var answered = 0
        }
        let count = Count()
        let timed = Set(AnyRateLimitStrategy.identifiers).subtracting([ConcurrencyLimiter.identifier])
        let subject = OwnHistory(strategies: timed) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            guard spec == .neverAllowed, case .acquire(let permits) = event,
                permits <= state.configuration.maximumPermits
            else { return (spec, now) }
            count.answered += 1
            return (Self.pastTheEnd(from: now), now)
        }
        let report = try run(subject, ConformanceOptions(strategies: timed, randomTraces: 30, seed: 8))
        #expect(count.answered > 20, "waits past the end answered: \(count.answered)")
        #expect(report.passes(at: .exact), "\(ProfileUnitsTests.firstFindings(report))")
    }

    @Test(
        "CONF-1 CONF-5 a wait past the end where the Spec admits within the timeline is a liveness failure, not malformed"
    )
    func pastTheEndWhereTheSpecAdmitsFails() async throws { try await offThePool { try livenessOnThread() } }

    private func livenessOnThread() throws {
        let bug = PlantedBug(mutate: { _, result, now in
            if case .rejected = result { Self.pastTheEnd(from: now) } else { result }
        })
        let report = try run(bug, ConformanceOptions(strategies: [TokenBucket.identifier, GCRA.identifier]))
        #expect(!report.passes(at: .safety))
        let kinds = report.strategies.flatMap(\.groups).map(\.kind)
        #expect(kinds.contains(.liveness) && !kinds.contains(.malformed), "\(kinds)")
    }

    @Test("CONF-4 CORE-7 a wait past the end for more permits than the maximum is a retry forever")
    func pastTheEndForTooManyIsRetryForever() async throws { try await offThePool { try foreverOnThread() } }

    private func foreverOnThread() throws {
        let bug = OwnHistory(strategies: [TokenBucket.identifier]) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            guard spec == .neverAllowed, case .acquire(let permits) = event,
                permits > state.configuration.maximumPermits
            else { return (spec, now) }
            return (Self.pastTheEnd(from: now), now)
        }
        let report = try run(bug, ConformanceOptions(strategies: [TokenBucket.identifier]))
        let kinds = report.strategies.flatMap(\.groups).map(\.kind)
        #expect(kinds.contains(.retryForever), "\(kinds)")
    }
}
