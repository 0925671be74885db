import RateLimitConformance
import RateLimitCore
import RedisTestSupport
import Testing

// The judge of the multi-process Redis tests (RedisTestSupport/ClientWindows.swift), on traces
// whose server instants are known: it passes what GCRA-11 allows, finds a state that restarted,
// and widens its windows by the wall clock's steps, no more.

@Suite("GCRA-11 SHARED-2 the judge of clients' windows")
struct ClientWindowsTests {
    static let (burst, interval): (Int64, Int64) = (5, 2_000_000)

    /// Admissions of an in-process GCRA on server instants; each client record sent `before` ns
    /// earlier and answered `after` ns later on a clock `offset(instant)` behind the server's.
    static func admissions(
        _ name: String, restartAt restart: Int? = nil, offset: (Int64) -> Int64 = { _ in 0 }
    ) throws -> [ClientAdmission] {
        var random = TestSeed.generator(name, trace: 0)
        let strategy = try GCRA(burst: burst, emissionIntervalNanoseconds: interval)
        var limiter = RateLimiter(strategy, at: .origin)
        var records: [ClientAdmission] = []
        var now: Int64 = 1_000_000
        for index in 0..<2_000 {
            if index == restart { limiter = RateLimiter(strategy, at: try RateLimitInstant(nanoseconds: now)) }
            now += Int64.random(in: 0...700_000, using: &random)
            let permits = Int64.random(in: 1...3, using: &random)
            guard limiter.step(.acquire(permits), at: try RateLimitInstant(nanoseconds: now)).isAdmitted else {
                continue
            }
            let client = now - offset(now)
            // What the client read of the two clocks when it sent: the server's ahead by the offset,
            // read to within 40 ns.
            let wallClock = WallClockOffset(low: offset(now) - 20, high: offset(now) + 20)
            records.append(
                ClientAdmission(
                    sent: client - Int64.random(in: 20_000...90_000, using: &random),
                    answered: client + Int64.random(in: 20_000...90_000, using: &random), permits: permits,
                    tat: Int64(limiter.state.theoreticalArrivalNanoseconds), wallClock: wallClock))
        }
        return records
    }

    @Test("GCRA-11 a GCRA's own admissions: no window over the bound, every tat follows the one before")
    func exact() throws {
        let records = try Self.admissions("judge-exact")
        let replay = Comment(rawValue: TestSeed.replay("judge-exact", trace: 0))
        #expect(records.count > 200, replay)
        #expect(excessOverGCRABound(records, burst: Self.burst, interval: Self.interval) <= 0, replay)
        #expect(gcraChainBreak(records, interval: Self.interval) == nil, replay)
    }

    @Test("GCRA-11 SHARED-9 a state that restarts (a key lost in a move) breaks the chain of tats")
    func restart() throws {
        let records = try Self.admissions("judge-restart", restartAt: 1_000)
        #expect(
            gcraChainBreak(records, interval: Self.interval) != nil,
            Comment(rawValue: TestSeed.replay("judge-restart", trace: 0)))
    }

    @Test(
        "SHARED-2 a step of the server's wall clock shows as excess on the clients' clock, and not once the step is allowed for"
    )
    func clockStep() throws {
        // The server's clock jumps 9 ms ahead of the clients' at its instant 600 ms.
        let step: Int64 = 9_000_000
        let records = try Self.admissions("judge-step") { $0 >= 600_000_000 ? step : 0 }
        let replay = Comment(rawValue: TestSeed.replay("judge-step", trace: 0))
        #expect(excessOverGCRABound(records, burst: Self.burst, interval: Self.interval) > 0, replay)
        // The clients' readings of the two clocks show the step, no less, and little more.
        let steps = wallClockSteps(records)
        #expect(steps >= step && steps <= step + 40, "\(steps); \(replay)")
        #expect(
            excessOverGCRABound(records, burst: Self.burst, interval: Self.interval, clockSteps: steps) <= 0, replay)
        #expect(gcraChainBreak(records, interval: Self.interval) == nil, replay)
    }

    @Test(
        "SHARED-2 a client's reading of the wall clock against the monotonic one round-trips through the workers' lines"
    )
    func wallClockReading() throws {
        // Within 20 µs, or no reading at all (three preempted reads): never a reading that lies.
        if let reading = WallClockOffset.now() {
            #expect(reading.low <= reading.high && reading.high - reading.low <= 20_000, "\(reading)")
            #expect(WallClockOffset(text: reading.text[...]) == reading)
        }
        #expect(WallClockOffset(text: "-") == nil && WallClockOffset(text: "5:3") == nil)
        #expect(wallClockSteps([]) == 0)
    }
}
