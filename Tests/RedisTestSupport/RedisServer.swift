import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A real redis-server for one test (or one benchmark run): on a free port of 127.0.0.1, without
// persistence unless asked, stopped at the end, also when the test fails, and also when this
// process ends however it ends (a watcher kills it once the pipe to it closes).

/// What went wrong with a test's redis-server or connection.
public struct RedisTestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// redis-server on a free port of 127.0.0.1, without persistence; on demand a one-node cluster
/// that owns every slot.
public final class RedisServer: @unchecked Sendable {
    // @unchecked: `process` and `input` are replaced only by `restart()`, which a test calls from
    // the one task that owns the server; the other members are immutable.

    /// redis-server 7 or later (the scripts use Redis 7's `#!lua` flags), looked up once.
    public static let installed = Task { await RedisServer.find() }

    /// Why the Redis tests skip on this machine, or `nil` when redis-server 7 is installed.
    public static let installHint =
        "redis-server 7 or later is not installed: apt-get install redis-server (macOS: brew install redis)"

    public let port: Int
    /// The port of its cluster bus (cluster nodes), which `CLUSTER MEET` names.
    public let busPort: Int
    /// The folder of its log and of its append-only file, if any.
    public let directory: String
    private let executable: String
    private let arguments: [String]
    private var process = Process()
    private var input = Pipe()

    /// Starts a server and waits until it serves: as a one-node cluster, every slot (Redis waits
    /// about 2 s before it declares a new cluster's state ok). `options` are more configuration
    /// (`["--maxmemory", "1mb"]`).
    public static func start(cluster: Bool = false, options: [String] = []) async throws -> RedisServer {
        guard let executable = await installed.value else { throw RedisTestFailure(installHint) }
        return try RedisServer(executable: executable, cluster: cluster, ownsEverySlot: true, options: options)
    }

    /// Starts a cluster node that owns no slot yet (``RedisCluster`` joins several), once it accepts
    /// connections.
    public static func startClusterNode() async throws -> RedisServer {
        guard let executable = await installed.value else { throw RedisTestFailure(installHint) }
        return try RedisServer(executable: executable, cluster: true, ownsEverySlot: false, options: [])
    }

    private let ownsEverySlot: Bool

    private init(executable: String, cluster: Bool, ownsEverySlot: Bool, options: [String]) throws {
        self.ownsEverySlot = ownsEverySlot
        // Two ports: the clients', and the cluster bus's (by default the first plus 10,000).
        let ports = try LocalSocket.freePorts(2)
        port = ports[0]
        busPort = ports[1]
        directory = try Self.temporaryDirectory()
        self.executable = executable
        var arguments = [
            "--port", "\(ports[0])", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory,
            "--logfile", "\(directory)/redis.log",
        ]
        if cluster {
            arguments += [
                "--cluster-enabled", "yes", "--cluster-port", "\(ports[1])", "--cluster-config-file",
                "\(directory)/nodes.conf",
            ]
        }
        self.arguments = arguments + options
        try launch(cluster: cluster)
    }

    private func launch(cluster: Bool) throws {
        process = Process()
        input = Pipe()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // The shell becomes the server (exec) after starting a watcher that kills it once the
        // shell's standard input (kept as descriptor 3) closes: at stop(), or when this process
        // ends, however it ends. With SIGKILL, and no `wait` in the shell: children of this process
        // inherit a signal mask in which SIGTERM and SIGCHLD may be blocked, and the server has
        // nothing to save.
        process.arguments =
            [
                "-c",
                "exec 3<&0; { cat <&3 > /dev/null; kill -KILL $$; } & exec \"$0\" \"$@\" 3<&- < /dev/null",
                executable,
            ] + arguments
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do { try waitUntilReady(cluster: cluster) } catch {
            stop()
            throw error
        }
    }

    /// Kills the server (its state is lost: no persistence) and starts it again on the same port.
    public func restart() throws {
        end()
        try launch(cluster: false)
    }

    private func waitUntilReady(cluster: Bool) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        var connection: RESPConnection?
        while connection == nil {
            connection = try? RESPConnection(port: port)
            if connection == nil {
                guard process.isRunning else { throw failure("exited") }
                guard ContinuousClock.now < deadline else { throw failure("did not accept connections within 10 s") }
                pauseForARealServer()
            }
        }
        guard let redis = connection else { throw failure("did not accept connections within 10 s") }
        guard cluster, ownsEverySlot else { return }
        guard try redis.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383") == .status("OK") else {
            throw failure("refused CLUSTER ADDSLOTSRANGE")
        }
        while try redis.call("CLUSTER", "INFO").text?.contains("cluster_state:ok") != true {
            guard ContinuousClock.now < deadline else { throw failure("did not reach cluster_state:ok within 10 s") }
            pauseForARealServer()
        }
    }

    /// A failure that names this server and `what` it did, with its log.
    public func failure(_ what: String) -> RedisTestFailure {
        let log = (try? String(contentsOfFile: "\(directory)/redis.log", encoding: .utf8)) ?? ""
        return RedisTestFailure("redis-server on port \(port) \(what); its log:\n\(log)")
    }

    /// Sends `signal` to the server: `SIGSTOP` and `SIGCONT` freeze and thaw it, `SIGKILL` is a
    /// crash (``stop()`` still cleans up after it).
    public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Stops the server and waits for it to exit.
    public func stop() {
        end()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Kills the server and waits for it to exit. Closing the pipe ends its watcher, and the kill
    /// ends the server even while a descriptor of that pipe lives on in some other child of this
    /// process, which would keep the watcher waiting (a subject process that inherited one held a
    /// test here, and a whole run, for as long as it ran).
    private func end() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The path of redis-server 7 or later, or nil.
    private static func find() async -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let folders =
            path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/bin", "/opt/homebrew/bin"]
        guard let executable = folders.map({ "\($0)/redis-server" }).first(where: FileManager.default.isExecutableFile)
        else { return nil }
        // "Redis server v=7.0.15 sha=...": the major version.
        guard let version = try? await output(of: executable, ["--version"]),
            let major = version.split(separator: "v=").dropFirst().first?.prefix(while: \.isNumber),
            let number = Int(major), number >= 7
        else { return nil }
        return executable
    }

    /// What `executable` prints, once it has exited (it is awaited, not waited for).
    private static func output(of executable: String, _ arguments: [String]) async throws -> String {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            process.terminationHandler = { _ in ended.resume() }
            do { try process.run() } catch {
                process.terminationHandler = nil
                ended.resume()
            }
        }
        return String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
    }

    /// A fresh empty directory under the system's temporary directory.
    private static func temporaryDirectory() throws -> String {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("ratelimit-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// A listening socket of 127.0.0.1 that never accepts: a connection to it is made (the system
/// queues it) and a command sent to it is never answered, as from a server that hangs.
public final class SilentListener: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        let descriptor = try LocalSocket.descriptor()
        var address = LocalSocket.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ready, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw RedisTestFailure("cannot listen on 127.0.0.1: errno \(errno)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// A port of 127.0.0.1 on which nothing listens (it was free when asked): a connection to it is
/// refused at once.
public func unusedPort() throws -> Int { try LocalSocket.freePorts(1)[0] }

/// Whether something listening on `port` of 127.0.0.1 accepts a connection now (a server that
/// has started).
public func portAccepts(_ port: Int) -> Bool {
    guard let descriptor = try? LocalSocket.descriptor() else { return false }
    defer { close(descriptor) }
    var address = LocalSocket.loopback(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// The one real-time wait of the tests that start a real server (redis-server, nginx), and the
/// exception to driving an injected clock: such a server starts listening, and a Redis cluster
/// declares itself ready, on its own time. Every decision the tests check is made on instants they
/// pass in, or on the server's own clock or log read back (PEXPIRETIME, TIME, nginx's access log),
/// never on how long they waited.
public func pauseForARealServer() { usleep(20_000) }
