import RateLimitConformance
import Testing

@testable import RateLimitCore

// A model of a client learning a steady server's limit (Spec ADAPT-16): the server admits by the
// core's own GCRA and refuses beyond it with its exact retry-after; the client's tasks send
// whenever the learned limit, enforced by a token bucket (ADAPT-15), admits, and the server's last
// refusal no longer holds the endpoint; every response is fed to the adaptive rate, and a new
// limit reconfigures the bucket (CORE-13). Everything is integer nanoseconds on a manual timeline;
// the latencies are drawn from a seeded generator.

/// What a run of ``simulateAdaptiveClient(server:start:tasks:periods:latency:retryAfter:admissions:using:)`` measured.
struct AdaptiveRun: CustomStringConvertible {
    /// Requests sent (retries included).
    var requests = 0
    /// Requests the server refused.
    var rejections = 0
    /// Requests served in the second half of the run.
    var servedInSecondHalf = 0
    /// The learned limit at the end.
    var final: AdaptiveRate.Limit
    /// The instants (on the server) the server admitted at, in order.
    var admissions: [Int64] = []
    /// The instants (on the server) the server refused at, in order.
    var refusals: [Int64] = []
    /// Each change of the learned limit: its instant, the rate and the plateau after it.
    var changes: [(at: Int64, rate: Int64, plateau: Int64?)] = []

    var description: String {
        "\(requests) requests, \(rejections) refused, \(servedInSecondHalf) served in the second half, ended at rate \(final.rate) burst \(final.burst)"
    }

    /// Measured as the article measures a real server (LearningTheServersLimit.md): the rate over
    /// the second half of the admissions (per period), and the refusals among the requests sent
    /// from the second half's first admission on.
    var secondHalf: (rate: Double, refused: Int, sent: Int) {
        guard admissions.count >= 4 else { return (0, 0, 0) }
        let first = admissions[admissions.count / 2]
        let last = admissions[admissions.count - 1]
        let admitted = admissions.count - admissions.count / 2 - 1
        let refused = refusals.filter { $0 >= first }.count
        return (Double(admitted) / (Double(last - first) / 1e9), refused, admitted + 1 + refused)
    }
}

/// What a server answers a refusal with: its exact retry-after, or `Retry-After` in whole seconds,
/// at least one (nginx's `Retry-After: 1`, the tests' Python server).
enum ServerRetryAfter {
    case exact
    case wholeSeconds
}

/// Runs `tasks` client tasks against a server admitting `server.rate` per period in bursts of
/// `server.burst`, for `periods` periods, the client starting from `start` with the standard
/// adaptive rate (HTTP-13). Each way of a request takes `1 … latency` ns. The run ends after
/// `periods` periods, or once `admissions` requests were admitted.
func simulateAdaptiveClient(
    server: AdaptiveRate.Limit, start: AdaptiveRate.Limit, tasks: Int, periods: Int64, latency: Int64,
    retryAfter: ServerRetryAfter = .exact, admissions: Int = .max, using random: inout SeededGenerator
) -> AdaptiveRun {
    let period = server.periodNanoseconds
    let second: Int64 = 1_000_000_000
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
        case response(status: Int64, sent: Int64, heldUntil: Int64, holdFor: Int64)
    }
    var agenda: [(instant: Int64, phase: Phase)] = Array(repeating: (0, .ready), count: tasks)
    let end = period * periods
    while let task = agenda.indices.min(by: { agenda[$0].instant < agenda[$1].instant }), agenda[task].instant < end,
        run.admissions.count < admissions
    {
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
                let (status, until, holdFor): (Int64, Int64, Int64)
                switch serverLimiter.acquire(at: t(arrival)) {
                case .allowed:
                    (status, until, holdFor) = (200, 0, 0)
                    run.admissions.append(arrival)
                case .rejected(let wait):
                    run.refusals.append(arrival)
                    switch retryAfter {
                    case .exact: (status, until, holdFor) = (429, arrival + wait, 0)
                    case .wholeSeconds:
                        (status, until, holdFor) = (429, 0, max(1, (wait + second - 1) / second) * second)
                    }
                case .delayed, .rejectedUntilRelease, .neverAllowed, .invalid:
                    Issue.record("a GCRA of burst \(server.burst) admits or refuses one permit")
                    return run
                }
                run.requests += 1
                agenda[task] = (
                    arrival + Int64.random(in: 1...latency, using: &random),
                    .response(status: status, sent: now, heldUntil: until, holdFor: holdFor)
                )
            case .rejected(let wait):
                agenda[task] = (now + wait, .ready)
            case .delayed, .rejectedUntilRelease, .neverAllowed, .invalid:
                Issue.record("a token bucket admits or refuses one permit")
                return run
            }
        case .response(let status, let sent, let until, let holdFor):
            // A whole-second Retry-After counts from the response's arrival (HTTP-9).
            held = max(held, until, now + holdFor)
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
            if let last = run.changes.last, last.rate == state.rate, last.plateau == state.plateau {
            } else {
                run.changes.append((now, state.rate, state.plateau))
            }
            agenda[task] = (now, .ready)
        }
    }
    run.final = machine.limit(of: state)
    return run
}
