import Foundation
import RateLimitRedis  // one limit for every process, on a Redis Cluster and its replicas

// Try it on a cluster: `swift run example-redis-cluster redis://10.0.0.1:6379 redis://10.0.0.2:6379`
// (seed nodes; one is enough), with REDIS_REPLICAS=1 when each master has a replica. Without seeds:
// REDIS_URL, or redis://127.0.0.1:6379 (a one-node cluster: `redis-server --cluster-enabled yes`).
let arguments = Array(CommandLine.arguments.dropFirst())
let seeds =
    arguments.isEmpty ? [ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379"] : arguments
let replicas = Int(ProcessInfo.processInfo.environment["REDIS_REPLICAS"] ?? "") ?? 0

// Each call goes to the master of its key's slot; MOVED and ASK are followed. With replicas, each
// decision waits up to 50 ms for them, so that a failover loses no permit that was given.
let cluster = try RedisClusterConnection(
    seeds: seeds,
    acknowledgement: replicas > 0 ? try RedisReplicaAcknowledgement(replicas: replicas, within: .milliseconds(50)) : nil
)

// Ten a second and a thousand an hour for one user: one call decides both limits, over keys that
// share the hash tag {user:42} (so one slot): both admit, or neither counts the request.
let perUser = try CompositeLimit(
    .tokenBucket(try TokenBucket(capacity: 10, permitsPerPeriod: 10, period: .seconds(1))),
    .fixedWindow(try FixedWindow(limit: 1_000, window: .seconds(3600))))
let quota = RedisRateLimiter(perUser, key: "rl:{user:42}", runner: cluster)
for request in 1...12 {
    do {
        switch try await quota.tryAcquire() {
        case .allowed(let remaining): print("request \(request): go (\(remaining) more right now)")
        case let refused: print("request \(request): retry in \(refused.retryAfter ?? .zero)")
        }
    } catch {
        // The master is down (a failover under way) or too few replicas acknowledged: fail closed.
        print("request \(request): not sent, \(error)")
    }
}
print("masters \(cluster.masters), redirections followed \(cluster.redirectionsFollowed)")
