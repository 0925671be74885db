import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

/// The cause a finding is filed under (Spec/Conformance.md CONF-10), on the three cases real runs
/// filed under the wrong one: a feature of the history that the experiment confirms wins over the
/// kind of event and the strategy's edges, and the end of the timeline wins over the history.
@Suite("CONF-10 a finding's cause")
struct CauseTests {
    private func configuration(_ strategy: String, _ fields: [(String, Int64)]) throws -> AnyRateLimitStrategy {
        try AnyRateLimitStrategy(strategy: strategy, json: .object(fields.map { ($0.0, .integer($0.1)) }))
    }

    /// The primary finding of `steps` run against `subject`, after the experiments.
    private func primary(
        _ subject: OwnHistory, _ configuration: AnyRateLimitStrategy, _ steps: [(Int64, ConformanceEvent)]
    ) throws -> StepFinding {
        var subject = subject
        var run = StrategyRun(strategy: configuration.kind, profile: .full, tolerance: 0)
        let trace = Trace(
            configuration: configuration, createdAt: 0, steps: steps.map { TraceStep(now: $0.0, event: $0.1) })
        let outcome = run.trace(trace, id: "cause", origin: .story, on: &subject)
        return try #require(outcome.primary, "\(outcome.findings)")
    }

    @Test("CONF-10 TB-10 a query that shows a fraction a reconfigure kept wrongly is the reconfigure's, not CORE-9's")
    func queryAfterReconfigure() throws {
        // A bucket that promises one more permit to a query after any reconfigure.
        let subject = OwnHistory(strategies: [TokenBucket.identifier]) { event, state, now, reconfigured in
            let spec = state.probe(event, at: .generated(now))
            if case .reconfigure = event { reconfigured = 1 }
            if event == .acquire(0), reconfigured == 1, case .allowed(let remaining) = spec {
                return (.allowed(remaining: remaining + 1), now)
            }
            return (spec, now)
        }
        let bucket = try configuration(
            "token-bucket", [("capacity", 4), ("permitsPerPeriod", 1), ("periodNanoseconds", 10), ("initialTokens", 4)])
        let slower = try configuration(
            "token-bucket", [("capacity", 4), ("permitsPerPeriod", 1), ("periodNanoseconds", 20), ("initialTokens", 4)])
        let finding = try primary(
            subject, bucket, [(0, .acquire(3)), (5, .reconfigure(slower)), (5, .acquire(0))])
        #expect(finding.step == 3 && finding.event == "acquire(0)")
        #expect(finding.cause == FindingCause("TB-10", "reconfigure carry-over"), "\(finding.cause)")
    }

    @Test(
        "CONF-10 CORE-10 an over-admission after time went back is CORE-10's, even on an entry exactly one window old")
    func backwardTimeOnAnEdge() throws {
        // A log that admits whatever is asked at an instant earlier than one it has seen.
        let subject = OwnHistory(strategies: [SlidingWindowLog.identifier]) { event, state, now, latest in
            let spec = state.probe(event, at: .generated(now))
            if now < latest, case .acquire(let permits) = event, permits > 0, !spec.isAdmitted {
                return (.allowed(remaining: 0), now)
            }
            latest = max(latest, Int(now))
            return (spec, now)
        }
        let log = try configuration("sliding-window-log", [("limit", 1), ("windowNanoseconds", 10)])
        // At 10, the entry at 0 is exactly one window old (SWL-3's edge); but time went back from 15.
        let finding = try primary(subject, log, [(0, .acquire(1)), (15, .acquire(1)), (10, .acquire(1))])
        #expect(finding.step == 3 && finding.kind == .overAdmission, "\(finding)")
        #expect(finding.cause == .backwardTime, "\(finding.cause)")
    }

    @Test("CONF-10 CORE-7 a wait past the end of the timeline is CORE-7's, even when a reconfigure led there")
    func pastTheTimelineAfterReconfigure() throws {
        // A GCRA that answers a saturated retry-after where the Spec says never allowed.
        let subject = OwnHistory(strategies: [GCRA.identifier]) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            if spec == .neverAllowed { return (.rejected(retryAfterNanoseconds: .max - now), nil) }
            return (spec, now)
        }
        let gcra = try configuration("gcra", [("burst", 1), ("emissionIntervalNanoseconds", 10)])
        let slow = try configuration("gcra", [("burst", 1), ("emissionIntervalNanoseconds", 1 << 62)])
        // With the slow interval, the third acquire's admission lies at 2^63, past the end; without
        // the reconfigure it is 10 ns away (the experiment would file it under GCRA-10).
        let finding = try primary(
            subject, gcra, [(0, .reconfigure(slow)), (0, .acquire(1)), (1 << 62, .acquire(1)), (1 << 62, .acquire(1))])
        #expect(finding.step == 4, "\(finding)")
        #expect(finding.cause == .neverAllowed, "\(finding.cause)")
    }

    @Test(
        "CONF-10 FW-13 a declared variant's findings on the origin's grid are not FW-3's: the creation's grid is FW-13's, a first-event grid claims none"
    )
    func variantEdges() throws {
        // A difference at `now` (the Spec admits, the implementation refuses), on a window of 10 ns
        // created at 3, judged as `alignment`.
        func cause(_ alignment: WindowAlignment, at now: Int64) throws -> FindingCause {
            let window = AnyRateLimitStrategy.fixedWindow(
                try FixedWindow(limit: 2, windowNanoseconds: 10, alignment: alignment))
            let trace = Trace(configuration: window, createdAt: 3, steps: [TraceStep(now: now, event: .acquire(1))])
            return FindingCause.ofStep(
                .difference, strategy: "fixed-window", trace: trace, index: 0, expected: .allowed(remaining: 1),
                got: .rejected(retryAfterNanoseconds: 3), specAdmission: now, admitted: [], configuration: window
            ).cause
        }
        #expect(try cause(.origin, at: 20) == FindingCause("FW-3", "window edges"))
        #expect(try cause(.origin, at: 23) == FindingCause("FW-4", "admission"))
        #expect(try cause(.creation, at: 23) == FindingCause("FW-13", "window edges, the declared creation"))
        #expect(try cause(.creation, at: 20) == FindingCause("FW-4", "admission"))
        #expect(try cause(.firstEvent, at: 20) == FindingCause("FW-4", "admission"))
    }
}
