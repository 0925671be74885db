import Testing

@testable import RateLimitCore

@Suite("Core types (Spec/Core.md)")
struct CoreTests {
    @Test("CORE-1 instants are 0 ... Int64.max; a negative one is refused naming now")
    func instants() throws {
        #expect(try RateLimitInstant(nanoseconds: 0) == .origin)
        #expect(try RateLimitInstant(nanoseconds: .max) == .end)
        expectRefused(field: "now", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try RateLimitInstant(nanoseconds: -1)
        }
        #expect(RateLimitInstant.end.advanced(byNanoseconds: 1) == nil)
        #expect(RateLimitInstant.origin.advanced(byNanoseconds: -1) == nil)
        #expect(t(10).advanced(byNanoseconds: -10) == .origin)
        #expect(RateLimitInstant.end.nanoseconds(since: .origin) == .max)
    }

    @Test("CORE-3 a Duration converts only when it is a whole, non-negative number of nanoseconds")
    func durations() throws {
        #expect(try Duration.seconds(2).wholeNanoseconds(field: "x") == 2_000_000_000)
        #expect(try Duration.nanoseconds(Int64.max).wholeNanoseconds(field: "x") == .max)
        expectRefused(field: "x", .exceedsMaximum(.max)) { () throws(RateLimitInputError) in
            try (Duration.nanoseconds(Int64.max) + .nanoseconds(1)).wholeNanoseconds(field: "x")
        }
        // 2^64 seconds: reading Duration.components would trap; the check comes first.
        expectRefused(field: "x", .exceedsMaximum(.max)) { () throws(RateLimitInputError) in
            try (Duration.seconds(Int64.max) + .seconds(Int64.max)).wholeNanoseconds(field: "x")
        }
        expectRefused(field: "x", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try (Duration.seconds(-Int64.max) - .seconds(Int64.max)).wholeNanoseconds(field: "x")
        }
        expectRefused(field: "periodNanoseconds", .exceedsMaximum(.max)) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: .seconds(Int64.max) + .seconds(Int64.max))
        }
        expectRefused(field: "x", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try Duration.milliseconds(1.5e-6).wholeNanoseconds(field: "x")
        }
        expectRefused(field: "x", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try Duration.nanoseconds(-1).wholeNanoseconds(field: "x")
        }
    }

    @Test("CORE-2 128-bit products, quotients and roundings are exact")
    func wideArithmetic() {
        let product = Wide.product(Int64.max, Int64.max)  // (2^63 − 1)^2 = 2^126 − 2^64 + 1
        #expect(product == Wide(high: 0x3FFF_FFFF_FFFF_FFFF, low: 1))
        #expect(product.dividedRoundingDown(by: UInt64(Int64.max)) == Wide(UInt64(Int64.max)))
        #expect(
            Wide(high: 1, low: 0).quotientAndRemainder(dividingBy: 3) == (Wide(6_148_914_691_236_517_205 as UInt64), 1))
        #expect(Wide(7 as UInt64).dividedRoundingUp(by: 2) == Wide(4 as UInt64))
        #expect(Wide(8 as UInt64).dividedRoundingUp(by: 2) == Wide(4 as UInt64))
        #expect(Wide(high: UInt64.max, low: UInt64.max).adding(Wide(1 as UInt64)) == nil)
        #expect(Wide(high: 0, low: UInt64.max).adding(Int64(1)) == Wide(high: 1, low: 0))
        #expect(Wide(high: 1, low: 0).subtracting(Wide(1 as UInt64)) == Wide(UInt64.max))
        #expect(Wide(3 as UInt64).subtractingSaturated(Wide(5 as UInt64)) == .zero)
        #expect(Wide(UInt64(Int64.max)).int64 == .max)
        #expect(Wide(UInt64(Int64.max) + 1).int64 == nil)
    }

    @Test("CORE-7 an admission instant past Int64.max is never allowed; at Int64.max it is a retry-after")
    func admissionPastTheEnd() {
        #expect(rejection(admittedAt: Wide(UInt64(Int64.max)), now: t(.max - 3)) == .rejected(retryAfterNanoseconds: 3))
        #expect(rejection(admittedAt: Wide(UInt64(Int64.max) + 1), now: t(.max - 3)) == .neverAllowed)
        #expect(rejection(admittedAt: Wide(high: 1, low: 0), now: t(0)) == .neverAllowed)
    }

    @Test("CORE-11 CORE-12 CORE-13 RateLimiter's release, reset and reconfigure answer as step does")
    func namedEvents() throws {
        let limit = try ConcurrencyLimiter(limit: 3)
        var named = RateLimiter(limit, at: .origin)
        var stepped = named
        let at = try RateLimitInstant(nanoseconds: 5)
        #expect(named.acquire(2, at: at) == stepped.step(.acquire(2), at: at))
        #expect(named.release(1, at: at) == stepped.step(.release(1), at: at))
        #expect(named.reconfigure(to: try ConcurrencyLimiter(limit: 1), at: at) == .allowed(remaining: 0))
        _ = stepped.step(.reconfigure(try ConcurrencyLimiter(limit: 1)), at: at)
        #expect(named == stepped && named.strategy.limit == 1)
        #expect(named.reset(at: at) == stepped.step(.reset, at: at) && named == stepped)
        var bucket = RateLimiter(try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 10), at: .origin)
        guard case .invalid = bucket.release(1, at: at) else {
            return #expect(Bool(false), "a token bucket holds no permits")
        }
    }

    @Test("CORE-5 results report admission, remaining and retry-after")
    func resultAccessors() {
        #expect(RateLimitResult.allowed(remaining: 2).isAdmitted)
        #expect(RateLimitResult.delayed(waitNanoseconds: 5, remaining: 1).remaining == 1)
        #expect(!RateLimitResult.rejected(retryAfterNanoseconds: 7).isAdmitted)
        #expect(RateLimitResult.rejected(retryAfterNanoseconds: 7).retryAfter == .nanoseconds(7))
        #expect(RateLimitResult.neverAllowed.remaining == nil)
        #expect(RateLimitInputError.negativePermits(-2).description == "permits = -2 must not be negative")
    }

    @Test("CORE-13 a limiter takes over the new configuration on reconfigure")
    func limiterReconfigure() throws {
        let small = try FixedWindow(limit: 1, windowNanoseconds: 10)
        let large = try FixedWindow(limit: 5, windowNanoseconds: 10)
        var limiter = RateLimiter(small, at: .origin)
        #expect(limiter.step(.reconfigure(large), at: t(1)) == .allowed(remaining: 5))
        #expect(limiter.strategy == large)
        #expect(limiter.acquire(5, at: t(2)) == .allowed(remaining: 0))
        #expect(limiter.remaining(at: t(10)) == 5)
    }

    @Test("The core's documented example compiles and answers as it says")
    func readmeExample() throws {
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 10, period: .seconds(1))
        var limiter = RateLimiter(bucket, at: .origin)
        let now = try RateLimitInstant(nanoseconds: 250_000_000)
        #expect(limiter.acquire(3, at: now) == .allowed(remaining: 2))
        #expect(limiter.acquire(3, at: now) == .rejected(retryAfterNanoseconds: 100_000_000))
        #expect(limiter.acquire(6, at: now) == .neverAllowed)
        let (next, result) = bucket.step(limiter.state, .acquire(1), at: now)
        #expect(result == .allowed(remaining: 1))
        #expect(next.tokens == 1)
    }
}
