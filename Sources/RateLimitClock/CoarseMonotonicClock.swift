// A coarse monotonic clock for the adapters (Spec/Core.md CORE-17): the operating system's clock
// as of its last tick, read without the time-stamp counter.
//
// Linux's CLOCK_MONOTONIC_COARSE and Darwin's CLOCK_UPTIME_RAW_APPROX return the time the kernel
// recorded at its latest timer tick: a few nanoseconds to read, where ContinuousClock reads the
// counter and scales it (23 to 43 ns here, Performance.md "Coarse clock"). A reading lags the
// present by less than the clock's resolution, which the system reports (clock_getres) and
// `resolution` exposes. CORE-17 shows what a limiter on it decides: never more than on the exact
// clock from the same state, and a retry-after at most one resolution late.
//
// Like SuspendingClock, it does not advance while the system sleeps.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A monotonic clock read at the operating system's last timer tick: cheap to read, and behind
/// the present by less than ``resolution`` (Linux `CLOCK_MONOTONIC_COARSE`, Darwin
/// `CLOCK_UPTIME_RAW_APPROX`). It does not advance while the system sleeps.
///
/// Give it to an adapter to make each decision cheaper; a limiter on it never admits more than on
/// an exact clock from the same state, and a refusal's wait can be up to one resolution longer
/// (Spec/Core.md, CORE-17).
///
/// ```swift
/// let limiter = try LockedRateLimiter(TokenBucket(capacity: 10, permitsPerPeriod: 10, period: .seconds(1)),
///                                     clock: CoarseMonotonicClock())
/// ```
public struct CoarseMonotonicClock: Clock, Sendable {
    /// A reading of the coarse clock: nanoseconds since an unspecified start (the system's boot).
    public struct Instant: InstantProtocol, Hashable, Sendable {
        @usableFromInline package let nanoseconds: Int64

        @inlinable package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

        public func advanced(by duration: Duration) -> Instant {
            let (seconds, attoseconds) = duration.components
            let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let offset =
                overflow ? (seconds < 0 ? Int64.min : .max) : scaled.addingSaturated(attoseconds / 1_000_000_000)
            return Instant(nanoseconds: nanoseconds.addingSaturated(offset))
        }

        public func duration(to other: Instant) -> Duration {
            let (difference, overflow) = other.nanoseconds.subtractingReportingOverflow(nanoseconds)
            guard overflow else { return .nanoseconds(difference) }
            return .nanoseconds(other.nanoseconds) - .nanoseconds(nanoseconds)
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    }

    /// The coarse clock.
    public init() {}

    /// The last tick's time.
    @inlinable public var now: Instant { Instant(nanoseconds: Self.readNanoseconds()) }

    /// How far a reading can lag the present: the clock's resolution as the system reports it
    /// (`clock_getres`), read once. 1 to 10 ms on Linux (the kernel's tick, `CONFIG_HZ`).
    public static let resolution: Duration = .nanoseconds(resolutionNanoseconds())

    /// ``resolution``.
    public var minimumResolution: Duration { Self.resolution }

    /// Sleeps until the clock reads `deadline` or later. It sleeps on the system's exact clock
    /// for the time left, then, while the last tick is still before `deadline`, for slices of a
    /// resolution, so it returns on the first tick at or after `deadline`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        var left = now.duration(to: deadline)
        guard left > .zero else { return }
        try await SuspendingClock().sleep(for: left, tolerance: tolerance)
        left = now.duration(to: deadline)
        while left > .zero {  // the tick that reaches `deadline` is less than a resolution away
            try await SuspendingClock().sleep(for: max(left, Self.resolution / 16))
            left = now.duration(to: deadline)
        }
    }

    /// The last tick's time in nanoseconds.
    @inlinable @inline(__always)
    package static func readNanoseconds() -> Int64 {
        #if os(Linux) || os(Android)
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
            return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        #elseif canImport(Darwin)
            return Int64(bitPattern: clock_gettime_nsec_np(CLOCK_UPTIME_RAW_APPROX))
        #else
            return exactNanoseconds()
        #endif
    }

    /// Where the system has no coarse clock: the exact suspending clock, from the first reading.
    @usableFromInline static func exactNanoseconds() -> Int64 {
        let (seconds, attoseconds) = exactStart.duration(to: .now).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    private static let exactStart = SuspendingClock.now

    private static func resolutionNanoseconds() -> Int64 {
        #if os(Linux) || os(Android) || canImport(Darwin)
            var resolution = timespec()
            #if canImport(Darwin)
                let clock = CLOCK_UPTIME_RAW_APPROX
            #else
                let clock = CLOCK_MONOTONIC_COARSE
            #endif
            guard clock_getres(clock, &resolution) == 0 else { return 1 }
            return max(1, Int64(resolution.tv_sec) * 1_000_000_000 + Int64(resolution.tv_nsec))
        #else
            return 1
        #endif
    }
}

extension Int64 {
    /// `self + other`, clamped to the range.
    fileprivate func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }
}
