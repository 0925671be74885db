import RateLimitCore
import RateLimitRedis
import RedisTestSupport
import Testing

// The scripts' integers (Sources/RateLimitRedis/Scripts/prelude.lua: base-10^7 limbs on Lua's doubles)
// against Swift's 128-bit integers, inside a real redis-server: the prelude's own functions, run by
// a chunk appended to it, on boundaries of every fast path (products below 2^52, quotients of
// numbers below 10^14, divisors below 9·10^8) and on seeded random pairs up to 2^127.

@Suite(
    "The scripts' exact integers (SHARED-3)", .serialized, .tags(.realTime), .realTime(patience: .seconds(60)),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisArithmeticRealTimeTests {
    @Test("SHARED-3 the scripts' quotient, remainder, product, sum and difference equal 128-bit arithmetic")
    func limbsAreExact() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        let server = try await RedisServer.start()
        defer { server.stop() }
        let redis = try RESPConnection(port: server.port)
        let pairs = Self.pairs()
        // The prelude, then a chunk that runs its functions on each pair of ARGV.
        let prelude = try #require(RedisScript.all.first).source.components(separatedBy: "\nreturn run(S, KEYS, ARGV)")[
            0]
        let chunk = """
            local out = {}
            for i = 1, #ARGV, 2 do
                local _, a = decimal(ARGV[i])
                local _, b = decimal(ARGV[i + 1])
                local q, r = divmod(a, b)
                out[#out + 1] = str(q) .. ' ' .. str(r) .. ' ' .. str(add(a, b)) .. ' ' .. str(monus(a, b))
                out[#out + 1] = str(mul(a, b))
            end
            return out
            """
        var checked = 0
        for batch in stride(from: 0, to: pairs.count, by: 500).map({ Array(pairs[$0..<min($0 + 500, pairs.count)]) }) {
            let arguments = batch.flatMap { [String($0.0), String($0.1)] }
            let reply = try await redis.send(["EVAL", prelude + "\n" + chunk, "0"] + arguments)
            guard case .array(let items) = reply, items.count == 2 * batch.count else {
                Issue.record("the chunk answered \(reply)")
                return
            }
            for (index, (a, b)) in batch.enumerated() {
                let (q, r) = a.quotientAndRemainder(dividingBy: b)
                let expected = "\(q) \(r) \(a + b) \(a > b ? a - b : 0)"
                #expect(items[2 * index].text == expected, "\(a), \(b)")
                // Products are compared where they fit 128 bits (factors below 2^64).
                if a <= UInt128(UInt64.max), b <= UInt128(UInt64.max) {
                    #expect(items[2 * index + 1].text == "\(a * b)", "\(a) · \(b)")
                }
                checked += 1
            }
        }
        #expect(checked == pairs.count && checked > 2_000)
    }

    /// Every pair of boundaries, then seeded random pairs of every size; divisors at least 1, sums
    /// below 2^128.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func pairs() -> [(UInt128, UInt128)] {
        let powers: [UInt128] = [
            1 << 52, 1 << 53, 1 << 63, 1 << 64, 1 << 126, 9_999_999, 10_000_000, 900_000_000, 100_000_000_000_000,
            9_223_372_036_854_775_807,
        ]
        var edges: [UInt128] = [0, 1, 2, (1 << 127) - 1]
        for power in powers { edges += [power - 1, power, power + 1] }
        var pairs: [(UInt128, UInt128)] = []
        for a in edges { for b in edges where b > 0 { pairs.append((a, b)) } }
        var random = SeededGenerator(seed: 19)
        for _ in 0..<2_000 {
            let a = UInt128(random.next()) << UInt128(random.next() % 64) | UInt128(random.next() % 1_000_000)
            let b = max(1, UInt128(random.next()) >> (random.next() % 64))
            pairs.append((a, b))
        }
        return pairs
    }
}
