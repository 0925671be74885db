import Dispatch
import Foundation
import RateLimitRedis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The tests' and the benchmark's Redis client is the one the package ships (RedisConnection), with
// what only tests need: a connection to a port of 127.0.0.1, made now or at its first command,
// variadic commands, the server's clock, and free ports for the servers they start.

public typealias RESPConnection = RedisConnection
public typealias RESPReply = RedisReply

extension RedisConnection {
    /// A connection to `port` of 127.0.0.1, made now (it throws when nothing listens there).
    public convenience init(port: Int, receiveTimeout: Duration = .seconds(10)) throws {
        try self.init(url: "redis://127.0.0.1:\(port)", timeout: receiveTimeout)
        try connect()
    }

    /// A connection to `port` of 127.0.0.1, made at its first command.
    public convenience init(lazilyTo port: Int, receiveTimeout: Duration = .seconds(10)) {
        // A URL made of 127.0.0.1 and a number always parses.
        try! self.init(url: "redis://127.0.0.1:\(port)", timeout: receiveTimeout)
    }

    /// Sends one command and waits for its reply (it blocks the calling thread).
    public func call(_ arguments: String...) throws -> RESPReply { try call(arguments) }

    /// ``call(_:)`` with the arguments as an array.
    public func call(arguments: [String]) throws -> RESPReply { try call(arguments) }

    /// The server's clock (TIME) in nanoseconds since the Unix epoch, as the scripts read it.
    public func serverNanoseconds() throws -> Int64 {
        guard case .array(let parts) = try call("TIME"), parts.count == 2,
            let seconds = parts[0].text.flatMap({ Int64($0) }), let micros = parts[1].text.flatMap({ Int64($0) })
        else { throw RedisTestFailure("TIME gave no time") }
        return seconds * 1_000_000_000 + micros * 1_000
    }
}

/// TCP sockets of 127.0.0.1.
enum LocalSocket {
    static func descriptor() throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw RedisTestFailure("socket() failed: errno \(errno)") }
        return descriptor
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        return address
    }

    /// `count` different ports free when asked: those the system gives sockets bound to port 0.
    static func freePorts(_ count: Int) throws -> [Int] {
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let descriptor = try descriptor()
            descriptors.append(descriptor)
            var address = loopback(port: 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
                }
            }
            guard bound else { throw RedisTestFailure("no free port: errno \(errno)") }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}

/// A connection seen as a runner of scripts only (`EVALSHA`, `EVAL`), as an app's client without
/// `FCALL` is: the limiters then never call the Functions library.
public struct ScriptsOnly: RedisScriptRunner {
    public let connection: RedisConnection

    public init(_ connection: RedisConnection) { self.connection = connection }

    public func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await connection.evalSHA(sha1, key: key, arguments: arguments)
    }

    public func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await connection.eval(script, key: key, arguments: arguments)
    }

    public func evalSHA(_ sha1: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await connection.evalSHA(sha1, keys: keys, arguments: arguments)
    }

    public func eval(_ script: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await connection.eval(script, keys: keys, arguments: arguments)
    }
}
