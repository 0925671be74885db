import Foundation
import RateLimitConformance
import RateLimitTestSupport

/// Paths of the repository, found from this file's location.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    static func json(_ relative: String) throws -> JSONValue {
        let text = try String(contentsOfFile: path(relative), encoding: .utf8)
        return try JSONValue(parsing: text)
    }

    /// The `ratelimit-conformance` executable built next to the test bundle.
    static var command: String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        #if os(macOS)
            if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
                directory = bundle.bundleURL.deletingLastPathComponent()
            }
        #endif
        return directory.appendingPathComponent("ratelimit-conformance").path
    }

    /// The Python example implementation, as a command run from the repository root.
    static let python = "python3 Examples/python/ratelimiter.py"

    /// A fresh empty directory under the system's temporary directory; the test removes it
    /// (`defer { Repository.remove(folder) }`), so runs leave nothing behind.
    static func temporaryDirectory() throws -> String {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("ratelimit-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes a directory of ``temporaryDirectory()`` and everything in it.
    static func remove(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The outcome of running the command.
struct CommandRun {
    var status: Int32
    var output: String
    var errors: String
    /// How long it ran, in served time (RateLimitTestSupport's ServedTime): what a test may judge.
    var served: Duration
}

/// Runs `ratelimit-conformance` with `arguments` from the repository root, killing it after
/// `limit` of served time (RateLimitTestSupport's ServedTime) so that a hang fails the test
/// instead of stalling it. It suspends instead of
/// blocking, and reads the command's output on threads of its own: Swift Testing runs tests on
/// the cooperative pool (two threads on a 2-core machine), which on Linux is Dispatch's global
/// queue, so a blocking read there for a command's minute starved every other test's tasks.
func runCommand(
    _ arguments: [String], limit: Duration = .seconds(120), environment: [String: String] = [:],
    executable: String = Repository.command
) async throws -> CommandRun {
    // An implementation gets a long answer timeout unless the test sets one: only the tests of
    // hangs judge it, and a loaded machine starved the Python example for over 5 s (the default)
    // in a repeat run beside three CPU-bound jobs. The test's own limit is in served time.
    let runsAnImplementation = arguments.contains("--exec") || arguments.contains("--matrix")
    let arguments =
        runsAnImplementation && !arguments.contains("--timeout") ? arguments + ["--timeout", "300"] : arguments
    // The command and the implementation it runs take a core each: one command at a time.
    return try await inHeavyLane {
        try await runCommandNow(arguments, limit: limit, environment: environment, executable: executable)
    }
}

private func runCommandNow(_ arguments: [String], limit: Duration, environment: [String: String], executable: String)
    async throws -> CommandRun
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = Repository.root
    var variables = ProcessInfo.processInfo.environment
    for (key, value) in environment { variables[key] = value }
    process.environment = variables
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let started = ServedTime.now
    // Read both pipes while it runs (on Dispatch's threads), so a chatty command cannot block on a full pipe.
    final class Collected: @unchecked Sendable {
        // Each property is written by exactly one reader block and read after the group has
        // notified; the lock makes that order visible to ThreadSanitizer too, which does not
        // follow it through the notification and the continuation.
        private let lock = NSLock()
        private var storedOutput = Data()
        private var storedErrors = Data()
        var output: Data {
            get { lock.withLock { storedOutput } }
            set { lock.withLock { storedOutput = newValue } }
        }
        var errors: Data {
            get { lock.withLock { storedErrors } }
            set { lock.withLock { storedErrors = newValue } }
        }
    }
    let collected = Collected()
    let group = DispatchGroup()
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { ended in continuation.resume(returning: ended.terminationStatus) }
        do { try process.run() } catch {
            process.terminationHandler = nil
            return continuation.resume(throwing: error)
        }
        group.enter()
        Thread {
            collected.output = output.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }.start()
        group.enter()
        Thread {
            collected.errors = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }.start()
        let identifier = process.processIdentifier
        Task {
            while process.isRunning, ServedTime.now - started < limit { await pause(.milliseconds(50)) }
            guard process.isRunning else { return }
            process.terminate()
            await pause(.seconds(2))
            if process.isRunning { kill(identifier, SIGKILL) }
        }
    }
    await withCheckedContinuation { (read: CheckedContinuation<Void, Never>) in
        group.notify(queue: .global()) { read.resume() }
    }
    return CommandRun(
        status: status, output: String(decoding: collected.output, as: UTF8.self),
        errors: String(decoding: collected.errors, as: UTF8.self), served: ServedTime.now - started)
}
