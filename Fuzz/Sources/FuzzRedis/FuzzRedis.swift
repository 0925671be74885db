import RateLimitCore
@testable import RateLimitRedis

// Any bytes from a Redis server: as the wire (RESP2) the shipped connection reads, refused with
// an error or read as a reply, which then goes to the limiter as a script's reply; and as a
// script's values (Sources/RateLimitRedis/Scripts/README.md): the first byte picks the operation,
// each following line is one bulk string. A reply is read as a result or refused as
// `unexpectedReply` (SHARED-10), never a trap, a stack overflow or a hang; and as the cluster
// runner reads a node's answers (SHARED-9, SHARED-15).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let values = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
        .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let permits = Int64(data[0] >> 2) - 8
    let operation: ScriptOperation<ConcurrencyLimiter> =
        switch data[0] & 3 {
        case 0: .acquire(permits, lease: nil)
        case 1: .release(permits, lease: "lease")
        case 2: .reset
        default: (try? ConcurrencyLimiter(limit: 3)).map { .reconfigure($0) } ?? .reset
        }
    _ = try? RedisLimitEngine<ConcurrencyLimiter, ContinuousClock>.answer(values, to: operation)
    let wire = UnsafeBufferPointer(start: data, count: size)
    if let (reply, used) = try? RESP.reply(in: Array(wire)[...]) {
        guard used > 0, used <= size else { fatalError("a reply of \(used) bytes read from \(size)") }
        if case .values(let values) = RedisConnection.scriptReply(reply) {
            _ = try? RedisLimitEngine<ConcurrencyLimiter, ContinuousClock>.answer(values, to: operation)
        }
        // The cluster runner's reading of the same bytes: a slot map (every owner a host and a
        // port of 1 ... 65535), a redirection or a TRYAGAIN, a WAIT's count.
        for owner in RedisClusterConnection.slotOwners(reply, answeredBy: "127.0.0.1") ?? [] {
            guard let owner else { continue }
            guard let port = owner.split(separator: ":").last.flatMap({ Int($0) }), (1...65_535).contains(port) else {
                fatalError("a slot owned by \(owner)")
            }
        }
        if case .error(let message) = reply {
            _ = RedisClusterConnection.redirection(message)
            _ = RedisClusterConnection.isTryAgain(message)
        }
        _ = (try? RedisReplicaAcknowledgement(replicas: 1, within: .milliseconds(5)))?.verdict(on: reply)
    }
    return 0
}
