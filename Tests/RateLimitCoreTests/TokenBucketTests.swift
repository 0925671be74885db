import Testing

@testable import RateLimitCore

/// One token per 10 ns, three at most: the bucket most stories use.
private let threePerTen = try! TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10)

@Suite("Token bucket, continuous refill (Spec/TokenBucket.md)")
struct TokenBucketTests {
    @Test("TB-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "capacity", .mustBePositive) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 0, permitsPerPeriod: 1, periodNanoseconds: 1)
        }
        expectRefused(field: "permitsPerPeriod", .mustBePositive) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: -3, periodNanoseconds: 1)
        }
        expectRefused(field: "periodNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 0)
        }
        expectRefused(field: "initialTokens", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 1, initialTokens: -1)
        }
        expectRefused(field: "initialTokens", .exceedsMaximum(3)) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 1, initialTokens: 4)
        }
        // Refilling Int64.max tokens at 1 per 2 ns would take 2 × Int64.max ns.
        expectRefused(field: "periodNanoseconds", .exceedsMaximum(1)) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: .max, permitsPerPeriod: 1, periodNanoseconds: 2)
        }
        expectRefused(field: "periodNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: .max)
        }
        expectRefused(field: "periodNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: .seconds(1) / 3_000_000_000)
        }
        expectRefused(field: "periodNanoseconds", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: .seconds(-1))
        }
    }

    @Test("TB-1 extreme but valid: a billion tokens per nanosecond, a year per period")
    func extremeConfigurations() throws {
        let fast = try TokenBucket(capacity: 1_000_000_000, permitsPerPeriod: 1_000_000_000, periodNanoseconds: 1)
        story(
            fast,
            [
                (0, .acquire(1_000_000_000), .allowed(remaining: 0)),
                (1, .acquire(1_000_000_000), .allowed(remaining: 0)),
                (1, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
            ])
        let year: Int64 = 31_557_600_000_000_000
        let slow = try TokenBucket(capacity: 2, permitsPerPeriod: 1, period: .nanoseconds(year))
        story(
            slow,
            [
                (0, .acquire(2), .allowed(remaining: 0)),
                (0, .acquire(1), .rejected(retryAfterNanoseconds: year)),
                (year - 1, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (year, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("TB-2 a new bucket holds its initial tokens and records its creation instant")
    func initialState() throws {
        let bucket = try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 1)
        #expect(bucket.initialState(at: t(5)) == TokenBucket.State(tokens: 1, fraction: 0, lastNanoseconds: 5))
        #expect(threePerTen.initialState(at: t(0)).tokens == 3)
        #expect(MemoryLayout<TokenBucket.State>.size == 24)
    }

    @Test("TB-3 a token arrives exactly one period after the bucket emptied (one before, at, one after)")
    func refillEdge() {
        story(
            threePerTen,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(0), .allowed(remaining: 0)),
                (10, .acquire(0), .allowed(remaining: 1)),
                (11, .acquire(0), .allowed(remaining: 1)),
                (19, .acquire(0), .allowed(remaining: 1)),
                (20, .acquire(0), .allowed(remaining: 2)),
                (1_000, .acquire(0), .allowed(remaining: 3)),
            ])
    }

    @Test("TB-3 TB-5 fractions of a token carry over exactly; remaining counts whole tokens only")
    func fractionsCarry() throws {
        // 3 tokens per 10 ns = 0.3 per ns, starting empty.
        let bucket = try TokenBucket(capacity: 10, permitsPerPeriod: 3, periodNanoseconds: 10, initialTokens: 0)
        story(
            bucket,
            [
                (3, .acquire(1), .rejected(retryAfterNanoseconds: 1)),  // 0.9 tokens
                (4, .acquire(1), .allowed(remaining: 0)),  // 1.2 tokens, 0.2 left
                (10, .acquire(2), .allowed(remaining: 0)),  // 0.2 + 1.8 = 2.0
                (13, .acquire(0), .allowed(remaining: 0)),  // 0.9
                (14, .acquire(0), .allowed(remaining: 1)),  // 1.2
            ])
    }

    @Test("TB-4 a weighted acquire takes all its permits or none")
    func weighted() throws {
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 1, periodNanoseconds: 10)
        story(
            bucket,
            [
                (0, .acquire(3), .allowed(remaining: 2)),
                (0, .acquire(3), .rejected(retryAfterNanoseconds: 10)),
                (0, .acquire(2), .allowed(remaining: 0)),
            ])
    }

    @Test("TB-6 retry-after is rounded up to the nanosecond the tokens exist (not down, as Bucket4j's greedy refill)")
    func retryAfterRoundsUp() throws {
        // 0.3 tokens per ns from empty: 2 tokens need 20 units at 3 per ns, ⌈20/3⌉ = 7 ns.
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 3, periodNanoseconds: 10, initialTokens: 0)
        story(
            bucket,
            [
                (0, .acquire(2), .rejected(retryAfterNanoseconds: 7)),
                (6, .acquire(2), .rejected(retryAfterNanoseconds: 1)),  // 1.8 tokens
                (7, .acquire(2), .allowed(remaining: 0)),  // 2.1 tokens
            ])
    }

    @Test("TB-6 with an earlier now the retry-after is measured from that now")
    func retryAfterFromEarlierNow() throws {
        let one = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 10)
        story(
            one,
            [
                (100, .acquire(1), .allowed(remaining: 0)),
                (95, .acquire(1), .rejected(retryAfterNanoseconds: 15)),  // admitted at 110
                (109, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (110, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("TB-7 more than capacity, or an admission past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let one = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 10)
        story(threePerTen, [(0, .acquire(4), .neverAllowed), (1_000_000, .acquire(4), .neverAllowed)])
        story(
            one, createdAt: .max - 10,
            [
                (.max - 10, .acquire(1), .allowed(remaining: 0)),
                (.max - 10, .acquire(1), .rejected(retryAfterNanoseconds: 10)),  // admitted at Int64.max exactly
                (.max, .acquire(1), .allowed(remaining: 0)),
                (.max, .acquire(1), .neverAllowed),  // would be admitted at Int64.max + 10
            ])
    }

    @Test("TB-8 acquire(0) reads the quota; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            threePerTen,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (0, .acquire(0), .allowed(remaining: 2)),
                (0, .release(1), .invalid(.releaseNotSupported)),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
                (0, .acquire(2), .allowed(remaining: 0)),
            ])
    }

    @Test("TB-9 reset restores the initial tokens, not a full bucket, at the latest instant")
    func reset() throws {
        let bucket = try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 1)
        story(
            bucket,
            [
                (0, .acquire(1), .allowed(remaining: 0)),
                (50, .reset, .allowed(remaining: 1)),
                (40, .acquire(1), .allowed(remaining: 0)),  // evaluated at 50
                (59, .acquire(1), .rejected(retryAfterNanoseconds: 1)),  // refill counts from 50
                (60, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("TB-10 reconfigure keeps the tokens, capped at the new capacity")
    func reconfigureKeepsTokens() throws {
        let ten = try TokenBucket(capacity: 10, permitsPerPeriod: 1, periodNanoseconds: 10)
        let four = try TokenBucket(capacity: 4, permitsPerPeriod: 1, periodNanoseconds: 20)
        story(
            ten,
            [
                (0, .acquire(4), .allowed(remaining: 6)),
                (5, .reconfigure(four), .allowed(remaining: 4)),  // 6.5 tokens, capped at 4
                (5, .reconfigure(ten), .allowed(remaining: 4)),  // not refilled to 10
                (14, .acquire(0), .allowed(remaining: 4)),
                (15, .acquire(0), .allowed(remaining: 5)),
            ])
    }

    @Test("TB-10 reconfigure keeps the fraction of a token, rounded down to the new units")
    func reconfigureKeepsFraction() throws {
        let fast = try TokenBucket(capacity: 10, permitsPerPeriod: 1, periodNanoseconds: 10)
        let slow = try TokenBucket(capacity: 10, permitsPerPeriod: 1, periodNanoseconds: 100)
        let thirds = try TokenBucket(capacity: 10, permitsPerPeriod: 1, periodNanoseconds: 3)
        let halves = try TokenBucket(capacity: 10, permitsPerPeriod: 1, periodNanoseconds: 2)
        story(
            fast,
            [
                (0, .acquire(10), .allowed(remaining: 0)),
                (7, .reconfigure(slow), .allowed(remaining: 0)),  // 0.7 token = 70 of 100 units
                (7, .acquire(1), .rejected(retryAfterNanoseconds: 30)),
                (37, .acquire(1), .allowed(remaining: 0)),
            ])
        story(
            thirds,
            [
                (0, .acquire(10), .allowed(remaining: 0)),
                (2, .reconfigure(halves), .allowed(remaining: 0)),  // 2/3 token rounds down to 1/2
                (2, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
            ])
    }

    @Test("TB-11 no interval [t1, t2] admits more than capacity + rate × (t2 − t1)")
    func safetyBound() {
        forEachAdmission(TokenBucket.self, "safetyBound") { history, bucket, step in
            intervalBoundHolds(history, replay: step.replay, describe: step.description) { lo, hi in
                floorMultiplyDivide(bucket.permitsPerPeriod, hi - lo, bucket.periodNanoseconds)
                    .flatMap { $0 > Int64.max - bucket.capacity ? nil : $0 + bucket.capacity }
            }
        }
    }

    @Test("TB-12 going back in time does not re-grant a token (the trace of Go's TestLimiterJumpBackwards)")
    func goJumpBackwards() throws {
        // Go: NewLimiter(10, 3), t1 = t0 + 100 ms: {t1,1,true} {t0,1,true} {t0,1,true} {t0,1,false} {t1,1,true}.
        let goLike = try TokenBucket(capacity: 3, permitsPerPeriod: 10, period: .seconds(1))
        let t0: Int64 = 1_000_000_000
        let t1: Int64 = 1_100_000_000
        story(
            goLike,
            [
                (t1, .acquire(1), .allowed(remaining: 2)),
                (t0, .acquire(1), .allowed(remaining: 1)),
                (t0, .acquire(1), .allowed(remaining: 0)),
                (t0, .acquire(1), .rejected(retryAfterNanoseconds: 200_000_000)),  // a token at t1 + 100 ms
                (t1, .acquire(1), .rejected(retryAfterNanoseconds: 100_000_000)),  // Go grants here
            ])
    }
}
