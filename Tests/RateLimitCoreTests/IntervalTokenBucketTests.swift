import Testing

@testable import RateLimitCore

/// One token at every multiple of 10 ns, three at most.
private let oneEveryTen = try! IntervalTokenBucket(capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 10)

@Suite("Token bucket, interval refill (Spec/IntervalTokenBucket.md)")
struct IntervalTokenBucketTests {
    @Test("TBI-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "capacity", .mustBePositive) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 0, tokensPerInterval: 1, intervalNanoseconds: 1)
        }
        expectRefused(field: "tokensPerInterval", .mustBePositive) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 1, tokensPerInterval: 0, intervalNanoseconds: 1)
        }
        expectRefused(field: "intervalNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 1, tokensPerInterval: 1, intervalNanoseconds: -5)
        }
        expectRefused(field: "initialTokens", .exceedsMaximum(3)) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 1, initialTokens: 4)
        }
        expectRefused(field: "initialTokens", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 1, initialTokens: -1)
        }
        // 10 tokens by 3 need ⌈10/3⌉ = 4 boundaries: the interval may be at most ⌊Int64.max / 4⌋.
        expectRefused(field: "intervalNanoseconds", .exceedsMaximum(2_305_843_009_213_693_951)) {
            () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 10, tokensPerInterval: 3, intervalNanoseconds: 2_305_843_009_213_693_952)
        }
        #expect(throws: Never.self) {
            try IntervalTokenBucket(capacity: 10, tokensPerInterval: 3, intervalNanoseconds: 2_305_843_009_213_693_951)
        }
    }

    @Test("TBI-2 a new bucket holds its initial tokens; the state is 16 bytes")
    func initialState() throws {
        let empty = try IntervalTokenBucket(
            capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 10, initialTokens: 0)
        #expect(empty.initialState(at: t(7)) == IntervalTokenBucket.State(tokens: 0, lastNanoseconds: 7))
        #expect(MemoryLayout<IntervalTokenBucket.State>.size == 16)
    }

    @Test("TBI-3 TBI-5 tokens arrive exactly at multiples of the interval (one before, at, one after)")
    func boundaryEdges() {
        story(
            oneEveryTen,
            [
                (5, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(0), .allowed(remaining: 0)),
                (10, .acquire(0), .allowed(remaining: 1)),
                (11, .acquire(0), .allowed(remaining: 1)),
                (19, .acquire(0), .allowed(remaining: 1)),
                (20, .acquire(0), .allowed(remaining: 2)),
                (35, .acquire(0), .allowed(remaining: 3)),  // three boundaries since 5, capped at 3
            ])
    }

    @Test("TBI-3 the grid is aligned to the origin, not to the creation instant")
    func alignedToOrigin() throws {
        let empty = try IntervalTokenBucket(
            capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 10, initialTokens: 0)
        story(
            empty, createdAt: 5,
            [
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(1), .allowed(remaining: 0)),  // only 5 ns after creation
            ])
    }

    @Test("TBI-3 each boundary adds tokensPerInterval, capped at capacity")
    func lumps() throws {
        let lumpy = try IntervalTokenBucket(
            capacity: 10, tokensPerInterval: 4, intervalNanoseconds: 10, initialTokens: 0)
        story(
            lumpy,
            [
                (10, .acquire(0), .allowed(remaining: 4)),
                (20, .acquire(0), .allowed(remaining: 8)),
                (30, .acquire(0), .allowed(remaining: 10)),
            ])
    }

    @Test("TBI-4 TBI-6 a weighted acquire waits for the boundary that brings enough tokens")
    func retryAfterAtBoundary() throws {
        let lumpy = try IntervalTokenBucket(
            capacity: 10, tokensPerInterval: 4, intervalNanoseconds: 10, initialTokens: 0)
        story(
            lumpy,
            [
                (3, .acquire(6), .rejected(retryAfterNanoseconds: 17)),  // two boundaries: 20
                (19, .acquire(6), .rejected(retryAfterNanoseconds: 1)),  // 4 tokens since 10
                (20, .acquire(6), .allowed(remaining: 2)),
            ])
    }

    @Test("TBI-7 more than capacity, or a boundary past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let one = try IntervalTokenBucket(capacity: 1, tokensPerInterval: 1, intervalNanoseconds: 10)
        story(oneEveryTen, [(0, .acquire(4), .neverAllowed)])
        // Int64.max ends in ...807: the last boundary is ...800 = Int64.max − 7.
        story(
            one, createdAt: .max - 17,
            [
                (.max - 17, .acquire(1), .allowed(remaining: 0)),
                (.max - 17, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
                (.max - 7, .acquire(1), .allowed(remaining: 0)),
                (.max - 3, .acquire(1), .neverAllowed),
            ])
    }

    @Test("TBI-8 acquire(0) reads the quota; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            oneEveryTen,
            [
                (0, .acquire(0), .allowed(remaining: 3)),
                (0, .release(2), .invalid(.releaseNotSupported)),
                (0, .acquire(-7), .invalid(.negativePermits(-7))),
                (0, .acquire(3), .allowed(remaining: 0)),
            ])
    }

    @Test("TBI-9 reset restores the initial tokens and keeps the grid")
    func reset() throws {
        let empty = try IntervalTokenBucket(
            capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 10, initialTokens: 0)
        story(
            empty,
            [
                (10, .acquire(1), .allowed(remaining: 0)),
                (15, .reset, .allowed(remaining: 0)),
                (19, .acquire(0), .allowed(remaining: 0)),
                (20, .acquire(0), .allowed(remaining: 1)),
            ])
    }

    @Test("TBI-10 reconfigure keeps tokens up to the new capacity; later boundaries follow the new grid")
    func reconfigure() throws {
        let ten = try IntervalTokenBucket(capacity: 10, tokensPerInterval: 1, intervalNanoseconds: 10)
        let five = try IntervalTokenBucket(capacity: 5, tokensPerInterval: 2, intervalNanoseconds: 7)
        story(
            ten,
            [
                (0, .acquire(2), .allowed(remaining: 8)),
                (5, .reconfigure(five), .allowed(remaining: 5)),
                (5, .acquire(5), .allowed(remaining: 0)),
                (6, .acquire(0), .allowed(remaining: 0)),
                (7, .acquire(0), .allowed(remaining: 2)),
                (14, .acquire(0), .allowed(remaining: 4)),
            ])
    }

    @Test("TBI-11 no interval admits more than capacity + tokensPerInterval × boundaries crossed")
    func safetyBound() {
        forEachAdmission(IntervalTokenBucket.self, "safetyBound") { history, bucket, step in
            intervalBoundHolds(history, replay: step.replay, describe: step.description) { lo, hi in
                let boundaries = hi / bucket.intervalNanoseconds - lo / bucket.intervalNanoseconds
                return floorMultiplyDivide(boundaries, bucket.tokensPerInterval, 1)
                    .flatMap { $0 > Int64.max - bucket.capacity ? nil : $0 + bucket.capacity }
            }
        }
    }
}
