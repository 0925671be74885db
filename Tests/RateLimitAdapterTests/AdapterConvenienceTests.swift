import RateLimitActor
import RateLimitConformance
import RateLimitDispatch
import RateLimitLock
import RateLimitTestSupport
import Testing

private struct BodyFailed: Error {}

@Suite("Adapters: availability, withPermits, keys and removal")
struct AdapterConvenienceTests {
    @Test("WQ-4 availability through every adapter answers what tryAcquire would and takes nothing")
    func availability() async throws {
        let gcra = try GCRA(burst: 2, emissionIntervalNanoseconds: 100)
        let clocks = (0..<3).map { _ in ManualClock() }
        let actor = try ActorRateLimiter(gcra, clock: clocks[0])
        let lock = try LockedRateLimiter(gcra, clock: clocks[1])
        let dispatch = try DispatchRateLimiter(gcra, clock: clocks[2])
        #expect(await actor.availability(of: 2) == .granted(.allowed(remaining: 0)))
        #expect(lock.availability(of: 3) == .rejected(.neverAllowed))
        #expect(dispatch.availability(of: 2) == .granted(.allowed(remaining: 0)))
        _ = await actor.tryAcquire(2)
        _ = lock.tryAcquire(2)
        _ = dispatch.tryAcquire(2)
        for clock in clocks { clock.advance(by: .nanoseconds(30)) }
        let refused = WaitOutcome.rejected(.limited(retryAfterNanoseconds: 70))
        #expect(
            await actor.availability() == refused && lock.availability() == refused
                && dispatch.availability() == refused)
        #expect(refused.retryAfter == .nanoseconds(70) && !refused.isGranted)
        #expect(
            await actor.remaining() == 0 && lock.remaining() == 0 && dispatch.remaining() == 0,
            "asking took nothing back or away")
        #expect(await actor.tryAcquire() == refused && lock.tryAcquire() == refused && dispatch.tryAcquire() == refused)
    }

    @Test(
        "WQ-13 CL-8 withPermits holds the permits while the body runs and gives them back however it ends: returning, throwing, cancelled"
    )
    func withPermits() async throws {
        let limit = try ConcurrencyLimiter(limit: 1)
        let actor = try ActorRateLimiter(limit, queueLimit: 1, clock: ManualClock())
        let lock = try LockedRateLimiter(limit, queueLimit: 1, clock: ManualClock())
        #expect(try await actor.withPermits { await actor.remaining() } == 0, "held inside")
        #expect(try await lock.withPermits { lock.remaining() } == 0)
        #expect(try lock.withPermitsBlocking { lock.remaining() } == 0)
        #expect(await actor.remaining() == 1 && lock.remaining() == 1, "given back after returning")
        await #expect(throws: BodyFailed.self) { try await actor.withPermits { throw BodyFailed() } }
        await #expect(throws: BodyFailed.self) { try await lock.withPermits { throw BodyFailed() } }
        #expect(throws: BodyFailed.self) { try lock.withPermitsBlocking { throw BodyFailed() } }
        #expect(await actor.remaining() == 1 && lock.remaining() == 1, "given back after throwing")

        // A body that is cancelled while it waits inside still gives its permit back.
        let inside = Task {
            // Suspended until cancelled: a stream that is never fed ends when its task is cancelled.
            try await actor.withPermits {
                let (never, continuation) = AsyncStream<Never>.makeStream()
                for await _ in never {}
                withExtendedLifetime(continuation) {}
                try Task.checkCancellation()
            }
        }
        #expect(await eventually { await actor.remaining() == 0 })
        inside.cancel()
        _ = await inside.result
        #expect(await actor.remaining() == 1, "given back after cancellation")

        // A request that cannot get its permits runs nothing: the error is the acquire's.
        _ = await actor.tryAcquire()
        await #expect(throws: RateLimitAcquireError.timedOut) {
            try await actor.withPermits(timeout: .zero) { Issue.record("ran without a permit") }
        }
        // A critical request let through without permits gives nothing back.
        let bypass = try await actor.withPermits(priority: .critical) { await actor.remaining() }
        let after = await actor.remaining()
        #expect(bypass == 0 && after == 0, "the bypass took nothing and released nothing")
    }

    @Test("REG-12 every registry lists its keys and removes one: its waiters end closed, its next request starts anew")
    func keysAndRemoval() async throws {
        let rules = [try RateLimitRule(.anyKey, try ConcurrencyLimiter(limit: 1), overflow: .queue(limit: 5))]
        let actor = try ActorRateLimitRegistry(rules: rules, clock: ManualClock())
        let lock = try LockedRateLimitRegistry(rules: rules, clock: ManualClock())
        let dispatch = try DispatchRateLimitRegistry(rules: rules, clock: ManualClock())
        _ = await actor.tryAcquire("b")
        _ = await actor.tryAcquire("a")
        _ = lock.tryAcquire("b")
        _ = dispatch.tryAcquire("b")
        #expect(await actor.keys == ["a", "b"] && lock.keys == ["b"] && dispatch.keys == ["b"])
        let waiter = Task { try await actor.acquire("b") }
        #expect(await eventually { await actor.waitingCount == 1 })
        #expect(await actor.remove("b") && lock.remove("b") && dispatch.remove("b"))
        await #expect(throws: RateLimitAcquireError.closed) { try await waiter.value }
        #expect(await actor.keys == ["a"] && lock.keys.isEmpty && dispatch.keys.isEmpty)
        #expect(await actor.availability("b") == .granted(.allowed(remaining: 0)), "anew: its permit is free again")
        #expect(!(await actor.remove("b")), "not held any more")
    }

    @Test("WQ-13 REG-12 a registry's withPermits holds the key's permits while the body runs")
    func registryWithPermits() async throws {
        let rules = [try RateLimitRule(.anyKey, try ConcurrencyLimiter(limit: 2))]
        let actor = try ActorRateLimitRegistry(rules: rules, clock: ManualClock())
        let lock = try LockedRateLimitRegistry(rules: rules, clock: ManualClock())
        #expect(try await actor.withPermits("db", permits: 2) { await actor.quota(of: "db")?.remaining } == 0)
        await #expect(throws: BodyFailed.self) { try await lock.withPermits("db") { throw BodyFailed() } }
        #expect(await actor.quota(of: "db")?.remaining == 2 && lock.quota(of: "db")?.remaining == 2)
    }

    @Test(
        "WQ-4 acquire waits by default on every adapter: the sixth request on a bucket of five waits for its token (the default queue limit), and a full queue's error names the limit to raise"
    )
    func acquireWaitsByDefault() async throws {
        // "10 per second, bursts of 5, wait when over, give up after 2 s".
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 10, period: .seconds(1))
        let clocks = (0..<3).map { _ in ManualClock() }
        let actor = try ActorRateLimiter(bucket, clock: clocks[0])
        let lock = try LockedRateLimiter(bucket, clock: clocks[1])
        let dispatch = try DispatchRateLimiter(bucket, clock: clocks[2])
        for _ in 0..<5 {
            #expect(
                await actor.tryAcquire().isGranted && lock.tryAcquire().isGranted && dispatch.tryAcquire().isGranted)
        }
        let sixth = (
            actor: Task { try await actor.acquire(timeout: .seconds(2)) },
            lock: Task { try await lock.acquire(timeout: .seconds(2)) },
            dispatch: Task {
                await withCheckedContinuation { continuation in
                    dispatch.acquire(timeout: .seconds(2)) { continuation.resume(returning: $0) }
                }
            }
        )
        #expect(
            await eventually { await actor.waitingCount == 1 && lock.waitingCount == 1 && dispatch.waitingCount == 1 },
            "each sixth request waits instead of being refused")
        // Its token comes 100 ms later (10 per second).
        for clock in clocks { clock.advance(by: .milliseconds(100)) }
        #expect(try await sixth.actor.value.permits == 1)
        #expect(try await sixth.lock.value.permits == 1)
        #expect(try await sixth.dispatch.value.get().permits == 1)

        let none = try ActorRateLimiter(bucket, queueLimit: 0, clock: ManualClock())
        for _ in 0..<5 { _ = await none.tryAcquire() }
        do {
            _ = try await none.acquire(timeout: .seconds(2))
            Issue.record("a queue limit of 0 refuses what would wait")
        } catch {
            #expect(error == .rejected(.queueFull))
            #expect(error.description.contains("queueLimit") && error.description.contains("tryAcquire"), "\(error)")
        }
        #expect(WaitQueue<TokenBucket>.defaultQueueLimit == 1_000)
    }
}
