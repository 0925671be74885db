import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// The relation that defines alignment to the creation (FW-13, SWS-13): between resets, a limiter
// created at c answers at every t what the Spec's origin design created at 0 answers at t − c.

/// Checks the relation on 200 random traces with weighted acquires, bad permits, reconfigures
/// and time going back (never before the creation), some created near the end of the timeline;
/// `random` draws an origin-aligned configuration and `creation` aligns one to its creation.
func checkCreationIsTheOriginShifted<S: RateLimitStrategy>(
    _ name: String, random: (inout SeededGenerator) -> S, creation: (S) -> S
) {
    for trace in 0..<200 {
        var rng = PropertySeed.generator("\(name) creation", trace: trace)
        let replay = PropertySeed.replay(name, trace: trace)
        let created = rng.chance(20) ? Int64.max - rng.int(in: 0...1_000) : rng.int(in: 0...1_000)
        var origin = random(&rng)
        var originState = origin.initialState(at: t(0))
        var shiftedState = creation(origin).initialState(at: t(created))
        var now = created
        for index in 0..<300 {
            // No reset, which re-anchors.
            now = rng.chance(10) ? max(created, now - rng.int(in: 0...20)) : later(now, by: rng.int(in: 0...25))
            let next = rng.chance(8) ? random(&rng) : nil
            let event: RateLimitEvent<S> =
                next.map { .reconfigure($0) } ?? .acquire(rng.int(in: -1...origin.maximumPermits + 1))
            let shiftedEvent: RateLimitEvent<S> = next.map { .reconfigure(creation($0)) } ?? event
            var expected = origin.step(&originState, event, at: t(now - created))
            // The same admission instant, moved by c: past the end of the timeline, never (CORE-7).
            if case .rejected(let wait) = expected, now > Int64.max - wait { expected = .neverAllowed }
            let got = creation(origin).step(&shiftedState, shiftedEvent, at: t(now))
            if let next { origin = next }
            guard
                holds(
                    got == expected,
                    "step \(index) at \(now) (created at \(created)): \(event) -> \(got), origin \(expected)",
                    replay: replay)
            else { break }
        }
    }
}

/// `now + span`, at most the end of the timeline.
func later(_ now: Int64, by span: Int64) -> Int64 { now > Int64.max - span ? Int64.max : now + span }
