import Foundation
import RateLimitRedis

/// A Redis Cluster of masters on loopback ports, started by a test and stopped by it: each master
/// owns an equal range of the 16,384 slots, and every node knows every other.
public final class RedisCluster: Sendable {
    public let nodes: [RedisServer]
    /// Each node's cluster id, in the order of `nodes`.
    public let ids: [String]

    /// Starts `masters` nodes, gives each its share of the slots, joins them and waits until every
    /// node sees the cluster whole (`cluster_state:ok` and every master known), at most 30 s.
    public static func start(masters: Int) async throws -> RedisCluster {
        var nodes: [RedisServer] = []
        do {
            for _ in 0..<masters { nodes.append(try await RedisServer.startClusterNode()) }
            return try RedisCluster(nodes: nodes)
        } catch {
            for node in nodes { node.stop() }
            throw error
        }
    }

    private init(nodes: [RedisServer]) throws {
        self.nodes = nodes
        let connections = try nodes.map { try RESPConnection(port: $0.port) }
        ids = try connections.map { connection in
            guard let id = try connection.call("CLUSTER", "MYID").text else {
                throw RedisTestFailure("no CLUSTER MYID")
            }
            return id
        }
        let count = nodes.count
        for (index, connection) in connections.enumerated() {
            let first = index * RedisClusterConnection.slotCount / count
            let last = (index + 1) * RedisClusterConnection.slotCount / count - 1
            guard try connection.call("CLUSTER", "ADDSLOTSRANGE", "\(first)", "\(last)") == .status("OK") else {
                throw nodes[index].failure("refused CLUSTER ADDSLOTSRANGE")
            }
        }
        for node in nodes.dropFirst() {
            let reply = try connections[0].call("CLUSTER", "MEET", "127.0.0.1", "\(node.port)", "\(node.busPort)")
            guard reply == .status("OK") else { throw nodes[0].failure("answered CLUSTER MEET with \(reply)") }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        for (index, connection) in connections.enumerated() {
            while !(try Self.whole(connection, masters: count)) {
                guard ContinuousClock.now < deadline else {
                    throw nodes[index].failure("did not see the cluster whole within 30 s")
                }
                pauseForARealServer()
            }
        }
    }

    private static func whole(_ connection: RESPConnection, masters: Int) throws -> Bool {
        guard try connection.call("CLUSTER", "INFO").text?.contains("cluster_state:ok") == true,
            case .array(let ranges) = try connection.call("CLUSTER", "SLOTS")
        else { return false }
        return ranges.count == masters
    }

    /// Makes the cluster node `replica` a replica of the cluster node `master`: it meets the
    /// master, replicates it once it knows it, and this returns once its replication link is up
    /// (at most 30 s).
    public static func attach(replica: RedisServer, to master: RedisServer) async throws {
        let node = try RESPConnection(port: replica.port)
        let source = try RESPConnection(port: master.port)
        guard let masterID = try source.call("CLUSTER", "MYID").text else { throw RedisTestFailure("no CLUSTER MYID") }
        // A full sync starts at once instead of waiting 5 s for more replicas to join it.
        guard try source.call("CONFIG", "SET", "repl-diskless-sync-delay", "0") == .status("OK") else {
            throw master.failure("refused CONFIG SET repl-diskless-sync-delay")
        }
        let met = try node.call("CLUSTER", "MEET", "127.0.0.1", "\(master.port)", "\(master.busPort)")
        guard met == .status("OK") else { throw replica.failure("answered CLUSTER MEET with \(met)") }
        let deadline = ContinuousClock.now + .seconds(30)
        while try node.call("CLUSTER", "REPLICATE", masterID) != .status("OK") {
            guard ContinuousClock.now < deadline else { throw replica.failure("did not learn its master within 30 s") }
            pauseForARealServer()
        }
        while try node.call("INFO", "replication").text?.contains("master_link_status:up") != true {
            guard ContinuousClock.now < deadline else {
                throw replica.failure("did not sync with its master within 30 s")
            }
            pauseForARealServer()
        }
    }

    /// The URLs of the nodes, the seeds a client takes.
    public var seeds: [String] { nodes.map { "redis://127.0.0.1:\($0.port)" } }

    /// The index of the node that owns `slot`.
    public func owner(of slot: Int) -> Int { slot * nodes.count / RedisClusterConnection.slotCount }

    /// Moves `slot` from node `source` to node `target` as `redis-cli --cluster reshard` does:
    /// importing and migrating marked, then the slot's keys moved `batch` at a time (`MIGRATE`, with
    /// `between` run after each batch: traffic meanwhile meets `ASK`), then the slot given to
    /// `target` on every node: the target first, then the source (the order Redis's cluster
    /// specification gives, so that the two never send a call back and forth), then the others.
    public func migrate(
        slot: Int, from source: Int, to target: Int, batch: Int = 1, between: () async throws -> Void = {}
    ) async throws {
        try beginMoving(slot: slot, from: source, to: target)
        let from = try RESPConnection(port: nodes[source].port)
        while case .array(let keys) = try from.call("CLUSTER", "GETKEYSINSLOT", "\(slot)", "\(batch)"), !keys.isEmpty {
            try move(keys.compactMap(\.text), from: source, to: target)
            try await between()
        }
        try finishMoving(slot: slot, from: source, to: target)
    }

    /// Marks `slot` importing on `target` and migrating on `source`: the first step of a move.
    public func beginMoving(slot: Int, from source: Int, to target: Int) throws {
        let from = try RESPConnection(port: nodes[source].port)
        let to = try RESPConnection(port: nodes[target].port)
        try expectOK(to.call("CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", ids[source]), "IMPORTING")
        try expectOK(from.call("CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", ids[target]), "MIGRATING")
    }

    /// Moves `keys` (of a slot being moved) from `source` to `target` in one `MIGRATE`.
    public func move(_ keys: [String], from source: Int, to target: Int) throws {
        let from = try RESPConnection(port: nodes[source].port)
        let reply = try from.call(
            arguments: ["MIGRATE", "127.0.0.1", "\(nodes[target].port)", "", "0", "5000", "KEYS"] + keys)
        try expectOK(reply, "MIGRATE")
    }

    /// Gives `slot` to `target` on every node, the target first, then the source, then the others:
    /// the last step of a move.
    public func finishMoving(slot: Int, from source: Int, to target: Int) throws {
        for index in [target, source] + nodes.indices.filter({ $0 != target && $0 != source }) {
            let connection = try RESPConnection(port: nodes[index].port)
            try expectOK(connection.call("CLUSTER", "SETSLOT", "\(slot)", "NODE", ids[target]), "SETSLOT NODE")
        }
    }

    private func expectOK(_ reply: RESPReply, _ what: String) throws {
        guard reply == .status("OK") || reply == .status("NOKEY") else {
            throw RedisTestFailure("\(what) answered \(reply)")
        }
    }

    public func stop() {
        for node in nodes { node.stop() }
    }
}
