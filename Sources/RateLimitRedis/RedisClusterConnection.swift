// The runner for a Redis Cluster: one RedisConnection per node, the key's slot routed to the node
// that serves it, and the cluster's redirections followed (SHARED-9). A limiter's key carries a
// hash tag so that every key of one decision lies in one slot; this client finds that slot's node.

import Foundation

/// Connections to the nodes of a Redis Cluster: each call goes to the master that serves its
/// key's slot, and the cluster's redirections are followed.
///
/// ```swift
/// let cluster = try RedisClusterConnection(seeds: ["redis://10.0.0.1:6379", "redis://10.0.0.2:6379"])
/// let quota = RedisRateLimiter(try GCRA(burst: 10, emissionInterval: .milliseconds(100)), key: "rl:{api:42}", runner: cluster)
/// ```
///
/// It reads the slots' owners (`CLUSTER SLOTS`) from a seed at its first call, then sends each call
/// to its key's node. A `MOVED` answer (the slot has a new owner) sends the call there and reads
/// the slots again before the next call; an `ASK` answer (the slot is being moved, and this key
/// already went) sends `ASKING` and the call to the new node once, leaving the map as it is. A call
/// sent back to a node it already met (a move being committed node by node) waits a little first.
/// A `TRYAGAIN` answer (a call of several keys, a composite limit's, while a move has taken some of
/// them) is waited out the same way, and the call sent again to the slot's owner. At most 16
/// redirections in a row, and 32 `TRYAGAIN`s (about 1.4 s; `tryAgainWaits`), are followed for one
/// call; the last answer is then the call's (the limiter's own timeout may end it sooner). A node that does
/// not answer fails the call, and the next call reads the map again: after a failover, the slots'
/// new master (SHARED-15). `FUNCTION LOAD`
/// goes to every master, since a cluster does not share libraries between masters. Keys without a
/// hash tag work too, but a limiter's key should have one (`rl:{api:42}`): the tag decides the slot
/// (SHARED-9).
public final class RedisClusterConnection: RedisFunctionRunner, @unchecked Sendable {
    // @unchecked: `owners`, `nodes`, `stale`, the counts and `mapSource` are read and written only
    // while `lock` is held; the other members are immutable, and the connections are Sendable
    // themselves.
    private let seeds: [RedisConnection]
    private let lock = NSLock()
    /// The address (`host:port`) of each slot's master, from the last map read; nil when unknown.
    private var owners: [String?] = Array(repeating: nil, count: RedisClusterConnection.slotCount)
    private var nodes: [String: RedisConnection] = [:]
    /// Whether the map must be read again before the next call (none read yet, or a MOVED).
    private var stale = true
    private var moved = 0
    private var asked = 0
    private var retried = 0
    /// The node that gave the last map: asked first next time (a seed may be the master that failed).
    private var mapSource: RedisConnection?
    /// The most `TRYAGAIN` answers one call waits out.
    private let tryAgainWaits: Int

    /// The number of slots of a Redis Cluster.
    public static let slotCount = 16_384

    /// A client of the cluster that `seeds` belong to (URLs as ``RedisConnection`` takes them, all
    /// with the same credentials; the first that answers gives the map). With an `acknowledgement`,
    /// each script or function call waits for that many replicas of its master (SHARED-15).
    /// `tryAgainWaits`: how many `TRYAGAIN` answers one call waits out, 2 to 50 ms each (32: about
    /// 1.4 s), while a move of its slot has taken some of its keys.
    ///
    /// - Throws: ``RedisConnectionError`` for no seed, a URL ``RedisConnection`` refuses, a
    ///   database other than 0 (a cluster has only database 0), or negative `tryAgainWaits`.
    public init(
        seeds: [String], timeout: Duration = .seconds(10), acknowledgement: RedisReplicaAcknowledgement? = nil,
        tryAgainWaits: Int = 32
    ) throws(RedisConnectionError) {
        guard !seeds.isEmpty else { throw RedisConnectionError("a cluster client needs at least one seed") }
        guard tryAgainWaits >= 0 else {
            throw RedisConnectionError("tryAgainWaits must not be negative: \(tryAgainWaits)")
        }
        self.tryAgainWaits = tryAgainWaits
        var connections: [RedisConnection] = []
        for seed in seeds {
            let connection = try RedisConnection(url: seed, timeout: timeout, acknowledgement: acknowledgement)
            guard (connection.databaseNumber ?? 0) == 0 else {
                throw RedisConnectionError("a Redis Cluster has only database 0: \(seed)")
            }
            connections.append(connection)
        }
        self.seeds = connections
        for connection in connections { nodes["\(connection.host):\(connection.port)"] = connection }
    }

    /// The slot of `key` (CRC16 of the key, or of its hash tag: the text between the first `{` and
    /// the first `}` after it, when not empty; modulo 16,384).
    public static func slot(of key: String) -> Int {
        var bytes = Array(key.utf8)[...]
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
            let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            bytes = bytes[(open + 1)..<close]
        }
        var crc: UInt16 = 0  // CRC-16/XMODEM, as Redis Cluster's key hash.
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return Int(crc) % slotCount
    }

    /// Sends one command about `key` to the node that serves its slot, following redirections,
    /// and returns the reply.
    public func send(key: String, _ arguments: [String]) async throws(RedisConnectionError) -> RedisReply {
        try await routed(key) { (node, asking) throws(RedisConnectionError) in
            try await asking ? node.send(inOrder: [["ASKING"], arguments])[1] : node.send(arguments)
        } error: { reply in
            if case .error(let message) = reply { message } else { nil }
        }
    }

    /// A script or function call about `key`, routed as ``send(key:_:)`` and followed by `WAIT` on
    /// its node when the seeds have an acknowledgement.
    private func scriptCall(key: String, _ command: [String]) async throws(RedisConnectionError) -> RedisScriptReply {
        try await routed(key) { (node, asking) throws(RedisConnectionError) in
            try await node.scriptCall(command, asking: asking)
        } error: { reply in
            if case .error(let message) = reply { message } else { nil }
        }
    }

    /// `call` on the node that serves `key`'s slot, following the redirections its replies name. A
    /// node that fails to answer makes the map stale: the next call reads it again, so that calls
    /// reach a replica promoted after a failover (the failed call is not sent again: it may have
    /// run, SHARED-10).
    private func routed<Reply>(
        _ key: String, _ call: (RedisConnection, Bool) async throws(RedisConnectionError) -> Reply,
        error message: (Reply) -> String?
    ) async throws(RedisConnectionError) -> Reply {
        if lock.withLock({ stale }) { await readSlots() }
        let slot = Self.slot(of: key)
        var node = lock.withLock { owners[slot].flatMap { nodes[$0] } } ?? seeds[0]
        var asking = false
        var reply: Reply
        var redirections = 0
        var waits = 0
        var visited: Set<String> = []
        while true {
            do { reply = try await call(node, asking) } catch {
                lock.withLock { stale = true }
                throw error
            }
            guard let text = message(reply) else { return reply }
            if Self.isTryAgain(text), waits < tryAgainWaits {
                // Some of the call's keys moved and some not (a move between two batches), or none
                // is on either node yet: wait, longer each time, and ask the slot's owner again,
                // whose ASK starts a new round of redirections.
                waits += 1
                try? await Task.sleep(for: .milliseconds(min(1 << min(waits, 6), 50)))
                node = lock.withLock {
                    retried += 1
                    return owners[slot].flatMap { nodes[$0] } ?? seeds[0]
                }
                asking = false
                redirections = 0
                visited = []
                continue
            }
            guard redirections < Self.redirections, let (kind, address) = Self.redirection(text) else { return reply }
            redirections += 1
            // Sent back to a node already asked: the cluster is between two views of the slot (a
            // move being committed node by node). Wait a little, longer each time, before asking.
            if !visited.insert(address).inserted {
                try? await Task.sleep(for: .milliseconds(min(1 << min(redirections, 6), 50)))
            }
            node = lock.withLock {
                if kind == "MOVED" {
                    owners[slot] = address
                    stale = true
                    moved += 1
                } else {
                    asked += 1
                }
                return connection(to: address)
            }
            asking = kind == "ASK"
        }
    }

    /// The most redirections followed for one call.
    static let redirections = 16

    public func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await evalSHA(sha1, keys: [key], arguments: arguments)
    }

    public func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await eval(script, keys: [key], arguments: arguments)
    }

    public func fcall(_ function: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await fcall(function, keys: [key], arguments: arguments)
    }

    /// Routed by the first key's slot: the keys of one call share it (SHARED-9).
    public func evalSHA(_ sha1: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await scriptCall(key: keys.first ?? "", ["EVALSHA", sha1, String(keys.count)] + keys + arguments)
    }

    public func eval(_ script: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await scriptCall(key: keys.first ?? "", ["EVAL", script, String(keys.count)] + keys + arguments)
    }

    public func fcall(_ function: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await scriptCall(key: keys.first ?? "", ["FCALL", function, String(keys.count)] + keys + arguments)
    }

    /// Loads `library` on every master of the map: the first error that is not "already exists"
    /// is the answer, otherwise the library's name.
    public func functionLoad(_ library: String) async throws -> RedisScriptReply {
        if lock.withLock({ stale }) { await readSlots() }
        let masters = lock.withLock { Set(owners.compactMap { $0 }).sorted().compactMap { nodes[$0] } }
        var answer: RedisScriptReply?
        for master in masters.isEmpty ? [seeds[0]] : masters {
            let reply = RedisConnection.scriptReply(try await master.send(["FUNCTION", "LOAD", library]))
            if case .error = reply, !reply.isLibraryLoaded { return reply }
            answer = answer ?? reply
        }
        return answer ?? .error("ERR no master to load the library on")
    }

    /// The masters the map names, as `host:port`, sorted (for tests and diagnostics).
    public var masters: [String] { lock.withLock { Set(owners.compactMap { $0 }).sorted() } }

    /// How many `MOVED` and `ASK` redirections this client has followed.
    public var redirectionsFollowed: (moved: Int, ask: Int) { lock.withLock { (moved, asked) } }

    /// How many `TRYAGAIN` answers this client has waited out (a call of several keys during a
    /// move that had taken some of them).
    public var tryAgainsWaitedOut: Int { lock.withLock { retried } }

    /// Reads the slots' masters from the first seed (or known node) that answers `CLUSTER SLOTS`;
    /// keeps the old map when none does.
    private func readSlots() async {
        let (others, first) = lock.withLock {
            (nodes.values.filter { node in !seeds.contains { $0 === node } }.sorted { $0.port < $1.port }, mapSource)
        }
        let candidates = (first.map { [$0] } ?? []) + (seeds + others).filter { $0 !== first }
        for candidate in candidates {
            guard let reply = try? await candidate.send(["CLUSTER", "SLOTS"]),
                let read = Self.slotOwners(reply, answeredBy: candidate.host)
            else { continue }
            lock.withLock {
                owners = read
                stale = false
                mapSource = candidate
            }
            return
        }
    }

    /// Each slot's master as `host:port` from a `CLUSTER SLOTS` reply (nil for a slot no range
    /// names), or nil when the reply is not an array; a range that is not well formed (bounds out
    /// of order or past the last slot, no master's port) is skipped. An empty host (or "?") is the
    /// node that answered: `host`.
    static func slotOwners(_ reply: RedisReply, answeredBy host: String) -> [String?]? {
        guard case .array(let ranges) = reply else { return nil }
        var read: [String?] = Array(repeating: nil, count: slotCount)
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3,
                let first = fields[0].integer, let last = fields[1].integer, first >= 0, first <= last,
                last < slotCount, case .array(let master) = fields[2], master.count >= 2,
                let port = master[1].integer, port > 0, port <= 65_535
            else { continue }
            let owner = master[0].text.flatMap { $0.isEmpty || $0 == "?" ? nil : $0 } ?? host
            for slot in Int(first)...Int(last) { read[slot] = "\(owner):\(port)" }
        }
        return read
    }

    /// The connection to `address` (`host:port`), made once; called with `lock` held.
    private func connection(to address: String) -> RedisConnection {
        if let known = nodes[address] { return known }
        let separator = address.lastIndex(of: ":")
        let host = separator.map { String(address[..<$0]) } ?? address
        let port = separator.flatMap { Int(address[address.index(after: $0)...]) } ?? 6379
        let made = RedisConnection(node: host, port: port, like: seeds[0])
        nodes[address] = made
        return made
    }

    /// Whether `message` is `TRYAGAIN ...` (after a prefix a client adds).
    static func isTryAgain(_ message: String) -> Bool {
        message.split(separator: " ", maxSplits: 2).prefix(2).contains("TRYAGAIN")
    }

    /// `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>` (after a prefix a client adds):
    /// the kind and the address.
    static func redirection(_ message: String) -> (kind: String, address: String)? {
        let words = message.split(separator: " ")
        guard let index = words.firstIndex(where: { $0 == "MOVED" || $0 == "ASK" }), index + 2 < words.count,
            Int(words[index + 1]) != nil, words[index + 2].contains(":")
        else { return nil }
        return (String(words[index]), String(words[index + 2]))
    }
}
