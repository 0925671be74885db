import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `/bin/sh -c COMMAND`, spoken to in lines over stdin/stdout, with
/// a timeout on every read. Anything it writes to stderr is kept and reported. It is always
/// reaped: `close()` asks it to exit, then kills it.
final class ChildProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffered: [UInt8] = []
    private(set) var errorText = ""
    let command: String

    /// The longest line accepted from the child.
    static let maximumLineBytes = 1 << 20

    init(command: String) throws {
        self.command = command
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        signal(SIGPIPE, SIG_IGN)  // a dead child must surface as an error, not kill the harness
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    /// Sends one line (a newline is appended).
    func send(_ line: String) throws(SubjectFailureReason) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        let descriptor = input.fileHandleForWriting.fileDescriptor
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc_write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .died("the implementation closed its input (exit status \(exitStatus()))")
            }
            offset += written
        }
    }

    /// The next line from stdout, waiting at most `timeout` seconds.
    func receiveLine(timeout: Double) throws(SubjectFailureReason) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            guard buffered.count <= Self.maximumLineBytes else {
                throw .garbage("a line longer than \(Self.maximumLineBytes) bytes", String(decoding: buffered.prefix(200), as: UTF8.self))
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw .timeout(timeout, String(decoding: buffered.prefix(200), as: UTF8.self)) }
            var descriptors = [
                pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: errors.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, Int32(min(remaining * 1_000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .died("poll failed (errno \(errno))")
            }
            if descriptors[1].revents != 0 { drainErrors() }
            if descriptors[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = chunk.withUnsafeMutableBytes { Glibc_read(descriptors[0].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffered += chunk[..<count]
                } else if count == 0 {
                    drainErrors()
                    throw .died("the implementation closed its output (exit status \(exitStatus()))")
                } else if errno != EINTR && errno != EAGAIN {
                    throw .died("reading its output failed (errno \(errno))")
                }
            }
        }
    }

    /// Reads whatever is waiting on stderr, without blocking.
    func drainErrors() {
        let descriptor = errors.fileHandleForReading.fileDescriptor
        while true {
            var probe = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            guard poll(&probe, 1, 0) > 0, probe[0].revents & Int16(POLLIN) != 0 else { return }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { Glibc_read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            if errorText.utf8.count < 10_000 { errorText += String(decoding: chunk[..<count], as: UTF8.self) }
        }
    }

    /// The exit status once the child has exited, or a note that it still runs.
    func exitStatus() -> String {
        for _ in 0..<50 where process.isRunning { usleep(10_000) }
        return process.isRunning ? "still running" : "\(process.terminationStatus)"
    }

    /// Closes stdin (asking the child to exit), waits up to `grace` seconds, then kills it; reaps it.
    func close(grace: Double = 2) {
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        drainErrors()
    }

    deinit {
        if process.isRunning { close(grace: 0) }
    }
}

/// What went wrong talking to the child.
enum SubjectFailureReason: Error {
    case timeout(Double, String)
    case died(String)
    case garbage(String, String)

    var message: String {
        switch self {
        case .timeout(let seconds, let partial):
            "no answer within \(seconds) s" + (partial.isEmpty ? "" : " (partial line: \(partial))")
        case .died(let how): how
        case .garbage(let what, _): what
        }
    }
}

// The C calls under names that do not collide with this file's methods.
@inline(__always) private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always) private func Glibc_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
