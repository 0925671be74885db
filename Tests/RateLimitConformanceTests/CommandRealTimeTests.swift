import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

/// The command's own timeouts and signals: what real time (a child that never answers, a signal)
/// does to a run, judged in served time.
@Suite(
    "The ratelimit-conformance command in real time: timeouts, hangs and signals", .serialized, .tags(.realTime),
    .realTime(patience: .seconds(3 * 60)))
struct CommandRealTimeTests {
    @Test("A hanging implementation times out, is killed and reaped; the harness never hangs")
    func hang() async throws {
        let run = try await runCommand(
            [
                "--exec", misbehaving("hang"), "--strategy", "fixed-window", "--case", "fixed-window/window-edges",
                "--timeout", "1",
            ], limit: .seconds(30))
        #expect(run.status == 1)
        #expect(run.output.contains("no answer within 1.0 s"), "\(run.output)")
        #expect(run.served < .seconds(15), "\(run.served)")
    }

    @Test(
        "CONF-11 A child that crashes or hangs at every case costs three cases per strategy, then the strategy stops",
        arguments: [("crash-always", "crashed"), ("hang-always", "did not answer in time")])
    func boundedCost(_ mode: String, _ reason: String) async throws {
        let run = try await runCommand(
            ["--exec", hostile(mode), "--strategy", "gcra,fixed-window", "--random", "50", "--timeout", "1"],
            limit: .seconds(60))
        #expect(run.status == 1)
        #expect(
            run.output.contains("STOP gcra: stopped after 3 consecutive cases in which the implementation \(reason); "),
            "\(run.output)")
        #expect(run.output.contains("STOP fixed-window: stopped after 3"))
        #expect(run.served < .seconds(20), "\(run.served)")
    }

    @Test(
        "CONF-11 SIGTERM and SIGINT end the implementation's whole process group, grandchildren included",
        arguments: [SIGTERM, SIGINT])
    func signalsEndTheGroup(_ signal: Int32) async throws {
        try await inHeavyLane { try await signalsEndTheGroupNow(signal) }
    }

    private func signalsEndTheGroupNow(_ signal: Int32) async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let pids = (folder as NSString).appendingPathComponent("pids")
        guard mkfifo(pids, 0o600) == 0 else {
            Issue.record("mkfifo failed")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Repository.command)
        process.arguments = ["--exec", hostile("grandchild", pids: pids), "--timeout", "600", "--strategy", "gcra"]
        process.currentDirectoryURL = Repository.root
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The child writes its pid and its grandchild's into the FIFO once both run, then hangs;
        // both hold the FIFO open, so its reader sees the end of file when both have ended.
        let reader = await withCheckedContinuation { (opened: CheckedContinuation<Int32, Never>) in
            Thread { opened.resume(returning: open(pids, O_RDONLY)) }.start()  // blocks until the child opens it
        }
        defer { close(reader) }
        // The FIFO is polled off the cooperative pool: a test blocks none of its threads.
        let line = await offThePool {
            var line = ""
            while !line.hasSuffix("\n"), let text = readChunk(reader, waiting: 30_000) { line += text }
            return line
        }
        #expect(line.split(separator: " ").count == 2, "the child wrote its pid and its grandchild's: \(line)")
        kill(process.processIdentifier, signal)
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            Thread {
                process.waitUntilExit()
                ended.resume()
            }.start()
        }
        #expect(process.terminationStatus == 128 + signal)
        let ended = await offThePool {
            while let text = readChunk(reader, waiting: 10_000), !text.isEmpty {}
            return readChunk(reader, waiting: 0) == ""
        }
        #expect(ended, "the child or its grandchild outlived the harness (\(line))")
    }
}
