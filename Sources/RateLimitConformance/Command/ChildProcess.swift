import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `/bin/sh -c COMMAND` in a process group of its own, spoken to in
/// lines over stdin/stdout, with a timeout on every read. Anything it writes to stderr is kept.
/// `close()` asks it to exit, then kills the whole group (the shell and whatever it started, so
/// no grandchild keeps the pipes open) and reaps it: the harness never hangs on a child.
package final class ChildProcess {
    private let pid: pid_t
    private let stdinWrite: Int32
    private let stdoutRead: Int32
    private let stderrRead: Int32
    private var buffered: [UInt8] = []
    private var reaped = false
    private var status: Int32 = 0
    package private(set) var errorText = ""

    /// The longest line accepted from the child.
    package static let maximumLineBytes = 1 << 20

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    #if canImport(Glibc)
        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Glibc
        /// module does not import, looked up once.
        private static let addCloseFrom:
            (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
                guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
                return unsafeBitCast(
                    symbol,
                    to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
            }()

        /// Closes every descriptor from 3 on in the child: with `addclosefrom`, or else each one
        /// open now (one opened between the listing and the spawn may still reach the child).
        private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
            if let addCloseFrom, addCloseFrom(&actions, 3) == 0 { return }
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for descriptor in open.compactMap({ Int32($0) }) where descriptor >= 3 {
                posix_spawn_file_actions_addclose(&actions, descriptor)
            }
        }
    #endif

    package init(command: String) throws {
        signal(SIGPIPE, SIG_IGN)  // a dead child must surface as an error, not kill the harness
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        var errors: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0, pipe(&errors) == 0 else {
            throw SpawnError(description: "pipe failed (errno \(errno))")
        }
        for descriptor in [input[1], output[0], errors[0]] { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }

        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
            var attributes: posix_spawnattr_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        for descriptor in [input[0], output[1], errors[1]] { posix_spawn_file_actions_addclose(&actions, descriptor) }
        // Nothing else of this process reaches the child: a descriptor it inherited (another
        // child's pipe, a server's socket) would stay open as long as it runs, so whoever waits for
        // that descriptor's end would wait for this child instead (a test's redis-server, whose
        // watcher waits for its pipe to close, hung a whole test run that way).
        #if canImport(Glibc)
            Self.closeFrom3(&actions)
        #endif
        // A process group of its own (so killing it reaches its children too), with the signals
        // the harness ignores or catches back at their defaults.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        #if canImport(Darwin)
            // Darwin's form of closing every other descriptor: only those the actions name survive.
            let closeTheRest = POSIX_SPAWN_CLOEXEC_DEFAULT
        #else
            let closeTheRest: Int32 = 0
        #endif
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | closeTheRest))
        posix_spawnattr_setpgroup(&attributes, 0)

        var child: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, environ)
        for descriptor in [input[0], output[1], errors[1]] { posixClose(descriptor) }
        guard result == 0 else {
            for descriptor in [input[1], output[0], errors[0]] { posixClose(descriptor) }
            throw SpawnError(description: "posix_spawn failed (error \(result))")
        }
        pid = child
        stdinWrite = input[1]
        stdoutRead = output[0]
        stderrRead = errors[0]
        Self.track(child, running: true)
    }

    /// The process groups of the children still running, for ``endHarness(status:message:)``, and whether the
    /// harness is ending (then a child that starts is killed at once).
    // nonisolated(unsafe): every access (track and endHarness) holds `runningLock`.
    nonisolated(unsafe) private static var runningGroups: Set<pid_t> = []
    nonisolated(unsafe) private static var terminating = false
    private static let runningLock = NSLock()

    private static func track(_ group: pid_t, running: Bool) {
        runningLock.withLock {
            if running { runningGroups.insert(group) } else { runningGroups.remove(group) }
            // A child started while the harness ends (it saw the last one die and replaced it)
            // must not outlive it either.
            if running, terminating { kill(-group, SIGKILL) }
        }
    }

    /// Ends the harness with `status`, once: kills every child's process group still running (and
    /// any started from now on), then exits. The first caller, a signal's handler or the run's end,
    /// decides the status; a later one waits for that exit. So no implementation (nor anything it
    /// started) outlives the harness, and a signal is never reported as the run's own failure.
    package static func endHarness(status: Int32, message: String? = nil) -> Never {
        let groups = runningLock.withLock { () -> Set<pid_t>? in
            guard !terminating else { return nil }
            terminating = true
            return runningGroups
        }
        guard let groups else {
            while true { pause() }  // the other caller is exiting
        }
        for group in groups { kill(-group, SIGKILL) }
        if let message { FileHandle.standardError.write(Data(message.utf8)) }
        exit(status)
    }

    /// Makes SIGINT, SIGTERM and SIGHUP end the harness with status 128 + the signal, its
    /// children first. The handlers run on a Dispatch queue, not in signal context; keep the
    /// sources returned alive.
    package static func endEveryGroupOnSignal() -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                endHarness(
                    status: 128 + number, message: "\r\u{1B}[Kratelimit-conformance: stopped by signal \(number)\n")
            }
            source.resume()
            return source
        }
    }

    /// Output the child wrote that nobody asked for yet (a line after its answer, or before the
    /// next request), read without blocking; `nil` when there is none.
    package func pendingOutput() -> String? {
        buffered += Self.readAvailable(stdoutRead)
        guard !buffered.isEmpty else { return nil }
        let text = String(decoding: buffered.prefix(200), as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// Whether the child (the shell) is still running.
    package var isRunning: Bool {
        reap(blocking: false)
        return !reaped
    }

    /// Sends one line (a newline is appended).
    package func send(_ line: String) throws(SubjectFailureReason) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { posixWrite(stdinWrite, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                // Once it has exited, what it said on stderr is all there (a shell's "not found"
                // line, when the command is missing and the shell was quicker than this write).
                let exit = exitDescription
                drainErrors()
                throw .died("the implementation closed its input\(exit)")
            }
            offset += written
        }
    }

    /// The next line from stdout, waiting at most `timeout` seconds.
    package func receiveLine(timeout: Double) throws(SubjectFailureReason) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            guard buffered.count <= Self.maximumLineBytes else {
                throw .garbage(
                    "a line longer than \(Self.maximumLineBytes) bytes",
                    String(decoding: buffered.prefix(200), as: UTF8.self))
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw .timeout(timeout, String(decoding: buffered.prefix(200), as: UTF8.self)) }
            var descriptors = [
                pollfd(fd: stdoutRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stderrRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, Int32(min(remaining * 1_000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .died("poll failed (errno \(errno))")
            }
            if descriptors[1].revents != 0 { drainErrors() }
            if descriptors[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = chunk.withUnsafeMutableBytes { posixRead(stdoutRead, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffered += chunk[..<count]
                } else if count == 0 {
                    drainErrors()
                    throw .died("the implementation closed its output\(exitDescription)")
                } else if errno != EINTR && errno != EAGAIN {
                    throw .died("reading its output failed (errno \(errno))")
                }
            }
        }
    }

    /// Reads whatever is waiting on stderr, without blocking.
    package func drainErrors() {
        let bytes = Self.readAvailable(stderrRead)
        if !bytes.isEmpty, errorText.utf8.count < 10_000 { errorText += String(decoding: bytes, as: UTF8.self) }
    }

    /// Everything `descriptor` holds right now, read without blocking.
    private static func readAvailable(_ descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            var probe = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            guard poll(&probe, 1, 0) > 0, probe[0].revents & Int16(POLLIN) != 0 else { return bytes }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { posixRead(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// " (exit status N)" once the shell has exited (waiting up to half a second for it).
    private var exitDescription: String {
        let deadline = Date().addingTimeInterval(0.5)
        while !reaped, Date() < deadline {
            var probe = [pollfd(fd: stdoutRead, events: 0, revents: 0)]
            _ = poll(&probe, 1, 10)  // a 10 ms pause between non-blocking reaps
            reap(blocking: false)
        }
        guard reaped else { return "" }
        return " (exit status \(exitCode))"
    }

    private var exitCode: Int32 { (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -(status & 0x7F) }

    private func reap(blocking: Bool) {
        guard !reaped else { return }
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
        if result == pid {
            status = raw
            reaped = true
        } else if result < 0, errno != EINTR {
            reaped = true
        }
    }

    /// Closes stdin (asking the child to exit), waits up to `grace` seconds, then kills its whole
    /// process group and reaps it.
    package func close(grace: Double = 2) {
        posixClose(stdinWrite)
        let deadline = Date().addingTimeInterval(grace)
        while !reaped, Date() < deadline {
            var probe = [pollfd(fd: stdoutRead, events: 0, revents: 0)]
            _ = poll(&probe, 1, 10)
            reap(blocking: false)
        }
        kill(-pid, SIGKILL)  // the group: the shell, and anything it started that is still there
        reap(blocking: true)
        Self.track(pid, running: false)
        drainErrors()
        posixClose(stdoutRead)
        posixClose(stderrRead)
    }

    deinit {
        if !reaped {
            kill(-pid, SIGKILL)
            reap(blocking: true)
        }
        Self.track(pid, running: false)
    }
}

/// What went wrong talking to the child.
package enum SubjectFailureReason: Error {
    case timeout(Double, String)
    case died(String)
    case garbage(String, String)

    package var message: String {
        switch self {
        case .timeout(let seconds, let partial):
            "no answer within \(seconds) s" + (partial.isEmpty ? "" : " (partial line: \(partial))")
        case .died(let how): how
        case .garbage(let what, _): what
        }
    }
}

// The C calls under names that do not collide with methods.
@inline(__always) private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
@inline(__always) private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
@inline(__always) private func posixClose(_ fd: Int32) { _ = close(fd) }
