import Foundation
import RateLimitRedis
import RateLimitTestSupport
import RedisTestSupport
import Testing

// Many processes, one key, the server's clock (Spec/SharedLimits.md, SHARED-1 and SHARED-2):
// four worker processes (ratelimit-redis-bench --worker) fire weighted acquires at one GCRA for
// 1.5 s. What the server admitted is read back from the server's own log of writes, its
// append-only file: every admission is one HSET of the key's `tat` and `last` (a refusal writes
// nothing, CORE-8), so each admission's instant e = last and its permits n = (tat − max(previous
// tat, e)) / T (GCRA-4) come from the server, not from the clients. Then:
// - nothing lost or counted twice: the permits in the log are the permits the workers were told
//   they got;
// - no over-admission: over every window [e_i, e_j] between two admissions, the permits admitted
//   are at most B + ⌊(e_j − e_i) / T⌋ (GCRA-11: the work pending never exceeds τ = B · T), which
//   bounds every window of time, since a window's admissions lie between its first and its last.

@Suite(
    "RateLimitRedis: four processes, one key", .serialized, .tags(.realTime), .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisMultiProcessRealTimeTests {
    @Test(
        "SHARED-1 SHARED-2 GCRA-11 four processes on the server's clock: no window over the bound, every admission once"
    )
    func fourProcesses() async throws {
        try await inHeavyLane {
            let server = try await RedisServer.start(options: ["--appendonly", "yes", "--appendfsync", "no"])
            defer { server.stop() }
            let (burst, interval): (Int64, Int64) = (10, 1_000_000)  // bursts of 10, then one permit a millisecond
            let key = "{shared}:gcra"
            let runs = try await withThrowingTaskGroup(of: WorkerRun.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await runWorker(["--worker", "\(server.port)", key, "\(burst)", "\(interval)", "1500"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for run in runs { #expect(run.status == 0 && run.failures == 0, "a worker failed: \(run.errors)") }
            let told = runs.reduce(0) { $0 + $1.admitted }
            let decisions = runs.reduce(0) { $0 + $1.decisions }

            let admissions = try admissionsInLog(of: server, key: key, interval: interval)
            let logged = admissions.reduce(0) { $0 + $1.permits }
            #expect(logged == told, "the log holds \(logged) permits, the workers were granted \(told)")
            #expect(zip(admissions, admissions.dropFirst()).allSatisfy { $0.instant <= $1.instant })
            // Every window between two admissions: permits over B + ⌊span / T⌋.
            var worst = Int64.min
            var windowsOver = 0
            for i in admissions.indices {
                var permits: Int64 = 0
                for j in i..<admissions.count {
                    permits += admissions[j].permits
                    let excess = permits - (burst + (admissions[j].instant - admissions[i].instant) / interval)
                    worst = max(worst, excess)
                    if excess > 0 { windowsOver += 1 }
                }
            }
            #expect(windowsOver == 0, "\(windowsOver) windows hold more than the bound, by up to \(worst) permits")
            let span = (admissions.last?.instant ?? 0) - (admissions.first?.instant ?? 0)
            #expect(!admissions.isEmpty && logged > burst, "the workers got \(logged) permits")
            print(
                "four processes, 1.5 s: \(decisions) decisions, \(logged) permits admitted in \(admissions.count) "
                    + "admissions over \(span / 1_000_000) ms (bound \(burst + span / interval)); closest window "
                    + "\(-worst) permits under its bound; windows over: \(windowsOver)")
        }
    }
}

/// One worker's run.
struct WorkerRun: Sendable {
    var status: Int32
    var admitted: Int64
    var decisions: Int
    var failures: Int
    var errors: String
}

/// Runs a worker with `arguments` and reads its summary.
private func runWorker(_ arguments: [String]) async throws -> WorkerRun {
    let (status, text, problems) = try await runRedisBench(arguments)
    let fields = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Int] ?? [:]
    return WorkerRun(
        status: status, admitted: Int64(fields["admitted"] ?? -1), decisions: fields["decisions"] ?? 0,
        failures: fields["failures"] ?? -1, errors: problems + text)
}

/// Runs `ratelimit-redis-bench` (built next to the test bundle) with `arguments`, awaiting its
/// exit; one that has not exited after 150 s is killed (the test then fails). Its exit status,
/// standard output and standard error.
func runRedisBench(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("ratelimit-redis-bench")
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    // Read while it runs (a worker's output can outgrow the pipe's buffer), on threads of Dispatch:
    // a read that blocks must not hold a thread of the cooperative pool.
    let read = Task { await readToEnd(output.fileHandleForReading) }
    let readErrors = Task { await readToEnd(errors.fileHandleForReading) }
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 150) { if process.isRunning { process.terminate() } }
    }
    try? output.fileHandleForWriting.close()
    try? errors.fileHandleForWriting.close()
    return (
        status, String(decoding: await read.value, as: UTF8.self),
        String(decoding: await readErrors.value, as: UTF8.self)
    )
}

/// Everything `handle` gives until its end, read on a thread of Dispatch.
private func readToEnd(_ handle: FileHandle) async -> Data {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: handle.readDataToEndOfFile()) }
    }
}

/// One admission as the server logged it.
struct LoggedAdmission {
    var instant: Int64
    var permits: Int64
}

/// The admissions of the GCRA at `key`, from the server's append-only file: each HSET of `tat`
/// and `last` is one admission at `last` of (tat − max(previous tat, last)) / T permits (GCRA-4).
private func admissionsInLog(of server: RedisServer, key: String, interval: Int64) throws -> [LoggedAdmission] {
    let folder = URL(fileURLWithPath: server.directory).appendingPathComponent("appendonlydir")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        .filter { $0.hasSuffix(".incr.aof") }.sorted()
    #expect(files.count == 1, "\(files)")
    var admissions: [LoggedAdmission] = []
    var previousTat: Int64?
    for file in files {
        for command in try RESPLog(Array(try Data(contentsOf: folder.appendingPathComponent(file)))).commands
        where command.count == 6 && command[0] == "HSET" && command[1] == key {
            guard command[2] == "tat", command[4] == "last", let tat = Int64(command[3]), let last = Int64(command[5])
            else { throw RedisTestFailure("an unexpected write: \(command)") }
            let start = max(previousTat ?? last, last)
            guard tat > start, (tat - start) % interval == 0 else {
                throw RedisTestFailure("tat \(tat) does not follow \(start) by whole emission intervals")
            }
            admissions.append(LoggedAdmission(instant: last, permits: (tat - start) / interval))
            previousTat = tat
        }
    }
    return admissions
}

/// The commands of an append-only file: RESP arrays of bulk strings, one after the other.
private struct RESPLog {
    var commands: [[String]] = []

    init(_ bytes: [UInt8]) throws {
        var index = 0
        func line() throws -> String {
            guard let end = bytes[index...].firstIndex(of: 10), end > index, bytes[end - 1] == 13 else {
                throw RedisTestFailure("a truncated append-only file at byte \(index)")
            }
            defer { index = end + 1 }
            return String(decoding: bytes[index..<(end - 1)], as: UTF8.self)
        }
        while index < bytes.count {
            let header = try line()
            guard header.first == "*", let count = Int(header.dropFirst()) else {
                throw RedisTestFailure("not a command: \(header)")
            }
            var command: [String] = []
            for _ in 0..<count {
                let size = try line()
                guard size.first == "$", let length = Int(size.dropFirst()), index + length + 2 <= bytes.count else {
                    throw RedisTestFailure("not a bulk string: \(size)")
                }
                command.append(String(decoding: bytes[index..<(index + length)], as: UTF8.self))
                index += length + 2
            }
            commands.append(command)
        }
    }
}
