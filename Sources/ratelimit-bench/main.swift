// ratelimit-bench: the cost of a decision and of a limiter, as ratios to the bare primitives
// measured in the same run (Performance.md, "Method"). `make bench` runs it in release mode.
//
//   ratelimit-bench            the full run: a table
//   ratelimit-bench --json     the same, as JSON for machines
//   ratelimit-bench --smoke    a few operations of everything, once (make verify: it must not rot)
//   ratelimit-bench --check    exit 1 when a target is missed (not one a bound shows out of reach)
//   ratelimit-bench --only <section>[,<section>]   some sections: pure, adapters, contention, registry, latency, memory,
//                                                  and peers (only when asked: make bench-peers)

import Foundation

//   ratelimit-bench --soak SECONDS         the registry, then the client, each under sustained mixed
//                                          traffic for SECONDS, memory sampled (Soak.swift,
//                                          ClientSoak.swift; make soak, and make verify for 10 s)
//   ratelimit-bench --profile <case> [n]   one loop of one case (n operations, 200,000 by default),
//                                          for callgrind or perf

if (3...4).contains(CommandLine.arguments.count), CommandLine.arguments[1] == "--profile" {
    let count = CommandLine.arguments.count == 4 ? Int(CommandLine.arguments[3]) : 200_000
    guard let count, count > 0 else {
        print("--profile <case> [n]: n must be a positive integer")
        exit(2)
    }
    do { try profile(CommandLine.arguments[2], count: count) } catch {
        print(error)
        exit(1)
    }
    exit(0)
}
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--soak" {
    guard let seconds = Double(CommandLine.arguments[2]), seconds > 0, seconds <= 86_400 else {
        print("--soak SECONDS: from 1 to 86400")
        exit(2)
    }
    let registryHeld = soak(seconds: seconds)
    let clientHeld = await clientSoak(seconds: seconds)
    exit(registryHeld && clientHeld ? 0 : 1)
}
let sections = ["pure", "adapters", "contention", "registry", "latency", "memory", "peers"]
var arguments = Set(CommandLine.arguments.dropFirst())
// The peers' loops run when asked, and in the smoke run, so that they never rot.
var only = Set(sections).subtracting(arguments.contains("--smoke") ? [] : ["peers"])
if let index = CommandLine.arguments.firstIndex(of: "--only"), index + 1 < CommandLine.arguments.count {
    let chosen = CommandLine.arguments[index + 1]
    only = Set(chosen.split(separator: ",").map(String.init))
    arguments.subtract(["--only", chosen])
}
let known: Set = ["--json", "--smoke", "--check", "--help"]
if !arguments.isSubset(of: known) || !only.isSubset(of: sections) || arguments.contains("--help") {
    print(
        "usage: ratelimit-bench [--json] [--smoke] [--check] [--only <\(sections.joined(separator: "|"))>[,...]] | --profile <\(profileCases.joined(separator: "|"))> [n]"
    )
    exit(arguments.contains("--help") ? 0 : 2)
}
// A process that has never started a thread is one where glibc's pthread_mutex_lock and unlock
// skip their atomic instructions (`__libc_single_threaded`): NSCondition and NSLock floors, and
// the lock adapter until issue 37, measured 8 ns faster there than in any app that shares a
// limiter between threads (Performance.md, "Contention"). So one is started first.
let started = DispatchSemaphore(value: 0)
Thread { started.signal() }.start()
started.wait()

let plan = Plan(smoke: arguments.contains("--smoke"))
let json = arguments.contains("--json")

func progress(_ text: String) {
    if !json { FileHandle.standardError.write(Data("· \(text)\n".utf8)) }
}

var results: [Measurement] = []
do {
    if only.contains("pure") {
        progress("pure steps")
        results += try pureSteps(plan: plan, stride: 1_000)
    }
    if only.contains("adapters") {
        progress("adapters")
        results += try await adapters(plan: plan)
    }
    if only.contains("contention") {
        progress("threads competing")
        results += try await contention(plan: plan)
    }
    if only.contains("registry") {
        progress("registry")
        results += try await registries(plan: plan)
    }
    if only.contains("latency") {
        progress("grant latency")
        results += try await grantLatency(plan: plan)
    }
    if only.contains("peers") {
        progress("the loops set beside Go's x/time/rate")
        results += try peers(plan: plan)
    }
    if only.contains("memory") {
        progress("memory")
        results += try memory(plan: plan)
    }
} catch {
    FileHandle.standardError.write(Data("ratelimit-bench: \(error)\n".utf8))
    exit(1)
}

let machine = Machine.current
if json {
    print(renderJSON(results, machine: machine, smoke: plan.smoke))
} else {
    print(renderTable(results, machine: machine, smoke: plan.smoke))
}
let missed = results.filter { $0.meetsTarget == false && !$0.outOfReach }
if arguments.contains("--check"), !missed.isEmpty {
    FileHandle.standardError.write(
        Data("ratelimit-bench: \(missed.count) target(s) missed: \(missed.map(\.name).joined(separator: "; "))\n".utf8))
    exit(1)
}
