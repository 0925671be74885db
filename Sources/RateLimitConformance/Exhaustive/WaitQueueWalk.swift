import RateLimitCore

// The exhaustive wait-queue walk (WaitQueueChecker.swift) for any implementation of the
// wait-queue extension: the path to every distinct state of a small queue, shortest first, sent
// as a scenario (Spec/vectors/scenarios/README.md) and compared step by step with the reference's
// answers, as generated scenarios are. Breadth first, so the first failing path of each cause is
// one of the shortest that shows it: no shrinking is needed. The spaces are those the Swift
// adapters are walked over (AdapterExhaustiveTests): a token bucket and a concurrency limit
// (with releases), three waiters, every priority, deadlines, retries naming an arrival, cancels.

/// The wait-queue walk as scenarios; see `WaitQueueWalk.swift`.
package enum WaitQueueWalk {
    /// The depth the walk reaches by default: every state within three operations.
    package static let defaultDepth = 3

    /// One space walked: its name, its configuration as a scenario gives it, and its paths.
    package struct Space: Sendable {
        package var name: String
        package var strategy: AnyRateLimitStrategy
        package var configuration: JSONValue
        package var paths: [WaitQueuePath]

        /// `strategy` behind a queue of ``WaitQueueWalk/queueLimit`` permits, and `paths` of it.
        package init(name: String, strategy: AnyRateLimitStrategy, paths: [WaitQueuePath]) {
            self.name = name
            self.strategy = strategy
            self.configuration = .object([
                ("strategy", .string(strategy.kind)), ("configuration", strategy.json),
                ("queueLimit", .integer(WaitQueueWalk.queueLimit)),
            ])
            self.paths = paths
        }
    }

    /// Every path of the two spaces to `depth` operations, each space's in breadth-first order.
    /// The scenarios' clock never goes back (WQ-11), so the walk moves it forward or not at all.
    package static func spaces(depth: Int) -> [Space] {
        func space(_ name: String, _ strategy: AnyRateLimitStrategy?, releases: Bool) -> Space? {
            guard let strategy else { return nil }
            let walked = WaitQueueSpace(
                strategy: strategy, queueLimit: queueLimit, horizon: 10, offsets: [0, 1, 2, 3],
                operations: WaitQueueSpace<AnyRateLimitStrategy>.operations(releases: releases, waiters: 3))
            guard let (_, paths) = try? WaitQueueChecker.walk(walked, name: name, depthLimit: depth, recordPaths: true)
            else { return nil }
            // The first path is the empty one (the queue as made): nothing to send.
            return Space(name: name, strategy: strategy, paths: paths.filter { !$0.steps.isEmpty })
        }
        return [
            space(
                "token-bucket",
                (try? TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 2)).map {
                    .tokenBucket($0)
                }, releases: false),
            space("concurrency", (try? ConcurrencyLimiter(limit: 2)).map { .concurrency($0) }, releases: true),
        ].compactMap { $0 }
    }

    /// The queue limit of every space: three waiters of one permit.
    package static let queueLimit: Int64 = 3

    /// Path `index` of `space` as a scenario with the reference's answers: the `k`th acquire gets
    /// ticket `k` (as the queue issues them), a deadline `now + timeout` and the arrival a retry
    /// names; a cancel names the ticket of the waiter at its position in service order (WQ-3), as
    /// the walk's own model of the queue has it. `nil` when the reference refuses a step.
    package static func scenario(_ space: Space, index: Int) -> ScenarioCase? {
        guard space.paths.indices.contains(index),
            case .success(var model)? = try? ScenarioMachine.waitQueue.reference(space.configuration, at: 0),
            let queue = try? WaitQueue(space.strategy, queueLimit: queueLimit, at: .origin)
        else { return nil }
        var node = QueueNode(queue: queue, waiters: [], latest: 0)
        var steps: [ScenarioStep] = []
        var tickets: Int64 = 0
        for step in space.paths[index].steps {
            let now = step.now
            let event: JSONValue
            switch step.operation {
            case .acquire(let permits, let priority, let timeout, let before):
                tickets += 1
                var members: [(String, JSONValue)] = [
                    ("kind", .string("acquire")), ("ticket", .integer(tickets)), ("permits", .integer(permits)),
                    ("priority", .string(priority.name)),
                ]
                if let timeout { members.append(("deadline", .integer(now + timeout))) }
                if let before { members.append(("arrival", .integer(now - before))) }
                event = .object(members)
            case .tryAcquire(let permits, let priority):
                event = .object([
                    ("kind", .string("tryAcquire")), ("permits", .integer(permits)),
                    ("priority", .string(priority.name)),
                ])
            case .cancel(let position):
                guard node.waiters.indices.contains(position), let ticket = node.waiters[position].ticket else {
                    return nil
                }
                event = .object([("kind", .string("cancel")), ("ticket", .integer(Int64(ticket.rawValue)))])
            case .release(let permits): event = .object([("kind", .string("release")), ("permits", .integer(permits))])
            case .reset: event = .object([("kind", .string("reset"))])
            case .advance: event = .object([("kind", .string("advance"))])
            }
            guard let answer = try? model.apply(event, at: now) else { return nil }
            _ = node.apply(step.operation, at: now, queueLimit: queueLimit)
            steps.append(ScenarioStep(now: now, event: event, expected: answer, comment: "walked"))
        }
        return ScenarioCase(
            id: "wait-queue/walk-\(space.name)-path-\(index)",
            summary: "the exhaustive wait-queue walk, \(space.name), path \(index)", clauses: [],
            configuration: space.configuration, body: .story(createdAt: 0, steps: steps))
    }
}
