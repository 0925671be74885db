import Foundation
import RateLimitAtomic
import RateLimitConformance
import RateLimitCore
import RateLimitLock
import RateLimitTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A clock that reads a manual clock up to `resolution − 1` ns late, as a coarse clock reads the
/// present (CORE-17): each reading lags by the lag set last, and readings never go back.
// @unchecked: `lag` and `last` are read and written only while `lock` is held; the manual clock
// is Sendable.
final class LaggingClock: Clock, @unchecked Sendable {
    typealias Instant = ManualClock.Instant
    let manual: ManualClock
    let resolution: Int64
    private let lock = NSLock()
    private var lag: Int64 = 0
    private var last: Instant?

    init(_ manual: ManualClock, resolution: Int64) {
        self.manual = manual
        self.resolution = resolution
    }

    /// The lag of the readings from now on, `0 ..< resolution`.
    func setLag(_ nanoseconds: Int64) { lock.withLock { lag = nanoseconds } }

    var now: Instant {
        lock.withLock {
            let lagging = manual.now.advanced(by: .nanoseconds(-lag))
            let reading = max(last ?? lagging, lagging)
            last = reading
            return reading
        }
    }

    var minimumResolution: Duration { .nanoseconds(resolution) }

    /// Waits on the manual clock, which the test advances: nothing waits in real time. A timer
    /// armed on a lagging clock fires up to a resolution late, as on a coarse clock.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await manual.sleep(until: deadline.advanced(by: .nanoseconds(resolution)), tolerance: tolerance)
    }
}

/// The reference model on a clock up to `resolution − 1` ns late, as an implementation under the
/// conformance suite: each event applied at a lagging reading (CORE-17), the lags seeded.
struct CoarseClockSubject: ConformanceSubject {
    struct Limiter {
        var reference: ReferenceLimiter
        var reading: Int64
    }

    let resolution: Int64
    var rng: SeededGenerator
    var name: String { "reference model on a clock up to \(resolution - 1) ns late" }
    var strategies: Set<String> {
        [
            TokenBucket.identifier, GCRA.identifier, PayLater.identifier, LeakyBucketMeter.identifier,
            SlidingWindowLog.identifier,
            LeakyBucketQueue.identifier, ConcurrencyLimiter.identifier,
        ]
    }

    func profile(for strategy: String) -> ImplementationProfile {
        .coarseClock(resolutionNanoseconds: resolution)
    }

    mutating func reading(after last: Int64, at now: Int64) -> Int64 {
        max(last, now - min(now, rng.int(in: 0...resolution - 1)))
    }

    mutating func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        guard let configuration = request.configuration else {
            return ReferenceSubject().create(request, at: now).map { Limiter(reference: $0, reading: now) }
        }
        let reading = reading(after: 0, at: now)
        return .created(Limiter(reference: ReferenceLimiter(configuration, at: .generated(reading)), reading: reading))
    }

    /// The Spec's answer at the reading; a refusal whose retry, counted by a caller up to R − 1 ns
    /// later, could pass the end of the timeline is `neverAllowed` (CORE-17, 2).
    mutating func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        limiter.reading = reading(after: limiter.reading, at: now)
        let answer = limiter.reference.apply(event, at: .generated(limiter.reading))
        guard case .rejected(let wait) = answer, limiter.reading > Int64.max - (resolution - 1) - wait else {
            return answer
        }
        return .neverAllowed
    }
}

extension RateLimitInstant {
    fileprivate static func generated(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }
}

/// `a + b`, saturated at `Int64.max`.
private func sum(_ a: Int64, _ b: Int64) -> Int64 {
    let (total, overflow) = a.addingReportingOverflow(b)
    return overflow ? .max : total
}

@Suite("Coarse clocks (Spec/Core.md CORE-17)")
struct CoarseClockTests {
    static let resolutions: [Int64] = [1, 7, 1_000]

    @Test(
        "CORE-17 an adapter on a clock up to R late answers as the Spec at its readings, never admits what the present refuses from the same state, and is less than R late",
        arguments: resolutions)
    func adapterOnALateClock(resolution: Int64) async {
        await offThePool { adapterOnALateClockOnThread(resolution: resolution) }
    }

    private func adapterOnALateClockOnThread(resolution: Int64) {
        let name = "adapterOnALateClock"
        let profile = ImplementationProfile.coarseClock(resolutionNanoseconds: resolution)
        for (index, strategy) in AnyRateLimitStrategy.identifiers.enumerated() {
            for trace in 0..<12 {
                var rng = TestSeed.generator(name, trace: Int(resolution) * 100 + index * 12 + trace)
                let replay = TestSeed.replay(name, trace: Int(resolution) * 100 + index * 12 + trace)
                guard let drawn = TraceGenerator.trace(strategy, steps: 80, profile: profile, using: &rng) else {
                    continue
                }
                let manual = ManualClock()
                let clock = LaggingClock(manual, resolution: resolution)
                guard let limiter = try? LockedRateLimiter(drawn.configuration, clock: clock) else { continue }
                // GCRA traces drive the lock-free adapter too, until a reconfigure (it has none).
                var gcra: GCRA?
                if case .gcra(let configuration) = drawn.configuration { gcra = configuration }
                let atomic = gcra.map { AtomicGCRA($0, clock: clock) }
                var model = RateLimiter(drawn.configuration, at: .origin)
                var atomicModel = gcra.map { RateLimiter($0, at: .origin) }
                for (step, traced) in drawn.steps.enumerated() {
                    let now = max(traced.now, 0)
                    manual.set(to: ManualClock.Instant(offset: .nanoseconds(now)))
                    clock.setLag(rng.int(in: 0...resolution - 1))
                    let reading = clock.now.offset.components
                    let read = RateLimitInstant.generated(
                        reading.seconds * 1_000_000_000 + reading.attoseconds / 1_000_000_000)
                    let context =
                        "\(strategy) \(drawn.configuration) step \(step) \(traced.event) at \(now) ns, read at \(read.nanoseconds) ns"
                    let before = model
                    switch traced.event {
                    case .acquire(let permits):
                        let got = limiter.tryAcquire(permits)
                        let expected = WaitOutcome(model.step(.acquire(permits), at: read))
                        guard
                            holds(
                                got == expected, "CORE-17 \(context): \(got), the Spec at the reading \(expected)",
                                replay: replay)
                        else { return }
                        guard permits >= 1,
                            holds(
                                Self.conservative(
                                    got, exact: before.availability(of: permits, at: .generated(now)), at: now,
                                    resolution: resolution),
                                "CORE-17 \(context): \(got) where the present answers \(before.availability(of: permits, at: .generated(now)))",
                                replay: replay)
                        else { if permits >= 1 { return } else { continue } }
                        if let atomic, var gcraModel = atomicModel {
                            let answer = atomic.tryAcquire(permits)
                            let spec = gcraModel.step(.acquire(permits), at: read)
                            atomicModel = gcraModel
                            guard
                                holds(
                                    answer == spec, "CORE-17 atomic \(context): \(answer), the Spec \(spec)",
                                    replay: replay)
                            else { return }
                        }
                    case .release(let permits):
                        guard
                            holds(
                                limiter.release(permits) == model.step(.release(permits), at: read),
                                "CORE-17 \(context)", replay: replay)
                        else { return }
                    case .reset:
                        guard
                            holds(limiter.reset() == model.step(.reset, at: read), "CORE-17 \(context)", replay: replay)
                        else { return }
                        if let atomic, var gcraModel = atomicModel {
                            _ = atomic.reset()
                            _ = gcraModel.step(.reset, at: read)
                            atomicModel = gcraModel
                        }
                    case .reconfigure(let configuration):
                        atomicModel = nil
                        guard
                            holds(
                                limiter.reconfigure(configuration) == model.step(.reconfigure(configuration), at: read),
                                "CORE-17 \(context)", replay: replay)
                        else { return }
                    }
                }
            }
        }
    }

    /// CORE-17, 1 and 2: `got`, decided at a reading up to R − 1 ns before `now`, against `exact`,
    /// the answer at `now` from the same state.
    static func conservative(_ got: WaitOutcome, exact: RateLimitResult, at now: Int64, resolution: Int64) -> Bool {
        /// When the present admits the acquire, and when the admitted request starts.
        let (exactAdmission, exactStart): (Int64?, Int64?) =
            switch exact {
            case .allowed: (now, now)
            case .delayed(let wait, _): (now, sum(now, wait))
            case .rejected(let wait): (sum(now, wait), nil)
            case .rejectedUntilRelease, .neverAllowed, .invalid: (nil, nil)
            }
        /// Not before the present's instant, and less than R after it (CORE-17, 2).
        func late(_ instant: Int64, after exact: Int64?) -> Bool {
            guard let exact else { return false }
            return instant >= exact && (instant == .max || instant - exact < resolution)
        }
        switch got {
        case .granted(.allowed): return exact.isAdmitted && late(now, after: exactStart)  // CORE-17, 1
        case .granted(.delayed(let wait, _)): return exact.isAdmitted && late(sum(now, wait), after: exactStart)
        case .rejected(.limited(let wait)): return late(sum(now, wait), after: exactAdmission)
        case .granted, .rejected, .bypassed, .timedOut, .cancelled, .closed:
            return WaitOutcome(exact) == got  // the same refusal, or nothing to do with time
        }
    }

    @Test(
        "CORE-17 CONF-5 CONF-6 on a clock up to R late, TB, GCRA, PL, LBM, SWL, LBQ and CL conform within T = 2R (the coarse clock profile; its refusals within T are no sustained refusal)",
        arguments: resolutions)
    func lateClockConformsWithinTheResolution(resolution: Int64) async throws {
        try await offThePool {
            var subject = CoarseClockSubject(
                resolution: resolution,
                rng: TestSeed.generator("lateClockConformsWithinTheResolution", trace: Int(resolution)))
            let report = try ConformanceSuite.run(
                &subject, options: ConformanceOptions(randomTraces: 30, randomSteps: 100, seed: TestSeed.base))
            for strategy in report.strategies where subject.strategies.contains(strategy.strategy) {
                // Near the end of the timeline a late reading moves admission instants across it
                // (CORE-17, 2): cases whose burst spans an eighth of the timeline are not judged.
                let failed = strategy.ran.filter { $0.level == .failed && !Self.reachesTheEnd($0.trace?.configuration) }
                let finding = failed.first.flatMap { outcome in
                    outcome.failure.map {
                        "\(outcome.id) step \($0.step) at \($0.now) ns \($0.event): expected \($0.expected), got \($0.got): \($0.explanation ?? "")"
                    }
                }
                #expect(
                    failed.isEmpty && strategy.ran.count > 10,
                    "\(strategy.strategy) within T = \(report.strategies.first?.toleranceNanoseconds ?? 0) ns: \(finding ?? strategy.stoppedBecause ?? "")\n\(TestSeed.replay("lateClockConformsWithinTheResolution", trace: Int(resolution)))"
                )
            }
        }
    }

    /// Whether a burst of `configuration` (its maximum permits, or the burst of a limiter that
    /// admits any size, one characteristic span each) spans an eighth of the timeline or more.
    static func reachesTheEnd(_ configuration: AnyRateLimitStrategy?) -> Bool {
        guard let configuration else { return false }
        let span = TraceGenerator.characteristicNanoseconds(configuration)
        let permits =
            configuration.typed(as: PayLater.self)?.burst ?? configuration.typed(as: WarmUp.self)?.burst
            ?? configuration.maximumPermits
        let (burst, overflow) = span.multipliedReportingOverflow(by: min(permits, Int64.max - 1) + 1)
        return overflow || burst > Int64.max / 8
    }

    @Test(
        "CORE-17 a fixed window on a late clock admits twice in one true window: read before its boundary, made after it"
    )
    func windowsKeepTheirLimitsOnTheirOwnTimelineOnly() throws {
        let window = try FixedWindow(limit: 1, windowNanoseconds: 100)
        var late = RateLimiter(window, at: .origin)
        // Made at 101 ns but read at 99, then made and read at 102: both admitted, one per window read.
        #expect(late.acquire(1, at: .generated(99)) == .allowed(remaining: 0))
        #expect(late.acquire(1, at: .generated(102)) == .allowed(remaining: 0))
        // At the true instants, the second is refused until the next window.
        var exact = RateLimiter(window, at: .origin)
        #expect(exact.acquire(1, at: .generated(101)) == .allowed(remaining: 0))
        #expect(exact.acquire(1, at: .generated(102)) == .rejected(retryAfterNanoseconds: 98))
    }

    @Test("CORE-17 the coarse clock reads behind the present by less than its resolution, never backwards")
    func coarseClockReadsBehindThePresent() {
        let resolution = CoarseMonotonicClock.resolution
        #expect(resolution > .zero)
        #expect(CoarseMonotonicClock().minimumResolution == resolution)
        var previous = CoarseMonotonicClock().now
        for _ in 0..<10_000 {
            let reading = CoarseMonotonicClock().now
            #expect(reading >= previous)
            previous = reading
        }
        #if os(Linux)
            // Against CLOCK_MONOTONIC, which it samples: behind it, and by less than a resolution
            // (two, for a tick that comes late on a loaded machine).
            func exact() -> Int64 {
                var time = timespec()
                clock_gettime(CLOCK_MONOTONIC, &time)
                return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
            }
            let before = exact()
            let coarse = CoarseMonotonicClock().now.nanoseconds
            let after = exact()
            #expect(coarse <= after)
            #expect(
                before - coarse < 2
                    * (resolution.components.attoseconds / 1_000_000_000 + resolution.components.seconds * 1_000_000_000)
            )
        #endif
    }

    @Test("CORE-17 sleeping on the coarse clock until a reading it has passed returns at once")
    func sleepingUntilThePastReturns() async throws {
        let clock = CoarseMonotonicClock()
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)))
        try await clock.sleep(until: clock.now)
    }
}
