// A Redis client small enough to ship: one TCP connection, RESP2, one command at a time, on a serial
// queue of its own (a read that blocks never holds a thread of the cooperative pool). It is the
// runner a newcomer can try the shared limiters with against a local `redis-server`; an app that
// already has RediStack or valkey-swift implements `RedisScriptRunner` with it instead. A connection
// that fails is closed and made again at the next command, as a client's pool would.

import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A reply of the Redis protocol (RESP2).
public enum RedisReply: Hashable, Sendable {
    /// A simple string (`+OK`).
    case status(String)
    /// An error (`-ERR ...`), its message.
    case error(String)
    case integer(Int64)
    /// A bulk string; `nil` for the null bulk string.
    case bulk(String?)
    /// An array; ``RedisReply/null`` stands for the null array.
    case array([RedisReply])

    /// The null reply.
    public static let null = RedisReply.bulk(nil)

    /// The integer, when this is one.
    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The text of a bulk or simple string.
    public var text: String? {
        if case .bulk(let value) = self { return value }
        if case .status(let value) = self { return value }
        return nil
    }
}

/// Why a command of a ``RedisConnection`` got no reply.
public struct RedisConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}

/// One connection to a Redis server, over plain TCP: the runner the shared limiters can use out of
/// the box (``RedisRateLimiter``, ``RedisConcurrencyLimiter``).
///
/// ```swift
/// let redis = try RedisConnection(url: "redis://127.0.0.1:6379")
/// let quota = RedisRateLimiter(try GCRA(burst: 10, emissionInterval: .milliseconds(100)), key: "rl:{api}", runner: redis)
/// ```
///
/// It connects at its first command, and again after a failure. Commands go one at a time: give
/// each busy limiter a connection of its own, or bring a pooled client (RediStack, valkey-swift)
/// behind ``RedisScriptRunner``.
public final class RedisConnection: RedisFunctionRunner, @unchecked Sendable {
    // @unchecked: `descriptor`, `buffer`, `chunk` and `counts` are read and written only by blocks of `queue`
    // (a serial queue); the other members are immutable.
    /// The server's host and port, and the credentials and database of the URL.
    public let host: String
    public let port: Int
    private let user: String?
    private let password: String?
    private let database: Int?
    private let timeout: Duration
    /// The replicas each script or function call waits for (SHARED-15), if any.
    public let acknowledgement: RedisReplicaAcknowledgement?
    private let queue = DispatchQueue(label: "RateLimitRedis.RedisConnection")
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    private var counts: [String: Int] = [:]

    /// A connection to the server of `url` (`redis://[[user]:password@]host[:port][/database]`,
    /// port 6379 by default), made at its first command. A connection, or a reply, that takes
    /// longer than `timeout` fails its command and closes the connection. With an
    /// `acknowledgement`, each script or function call is followed by `WAIT` on the connection, and
    /// a decision fewer replicas acknowledged is answered as a `NOREPLICAS` error (SHARED-15).
    ///
    /// - Throws: ``RedisConnectionError`` for a URL of another form (a user without a password, a
    ///   database that is not a number from 0), a timeout under 1 ms, or an acknowledgement that
    ///   waits as long as the timeout or longer.
    public init(
        url: String = "redis://127.0.0.1:6379", timeout: Duration = .seconds(10),
        acknowledgement: RedisReplicaAcknowledgement? = nil
    ) throws(RedisConnectionError) {
        guard let parts = URLComponents(string: url), parts.scheme == "redis", let host = parts.host, !host.isEmpty,
            parts.query == nil, parts.fragment == nil
        else {
            throw RedisConnectionError("not a Redis URL (redis://[[user]:password@]host[:port][/database]): \(url)")
        }
        let path = parts.path.drop { $0 == "/" }
        guard path.isEmpty || (path.allSatisfy(\.isASCII) && path.allSatisfy(\.isNumber) && Int(path) != nil) else {
            throw RedisConnectionError("the database is a number from 0: \(url)")
        }
        let user = parts.user.flatMap { $0.isEmpty ? nil : $0 }
        let password = parts.password.flatMap { $0.isEmpty ? nil : $0 }
        guard user == nil || password != nil else {
            throw RedisConnectionError("a user needs a password (redis://user:password@host): \(url)")
        }
        guard timeout >= .milliseconds(1) else {
            throw RedisConnectionError("the timeout is at least 1 ms: \(timeout)")
        }
        if let acknowledgement, .milliseconds(acknowledgement.milliseconds) >= timeout {
            // The reply to WAIT comes after its wait: a wait as long as the timeout would end as
            // a timeout of the connection rather than as a decision not acknowledged.
            throw RedisConnectionError(
                "the acknowledgement's wait (\(acknowledgement.milliseconds) ms) must be shorter than the timeout, \(timeout)"
            )
        }
        self.host = host
        port = parts.port ?? 6379
        self.user = user
        self.password = password
        database = Int(path)
        self.timeout = timeout
        self.acknowledgement = acknowledgement
    }

    /// A connection to another node of `seed`'s cluster: its credentials, timeout and
    /// acknowledgement, database 0.
    init(node host: String, port: Int, like seed: RedisConnection) {
        self.host = host
        self.port = port
        user = seed.user
        password = seed.password
        database = nil
        timeout = seed.timeout
        acknowledgement = seed.acknowledgement
    }

    /// The database of the URL (nil: 0).
    var databaseNumber: Int? { database }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Connects now, when not connected: a server that is not there fails here rather than at the
    /// first command.
    public func connect() throws(RedisConnectionError) {
        try queue.sync { Result { () throws(RedisConnectionError) in try connectIfNeeded() } }.get()
    }

    /// How many times each command was sent, by its name (`FCALL`, `FUNCTION`, `EVALSHA`, `EVAL`, ...).
    public var commandCounts: [String: Int] { queue.sync { counts } }

    /// Sends one command, as an array of bulk strings, and waits for its reply, blocking the
    /// calling thread: not from a task of the cooperative pool (use ``send(_:)`` there).
    public func call(_ arguments: [String]) throws(RedisConnectionError) -> RedisReply {
        try queue.sync { Result { () throws(RedisConnectionError) in try exchange(arguments) } }.get()
    }

    /// The command's reply; the calling task suspends meanwhile. A command whose task is cancelled
    /// before its turn on the connection is not sent (a limiter that gave up on a slow server
    /// leaves no queue of abandoned commands behind it).
    public func send(_ arguments: [String]) async throws(RedisConnectionError) -> RedisReply {
        try await send(inOrder: [arguments])[0]
    }

    /// Each command's reply, the commands sent together with no other command between them on the
    /// connection: `ASKING`, then the command it is for (``RedisClusterConnection``); a script call,
    /// then its `WAIT`.
    func send(inOrder commands: [[String]]) async throws(RedisConnectionError) -> [RedisReply] {
        let abandoned = Abandoned()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<[RedisReply], RedisConnectionError>, Never>) in
                queue.async {
                    guard !abandoned.isSet else {
                        return continuation.resume(
                            returning: .failure(RedisConnectionError("cancelled before it was sent")))
                    }
                    continuation.resume(
                        returning: Result { () throws(RedisConnectionError) in try self.exchange(commands) })
                }
            }
        } onCancel: {
            abandoned.set()
        }
        return try result.get()
    }

    public func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await evalSHA(sha1, keys: [key], arguments: arguments)
    }

    public func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await eval(script, keys: [key], arguments: arguments)
    }

    public func fcall(_ function: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await fcall(function, keys: [key], arguments: arguments)
    }

    public func evalSHA(_ sha1: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await scriptCall(["EVALSHA", sha1, String(keys.count)] + keys + arguments)
    }

    public func eval(_ script: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await scriptCall(["EVAL", script, String(keys.count)] + keys + arguments)
    }

    public func fcall(_ function: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        try await scriptCall(["FCALL", function, String(keys.count)] + keys + arguments)
    }

    /// A script or function call, after `ASKING` when `asking` (a cluster's slot being moved), and
    /// followed by `WAIT` when the connection has an acknowledgement (SHARED-15).
    func scriptCall(_ command: [String], asking: Bool = false) async throws(RedisConnectionError) -> RedisScriptReply {
        let commands = (asking ? [["ASKING"]] : []) + [command] + (acknowledgement.map { [$0.command] } ?? [])
        let replies = try await send(inOrder: commands)
        let reply = replies[asking ? 1 : 0]
        let answer = Self.scriptReply(reply)
        // Only a decision that gives something waits for the replicas: a refusal or an invalid
        // event changes no state (CORE-8) and is answered as the store gave it.
        guard let acknowledgement, case .values(let values) = answer, values.count >= 2, values[0] == "kind",
            ["allowed", "delayed", "created"].contains(values[1])
        else { return answer }
        return acknowledgement.verdict(on: replies[replies.count - 1]) ?? answer
    }

    public func functionLoad(_ library: String) async throws -> RedisScriptReply {
        Self.scriptReply(try await send(["FUNCTION", "LOAD", library]))
    }

    /// A reply as a script's: an array of bulk strings, or an error's message. Anything else is
    /// passed on as one value, which the limiter refuses as unexpected (SHARED-10).
    static func scriptReply(_ reply: RedisReply) -> RedisScriptReply {
        switch reply {
        case .error(let message): return .error(message)
        case .array(let items): return .values(items.map { $0.text ?? "\($0)" })
        case .status, .integer, .bulk: return .values(["\(reply)"])
        }
    }

    // MARK: On the queue

    private func exchange(_ arguments: [String]) throws(RedisConnectionError) -> RedisReply {
        try exchange([arguments])[0]
    }

    /// Sends the commands in one write (pipelined) and reads their replies.
    private func exchange(_ commands: [[String]]) throws(RedisConnectionError) -> [RedisReply] {
        dispatchPrecondition(condition: .onQueue(queue))
        try connectIfNeeded()
        for command in commands { counts[command.first ?? "", default: 0] += 1 }
        do throws(RedisConnectionError) {
            try sendAll(commands.flatMap(RESP.command))
            var replies: [RedisReply] = []
            for _ in commands { replies.append(try reply()) }
            return replies
        } catch {
            // A connection that failed mid-command may hold half a reply: start afresh next time.
            disconnect()
            throw error
        }
    }

    private func disconnect() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        buffer = []
    }

    private func connectIfNeeded() throws(RedisConnectionError) {
        guard descriptor < 0 else { return }
        descriptor = try Self.connected(host: host, port: port, timeout: timeout)
        do throws(RedisConnectionError) {
            if let password {
                try sendAll(RESP.command(["AUTH"] + (user.map { [$0] } ?? []) + [password]))
                if case .error(let message) = try reply() { throw RedisConnectionError("AUTH: \(message)") }
            }
            if let database, database != 0 {
                try sendAll(RESP.command(["SELECT", String(database)]))
                if case .error(let message) = try reply() { throw RedisConnectionError("SELECT: \(message)") }
            }
        } catch {
            disconnect()
            throw error
        }
    }

    private func reply() throws(RedisConnectionError) -> RedisReply {
        while true {
            if let (reply, used) = try RESP.reply(in: buffer[...]) {
                buffer.removeFirst(used)
                return reply
            }
            try receiveMore()
        }
    }

    private func receiveMore() throws(RedisConnectionError) {
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        guard count > 0 else {
            throw RedisConnectionError(
                count == 0
                    ? "\(host):\(port) closed the connection" : "no reply from \(host):\(port) within \(timeout)")
        }
        buffer += chunk[..<count]
    }

    private func sendAll(_ bytes: [UInt8]) throws(RedisConnectionError) {
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { systemSend(descriptor, $0.baseAddress, $0.count, flags) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw RedisConnectionError("cannot send to \(host):\(port): errno \(errno)") }
            offset += sent
        }
    }

    /// A socket connected to the first address of `host` that accepts, with `timeout` on its reads.
    private static func connected(host: String, port: Int, timeout: Duration) throws(RedisConnectionError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw RedisConnectionError("cannot resolve \(host)")
        }
        defer { freeaddrinfo(first) }
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let descriptor = systemSocket(
                address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            // The timeout bounds the connect (SO_SNDTIMEO, on Linux) and every reply (SO_RCVTIMEO).
            let (seconds, attoseconds) = timeout.components
            var limit = timeval(tv_sec: .init(seconds), tv_usec: .init(attoseconds / 1_000_000_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            #if canImport(Glibc)
                let connected = Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            #elseif canImport(Musl)
                let connected = Musl.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            #else
                let connected = Darwin.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            #endif
            guard connected == 0 else {
                close(descriptor)
                continue
            }
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
                setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            return descriptor
        }
        throw RedisConnectionError("cannot connect to \(host):\(port): errno \(errno)")
    }
}

// The system calls whose names the connection's members take.
#if canImport(Glibc)
    private let systemSend = Glibc.send
    private let systemSocket = Glibc.socket
#elseif canImport(Musl)
    private let systemSend = Musl.send
    private let systemSocket = Musl.socket
#else
    private let systemSend = Darwin.send
    private let systemSocket = Darwin.socket
#endif

/// Set once the task that sent a command was cancelled.
// @unchecked: `set` is read and written only while `lock` is held.
private final class Abandoned: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    func set() { lock.withLock { flag = true } }
    var isSet: Bool { lock.withLock { flag } }
}

/// The Redis protocol's framing (RESP2): commands out, replies in.
enum RESP {
    /// The most a reply may nest, and the largest bulk string: a hostile or broken server gets an
    /// error, not a stack overflow or an allocation of its choosing (Redis's own bulk limit is
    /// 512 MB).
    static let maximumDepth = 32
    static let maximumBulk = 512 << 20

    /// A command as an array of bulk strings.
    static func command(_ arguments: [String]) -> [UInt8] {
        var message = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let bytes = Array(argument.utf8)
            message += Array("$\(bytes.count)\r\n".utf8) + bytes + Array("\r\n".utf8)
        }
        return message
    }

    /// The first reply in `bytes` and how many bytes it takes; `nil` when `bytes` holds only the
    /// start of one.
    ///
    /// - Throws: ``RedisConnectionError`` for bytes that are not a RESP2 reply.
    static func reply(in bytes: ArraySlice<UInt8>) throws(RedisConnectionError) -> (RedisReply, Int)? {
        var index = bytes.startIndex
        guard let reply = try reply(bytes, at: &index, depth: 0) else { return nil }
        return (reply, index - bytes.startIndex)
    }

    private static func reply(_ bytes: ArraySlice<UInt8>, at index: inout Int, depth: Int)
        throws(RedisConnectionError) -> RedisReply?
    {
        guard depth <= maximumDepth else { throw RedisConnectionError("a reply nested deeper than \(maximumDepth)") }
        guard let line = self.line(bytes, at: &index) else { return nil }
        let body = String(decoding: line.dropFirst(), as: UTF8.self)
        switch line.first {
        case UInt8(ascii: "+"): return .status(body)
        case UInt8(ascii: "-"): return .error(body)
        case UInt8(ascii: ":"):
            if let value = Int64(body) { return .integer(value) }
        case UInt8(ascii: "$"):
            guard let size = Int(body), size >= -1, size <= maximumBulk else { break }
            if size == -1 { return .bulk(nil) }
            guard bytes.endIndex - index >= size + 2 else { return nil }
            guard bytes[index + size] == 13, bytes[index + size + 1] == 10 else { break }
            defer { index += size + 2 }
            return .bulk(String(decoding: bytes[index..<(index + size)], as: UTF8.self))
        case UInt8(ascii: "*"):
            guard let size = Int(body), size >= -1 else { break }
            if size == -1 { return .null }
            var items: [RedisReply] = []
            for _ in 0..<size {
                guard let item = try reply(bytes, at: &index, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(items)
        default: break
        }
        throw RedisConnectionError("not a RESP2 reply: \(String(decoding: line.prefix(80), as: UTF8.self))")
    }

    /// The line at `index` without its CRLF, moving `index` past it; `nil` when no line end is there yet.
    private static func line(_ bytes: ArraySlice<UInt8>, at index: inout Int) -> ArraySlice<UInt8>? {
        var end = index
        while end + 1 < bytes.endIndex {
            if bytes[end] == 13, bytes[end + 1] == 10 {
                defer { index = end + 2 }
                return bytes[index..<end]
            }
            end += 1
        }
        return nil
    }
}
