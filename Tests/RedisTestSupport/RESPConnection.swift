import Dispatch
import Foundation
import RateLimitRedis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A minimal RESP2 client for the tests and the benchmark: one TCP connection to 127.0.0.1, one
// command at a time, on a serial queue of its own (so a read that blocks never holds a thread of
// the cooperative pool). It is also the `RedisScriptRunner` the limiters are tested with. A
// connection that fails is closed and made again at the next command, as a client's pool would.

/// A reply of the RESP2 protocol.
public enum RESPReply: Equatable, Sendable {
    case status(String)
    case error(String)
    case integer(Int64)
    case bulk(String?)
    case array([RESPReply])

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var text: String? {
        if case .bulk(let value) = self { return value }
        if case .status(let value) = self { return value }
        return nil
    }
}

/// One connection to a redis-server of 127.0.0.1.
public final class RESPConnection: RedisScriptRunner, @unchecked Sendable {
    // @unchecked: `socket`, `buffer`, `start`, `chunk` and `counts` are read and written only by blocks of `queue`
    // (a serial queue), the other members are immutable.
    public let port: Int
    private let receiveTimeout: Duration
    private let queue = DispatchQueue(label: "RESPConnection")
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    private var counts: [String: Int] = [:]

    /// A connection to `port`, made now (it throws when nothing listens there). A reply that takes
    /// longer than `receiveTimeout` fails its command and closes the connection.
    public init(port: Int, receiveTimeout: Duration = .seconds(10)) throws {
        self.port = port
        self.receiveTimeout = receiveTimeout
        try queue.sync { try connectIfNeeded() }
    }

    /// A connection to `port`, made at its first command.
    public init(lazilyTo port: Int, receiveTimeout: Duration = .seconds(10)) {
        self.port = port
        self.receiveTimeout = receiveTimeout
    }

    deinit { if socket >= 0 { close(socket) } }

    /// How many times each command was sent (`EVALSHA`, `EVAL`, ...).
    public var commandCounts: [String: Int] { queue.sync { counts } }

    /// Sends one command, as an array of bulk strings, and waits for its reply. Not from a task of
    /// the cooperative pool when the reply may take long (it blocks the calling thread).
    public func call(_ arguments: String...) throws -> RESPReply { try call(arguments: arguments) }

    /// ``call(_:)`` with the arguments as an array.
    public func call(arguments: [String]) throws -> RESPReply {
        try queue.sync { try exchange(arguments) }
    }

    /// The command's reply, on the connection's queue: the calling task suspends meanwhile.
    public func send(_ arguments: [String]) async throws -> RESPReply {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.exchange(arguments) })
            }
        }
    }

    public func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        Self.scriptReply(try await send(["EVALSHA", sha1, "1", key] + arguments))
    }

    public func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        Self.scriptReply(try await send(["EVAL", script, "1", key] + arguments))
    }

    private static func scriptReply(_ reply: RESPReply) -> RedisScriptReply {
        switch reply {
        case .error(let message): return .error(message)
        case .array(let items): return .values(items.map { $0.text ?? "\($0)" })
        case .status, .integer, .bulk: return .values(["\(reply)"])
        }
    }

    /// The server's clock (TIME) in nanoseconds since the Unix epoch, as the scripts read it.
    public func serverNanoseconds() throws -> Int64 {
        guard case .array(let parts) = try call("TIME"), parts.count == 2,
            let seconds = parts[0].text.flatMap({ Int64($0) }), let micros = parts[1].text.flatMap({ Int64($0) })
        else { throw RedisTestFailure("TIME gave no time") }
        return seconds * 1_000_000_000 + micros * 1_000
    }

    // MARK: On the queue

    private func exchange(_ arguments: [String]) throws -> RESPReply {
        dispatchPrecondition(condition: .onQueue(queue))
        try connectIfNeeded()
        counts[arguments.first ?? "", default: 0] += 1
        var message = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let bytes = Array(argument.utf8)
            message += Array("$\(bytes.count)\r\n".utf8) + bytes + Array("\r\n".utf8)
        }
        do {
            try LocalSocket.sendAll(message, to: socket)
            return try reply()
        } catch {
            // A connection that failed mid-command may hold half a reply: start afresh next time.
            close(socket)
            socket = -1
            buffer = []
            start = 0
            throw error
        }
    }

    private func connectIfNeeded() throws {
        guard socket < 0 else { return }
        socket = try LocalSocket.connected(port: port, receiveTimeout: receiveTimeout)
    }

    private func reply() throws -> RESPReply {
        let line = try readLine()
        let body = String(line.dropFirst())
        switch line.first {
        case "+": return .status(body)
        case "-": return .error(body)
        case ":": if let value = Int64(body) { return .integer(value) }
        case "$":
            if let size = Int(body) {
                if size < 0 { return .bulk(nil) }
                return .bulk(String(decoding: try readBytes(size + 2).dropLast(2), as: UTF8.self))
            }
        case "*":
            if let size = Int(body) { return .array(try (0..<max(size, 0)).map { _ in try reply() }) }
        default: break
        }
        throw RedisTestFailure("not a RESP2 reply: \(line)")
    }

    private func readLine() throws -> String {
        var scanned = 0  // bytes after `start` known to hold no line end
        while true {
            if let end = buffer[(start + scanned)...].firstIndex(of: 10) {
                if end > start, buffer[end - 1] == 13 {
                    let line = String(decoding: buffer[start..<(end - 1)], as: UTF8.self)
                    start = end + 1
                    return line
                }
                scanned = end + 1 - start
                continue
            }
            scanned = buffer.count - start
            try receiveMore()
        }
    }

    private func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - start < count { try receiveMore() }
        defer { start += count }
        return buffer[start..<(start + count)]
    }

    /// Appends what the socket has to the buffer, dropping what was read before.
    private func receiveMore() throws {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            throw RedisTestFailure(
                count == 0 ? "redis-server closed the connection" : "no reply from redis-server: errno \(errno)")
        }
        buffer += chunk[..<count]
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

    static func connected(port: Int, receiveTimeout: Duration) throws -> Int32 {
        let descriptor = try descriptor()
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            throw RedisTestFailure("cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
        // A reply that never comes fails its command after the timeout instead of hanging.
        let (seconds, attoseconds) = receiveTimeout.components
        var timeout = timeval(tv_sec: .init(seconds), tv_usec: .init(attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return descriptor
    }

    static func sendAll(_ bytes: [UInt8], to descriptor: Int32) throws {
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, flags) }
            guard sent > 0 else { throw RedisTestFailure("cannot send to redis-server: errno \(errno)") }
            offset += sent
        }
    }
}
