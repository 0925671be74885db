import RateLimitCore

// What one random trace draws from. A generator that always draws from everything at once dilutes
// the bugs that need one thing many times: a log that fails at its 65th entry needs 65 admissions
// in one window and no reset between them; a path taken only for acquires of more than 64 permits
// needs capacities above 64. So each trace is a *swarm* (Groce et al., "Swarm testing", ISSTA
// 2012): it keeps a random subset of the optional events and one regime of sizes and of instants.
// Sizes are drawn log-uniformly over their whole range, as Hypothesis and QuickCheck size their
// inputs, with extra weight on the boundaries the Spec names (capacity − 1, capacity, capacity + 1,
// powers of two and their neighbours, 2^31, 2^53 ± 1, the Int64 edges).

/// How a trace draws its counts (capacities, limits, bursts, permits).
package enum SizeRegime: String, CaseIterable, Hashable, Sendable {
    /// 1 to 8, with a few extremes: the values the hand-worked vectors live at.
    case small
    /// 9 to 999, log-uniform: logs and rings of 16 or 64, paths for large acquires.
    case medium
    /// 1,000 to `Int64.max`, log-uniform: 32-bit counters, doubles past 2^53, saturation.
    case large
    /// Any of the three, per draw.
    case mixed
}

/// How a trace draws its instants.
package enum TimeRegime: String, CaseIterable, Hashable, Sendable {
    /// The classic mix: repeats, 1 ns steps, edges, retry-afters, idles, jumps back, the timeline's end.
    case classic
    /// Many events per window: repeats and steps of a nanosecond or a fraction of the span, so
    /// that logs, rings and counters fill up.
    case dense
    /// The span's edges (span − 1, span, span + 1) and exact retry-afters (and one nanosecond before).
    case edges
    /// Long idles: from the span to years, and the timeline's far end.
    case idle
    /// Jumps back as often as forward (on a clock that may go back).
    case backwards
    /// Fills one window: almost every event 1 ns after the last (or at it), acquires of one
    /// permit, histories of 30 steps or more, so that a log, ring or counter gets more entries
    /// than a fixed bound (64, 128, 256) before anything expires.
    case burst
    /// Walks through windows: nearly every step a span on (± 1 ns, or two or three spans), histories
    /// of 100 steps or more, so that whatever is kept per window, period or interval (a history, a
    /// ring, an index) outgrows a fixed bound.
    case march
}

/// What one random trace draws from; see `Swarm.swift`.
package struct Swarm: Hashable, Sendable, CustomStringConvertible {
    /// The optional events the trace draws (within the profile's); the others never occur in it.
    package var events: Set<ImplementationProfile.Event>
    /// Releases (on every strategy but the concurrency limiter they are invalid, CORE-11).
    package var releases: Bool
    package var sizes: SizeRegime
    package var times: TimeRegime

    package init(events: Set<ImplementationProfile.Event>, releases: Bool, sizes: SizeRegime, times: TimeRegime) {
        self.events = events
        self.releases = releases
        self.sizes = sizes
        self.times = times
    }

    /// The generator as it was before swarms: every event, small sizes with a few extremes, the
    /// classic instants. The vector files' random stories keep it, so their bytes do not change.
    package static let classic = Swarm(
        events: Set(ImplementationProfile.Event.allCases), releases: true, sizes: .small, times: .classic)

    /// A random swarm: one trace in four draws from everything (mixed sizes, classic instants);
    /// the others keep each optional event with probability 1/2 and one regime of each.
    /// The time regimes a swarm draws from: bursts and marches twice as often as the others,
    /// since only they reach the bounds that take many events (65 entries, 257 windows) in a
    /// budget's traces.
    static let timeRegimes: [TimeRegime] = TimeRegime.allCases + [.burst, .march]

    package static func draw(using rng: inout SeededGenerator) -> Swarm {
        if rng.chance(25) {
            return Swarm(
                events: Set(ImplementationProfile.Event.allCases), releases: true, sizes: .mixed, times: .classic)
        }
        return Swarm(
            events: Set(ImplementationProfile.Event.allCases.filter { _ in rng.chance(50) }),
            releases: rng.chance(50), sizes: rng.pick(SizeRegime.allCases), times: rng.pick(Self.timeRegimes))
    }

    /// As reports print it: `sizes medium, instants dense, events weighted+reset`.
    package var description: String {
        let kept = events.sorted().map(\.rawValue) + (releases ? ["release"] : [])
        return
            "sizes \(sizes.rawValue), instants \(times.rawValue), events \(kept.isEmpty ? "acquire only" : kept.joined(separator: "+"))"
    }
}

extension SeededGenerator {
    /// A value of `range` drawn log-uniformly (each bit length equally likely), or, one draw in
    /// three, one of the boundaries in `range`: the Spec's edges (1, powers of two and their
    /// neighbours, 2^31, 2^53 ± 1, the Int64 edges) and `edges` with their neighbours.
    package mutating func logUniform(in range: ClosedRange<Int64>, edges: [Int64] = []) -> Int64 {
        if chance(33) {
            let candidates = (Self.boundaries + edges.flatMap { [$0 &- 1, $0, $0 &+ 1] }).filter(range.contains)
            if !candidates.isEmpty { return pick(candidates) }
        }
        let low = max(1, range.lowerBound)
        guard low <= range.upperBound else { return range.lowerBound }
        let lowBits = Int64.bitWidth - low.leadingZeroBitCount
        let highBits = Int64.bitWidth - range.upperBound.leadingZeroBitCount
        let bits = Int.random(in: lowBits...highBits, using: &self)
        let start = max(low, Int64(1) << (bits - 1))
        let end = bits == 63 ? Int64.max : min(range.upperBound, (Int64(1) << bits) - 1)
        return start <= end ? int(in: start...end) : low
    }

    /// The boundaries every size draw weights: small counts, powers of two and their neighbours up
    /// to 2^16, 2^31 and 2^32 with theirs, the last integers a `Double` holds exactly, the Int64 edges.
    static let boundaries: [Int64] = {
        var values: [Int64] = [1, 2, 3, 10, 100, 1_000, 1_000_000, 1_000_000_000]
        for power in 2...16 { values += [(1 << power) - 1, 1 << power, (1 << power) + 1] }
        values += [Int64(Int32.max), 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 53) - 1, 1 << 53, (1 << 53) + 1]
        values += [Int64.max / 3, Int64.max / 2, Int64.max - 1, Int64.max]
        return values
    }()

    /// A count in `regime` (at least 1): a capacity, a limit, a burst.
    package mutating func count(_ regime: SizeRegime, edges: [Int64] = []) -> Int64 {
        switch regime {
        case .small: count()
        case .medium: logUniform(in: 9...999, edges: edges + [16, 64, 100, 128, 256, 512])
        case .large: logUniform(in: 1_000...Int64.max, edges: edges)
        case .mixed: count(pick([.small, .medium, .large]), edges: edges)
        }
    }

    /// A span in nanoseconds in `regime` (at least 1): a period, a window, an interval.
    package mutating func span(_ regime: SizeRegime) -> Int64 {
        switch regime {
        case .small: span()
        case .medium: logUniform(in: 41...1_000_000)
        case .large: logUniform(in: 1_000_001...Int64.max, edges: [1_000_000_000, 60_000_000_000, 86_400_000_000_000])
        case .mixed: span(pick([.small, .medium, .large]))
        }
    }
}
