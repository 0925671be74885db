import RateLimitConformance
import Testing

@testable import RateLimitCore

// A model of a client learning a steady server's limit (Spec ADAPT-16): the server admits by the
// core's own GCRA and refuses beyond it with its exact retry-after; the client's tasks send
// whenever the learned limit, enforced by a token bucket (ADAPT-15), admits, and the server's last
// refusal no longer holds the endpoint; every response is fed to the adaptive rate, and a new
// limit reconfigures the bucket (CORE-13). Everything is integer nanoseconds on a manual timeline;
// the latencies are drawn from a seeded generator.

/// What a run of ``simulateAdaptiveClient(server:start:tasks:periods:latency:using:)`` measured.
struct AdaptiveRun: CustomStringConvertible {
    /// Requests sent (retries included).
    var requests = 0
    /// Requests the server refused.
    var rejections = 0
    /// Requests served in the second half of the run.
    var servedInSecondHalf = 0
    /// The learned limit at the end.
    var final: AdaptiveRate.Limit

    var description: String {
        "\(requests) requests, \(rejections) refused, \(servedInSecondHalf) served in the second half, ended at rate \(final.rate) burst \(final.burst)"
    }
}

/// Runs `tasks` client tasks against a server admitting `server.rate` per period in bursts of
/// `server.burst`, for `periods` periods, the client starting from `start` with the standard
/// adaptive rate (HTTP-13). Each way of a request takes `1 … latency` ns.
func simulateAdaptiveClient(
    server: AdaptiveRate.Limit, start: AdaptiveRate.Limit, tasks: Int, periods: Int64, latency: Int64,
    using random: inout SeededGenerator
) -> AdaptiveRun {
    let period = server.periodNanoseconds
    guard let machine = AdaptiveRate.standard(startingAt: start),
        let gcra = try? GCRA(burst: server.burst, emissionIntervalNanoseconds: period / server.rate),
        let bucket = try? TokenBucket(
            capacity: start.burst, permitsPerPeriod: start.rate, periodNanoseconds: period)
    else {
        Issue.record("the simulation's configurations are valid")
        return AdaptiveRun(final: start)
    }
    var serverLimiter = RateLimiter(gcra, at: t(0))
    var clientLimiter = RateLimiter(bucket, at: t(0))
    var state = machine.initialState(at: t(0))
    var run = AdaptiveRun(final: start)
    var held: Int64 = 0
    // Each task's next instant and what happens then: ready to send, or a response (status, arrival).
    enum Phase {
        case ready
        case response(status: Int64, sent: Int64, heldUntil: Int64)
    }
    var agenda: [(instant: Int64, phase: Phase)] = Array(repeating: (0, .ready), count: tasks)
    let end = period * periods
    while let task = agenda.indices.min(by: { agenda[$0].instant < agenda[$1].instant }), agenda[task].instant < end {
        let now = agenda[task].instant
        switch agenda[task].phase {
        case .ready:
            guard held <= now else {
                agenda[task] = (held, .ready)
                continue
            }
            switch clientLimiter.acquire(at: t(now)) {
            case .allowed:
                let arrival = now + Int64.random(in: 1...latency, using: &random)
                let (status, until): (Int64, Int64)
                switch serverLimiter.acquire(at: t(arrival)) {
                case .allowed: (status, until) = (200, 0)
                case .rejected(let wait): (status, until) = (429, arrival + wait)
                case .delayed, .rejectedUntilRelease, .neverAllowed, .invalid:
                    Issue.record("a GCRA of burst \(server.burst) admits or refuses one permit")
                    return run
                }
                run.requests += 1
                agenda[task] = (
                    arrival + Int64.random(in: 1...latency, using: &random),
                    .response(status: status, sent: now, heldUntil: until)
                )
            case .rejected(let wait):
                agenda[task] = (now + wait, .ready)
            case .delayed, .rejectedUntilRelease, .neverAllowed, .invalid:
                Issue.record("a token bucket admits or refuses one permit")
                return run
            }
        case .response(let status, let sent, let until):
            held = max(held, until)
            if status == 429 {
                run.rejections += 1
            } else if now >= end / 2 {
                run.servedInSecondHalf += 1
            }
            let answer = machine.step(
                &state, .response(status: status, latencyNanoseconds: now - sent, inFlight: 1), at: t(now))
            if case .limit(let limit, let change) = answer, change != .unchanged,
                let enforced = clientLimiter.strategy.enforcing(limit)
            {
                _ = clientLimiter.step(.reconfigure(enforced), at: t(now))
            }
            agenda[task] = (now, .ready)
        }
    }
    run.final = machine.limit(of: state)
    return run
}
