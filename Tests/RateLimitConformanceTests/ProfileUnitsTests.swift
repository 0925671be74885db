import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// Two units in a profile (Spec/Conformance.md CONF-7, Spec/protocol.md "Profiles"): the clock's
// resolution, at which instants are sent and admission instants judged, and the configurations'
// granularity, at which spans are sent.

/// `retryAfter` with `answer`'s retry-after replaced by `change` of it (other answers unchanged).
private func retryAfter(_ answer: RateLimitResult, _ change: (Int64) -> Int64) -> RateLimitResult {
    guard case .rejected(let wait) = answer else { return answer }
    return .rejected(retryAfterNanoseconds: change(wait))
}

@Suite("Profiles with a clock unit and a configuration unit (CONF-7)")
struct ProfileUnitsTests {
    private static let second: Int64 = 1_000_000_000
    private static let microsecond: Int64 = 1_000

    /// Each strategy's level and its first finding, for a failure's message.
    static func firstFindings(_ report: ConformanceReport) -> [String] {
        report.strategies.map { strategy in
            let first = strategy.ran.first { $0.primary != nil }
            let finding = first?.primary.map { "\($0.step) \($0.kind) \($0.explanation ?? "")" } ?? ""
            return "\(strategy.strategy) \(strategy.level): \(first?.id ?? "-") \(finding)"
        }
    }

    @Test("CONF-7 the configuration unit defaults to the time unit and must be a multiple of it")
    func configurationUnitParses() throws {
        let plain = try ImplementationProfile(json: JSONValue(parsing: #"{"timeUnitNanoseconds": 1000}"#))
        #expect(plain.configurationUnitNanoseconds == 1_000)
        let two = try ImplementationProfile(
            json: JSONValue(parsing: #"{"timeUnitNanoseconds": 1000, "configurationUnitNanoseconds": 1000000000}"#))
        #expect(two.timeUnitNanoseconds == 1_000 && two.configurationUnitNanoseconds == 1_000_000_000)
        #expect(two.json["configurationUnitNanoseconds"]?.int64 == 1_000_000_000)
        #expect(try ImplementationProfile(json: two.json) == two, "a profile reads back what it writes")
        #expect(
            two.notChecked(strategy: FixedWindow.identifier).contains(
                "CORE-1 spans of a configuration finer than the profile's configuration unit of 1000000000 ns"))
        // The initializer keeps the units consistent: at least the clock unit, a multiple of it.
        #expect(ImplementationProfile(timeUnitNanoseconds: 1_000).configurationUnitNanoseconds == 1_000)
        #expect(
            ImplementationProfile(timeUnitNanoseconds: 1_000, configurationUnitNanoseconds: 0)
                .configurationUnitNanoseconds == 1_000)
        #expect(
            ImplementationProfile(timeUnitNanoseconds: 1_000, configurationUnitNanoseconds: 1_500)
                .configurationUnitNanoseconds == 2_000)
        for bad in [
            #"{"timeUnitNanoseconds": 1000, "configurationUnitNanoseconds": 1500}"#,
            #"{"timeUnitNanoseconds": 1000, "configurationUnitNanoseconds": 10}"#,
        ] {
            #expect(throws: ConformanceFormatError.self, "\(bad)") {
                try ImplementationProfile(json: JSONValue(parsing: bad))
            }
        }
    }

    @Test(
        "CONF-7 with a clock of microseconds and spans of whole seconds, every instant sent is a whole microsecond, every span a whole second, and instants between the seconds are asked"
    )
    func generatedWithinBothUnits() async throws { try await offThePool { try generatedWithinBothUnitsOnThread() } }

    private func generatedWithinBothUnitsOnThread() throws {
        final class Seen: @unchecked Sendable {
            // Written only by the subject, which the suite calls on this test's thread.
            var offClock: [Int64] = []
            var offConfiguration: [String] = []
            var betweenSeconds = 0
        }
        let seen = Seen()
        let windows: Set<String> = [FixedWindow.identifier, SlidingWindowLog.identifier, TokenBucket.identifier]
        var subject = OwnHistory(strategies: windows) { event, state, now, _ in
            if now % Self.microsecond != 0 { seen.offClock.append(now) }
            if now % Self.second != 0 { seen.betweenSeconds += 1 }
            for configuration in [state.configuration] + (event.replacement.map { [$0] } ?? []) {
                for (name, value) in configuration.fields
                where name.hasSuffix("Nanoseconds") && value % Self.second != 0 {
                    seen.offConfiguration.append("\(name) \(value)")
                }
            }
            return (state.probe(event, at: .generated(now)), now)
        }
        subject.declared = ImplementationProfile(
            timeUnitNanoseconds: Self.microsecond, configurationUnitNanoseconds: Self.second)
        let report = try run(subject, ConformanceOptions(strategies: windows, randomTraces: 20, seed: 3))
        #expect(seen.offClock.isEmpty, "\(seen.offClock.prefix(5))")
        #expect(seen.offConfiguration.isEmpty, "\(seen.offConfiguration.prefix(5))")
        #expect(seen.betweenSeconds > 100, "instants between whole seconds: \(seen.betweenSeconds)")
        #expect(report.passes(at: .exact), "\(report.strategies.map { "\($0.strategy) \($0.level)" })")
    }

    @Test(
        "CONF-7 CONF-4 a retry-after floored to the whole second is invisible when the profile must declare one unit of a second, and found when it declares a microsecond clock with whole-second windows"
    )
    func flooredRetryAfterIsFound() async throws { try await offThePool { try flooredRetryAfterIsFoundOnThread() } }

    private func flooredRetryAfterIsFoundOnThread() throws {
        let windows: Set<String> = [FixedWindow.identifier, SlidingWindowLog.identifier]
        var subject = OwnHistory(strategies: windows) { event, state, now, _ in
            // The library counts its waits in whole seconds, rounded down (at least one).
            let answer = retryAfter(state.probe(event, at: .generated(now))) {
                max(Self.second, $0 - $0 % Self.second)
            }
            return (answer, now)
        }
        subject.declared = ImplementationProfile(timeUnitNanoseconds: Self.second)
        let coarse = try run(subject, ConformanceOptions(strategies: windows, randomTraces: 20, seed: 4))
        #expect(coarse.passes(at: .exact), "\(coarse.strategies.map { "\($0.strategy) \($0.level)" })")

        subject.declared = ImplementationProfile(
            timeUnitNanoseconds: Self.microsecond, configurationUnitNanoseconds: Self.second)
        let fine = try run(subject, ConformanceOptions(strategies: windows, randomTraces: 20, seed: 4))
        for strategy in fine.strategies {
            #expect(strategy.level == .failed, "\(strategy.strategy): \(strategy.level)")
            #expect(
                strategy.ran.contains { $0.primary?.kind == .earlyRetry },
                "\(strategy.strategy): a retry-after shorter than the Spec's is named")
        }
    }

    @Test(
        "CONF-7 a retry-after rounded up to the clock's unit is exact on that clock, and a difference from the Spec's nanosecond without it"
    )
    func roundedUpToTheClockIsExact() async throws { try await offThePool { try roundedUpToTheClockIsExactOnThread() } }

    private func roundedUpToTheClockIsExactOnThread() throws {
        let rates: Set<String> = [TokenBucket.identifier, GCRA.identifier]
        var subject = OwnHistory(strategies: rates) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            let answer = retryAfter(spec) { wait in
                let over = wait % Self.microsecond
                return over == 0 ? wait : wait - over + Self.microsecond
            }
            // Past the clock's last microsecond, its wait never ends.
            if case .rejected(let wait) = answer, wait > Int64.max - now { return (.neverAllowed, now) }
            return (answer, now)
        }
        subject.declared = ImplementationProfile(timeUnitNanoseconds: Self.microsecond)
        let onItsClock = try run(subject, ConformanceOptions(strategies: rates, randomTraces: 20, seed: 5))
        #expect(onItsClock.passes(at: .exact), "\(Self.firstFindings(onItsClock))")

        subject.declared = .full
        let inNanoseconds = try run(subject, ConformanceOptions(strategies: rates, randomTraces: 20, seed: 5))
        #expect(!inNanoseconds.passes(at: .exact), "rounding a nanosecond clock's waits up is not exact")
    }
}

extension ProfileUnitsTests {
    @Test(
        "CONF-7 a retry-after that ends between two readings of the clock is read as the later one: exact when that is the Spec's, early when it ends on an earlier reading"
    )
    func betweenTwoReadings() async throws { try await offThePool { try betweenTwoReadingsOnThread() } }

    private func betweenTwoReadingsOnThread() throws {
        let rates: Set<String> = [TokenBucket.identifier, GCRA.identifier]
        let unit = Self.microsecond
        /// A subject whose retry-afters end `offset` after the reading before the Spec's (rounded
        /// up to the microsecond), where that still leaves a wait of at least 1 ns.
        func ending(_ offset: Int64) -> OwnHistory {
            OwnHistory(strategies: rates) { event, state, now, _ in
                let spec = state.probe(event, at: .generated(now))
                guard case .rejected(let wait) = spec, wait <= Int64.max - now - unit else { return (spec, now) }
                let admission = now + wait
                let reading = admission % unit == 0 ? admission : admission - admission % unit + unit
                let end = reading - unit + offset
                return end > now ? (.rejected(retryAfterNanoseconds: end - now), now) : (spec, now)
            }
        }
        var within = ending(1)
        within.declared = ImplementationProfile(timeUnitNanoseconds: unit)
        let read = try run(within, ConformanceOptions(strategies: rates, randomTraces: 20, seed: 5))
        #expect(read.passes(at: .exact), "\(Self.firstFindings(read))")

        var onTheReadingBefore = ending(0)
        onTheReadingBefore.declared = ImplementationProfile(timeUnitNanoseconds: unit)
        let early = try run(onTheReadingBefore, ConformanceOptions(strategies: rates, randomTraces: 20, seed: 5))
        #expect(
            early.strategies.contains { $0.groups.contains { $0.kind == .earlyRetry } },
            "a retry on the reading before the Spec's is early: \(Self.firstFindings(early))")
    }
}

extension ConformanceEvent {
    /// The configuration a reconfigure moves to.
    fileprivate var replacement: AnyRateLimitStrategy? {
        if case .reconfigure(let configuration) = self { configuration } else { nil }
    }
}
