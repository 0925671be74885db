// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "swift-rate-limit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "RateLimitCore", targets: ["RateLimitCore"]),
        .library(name: "RateLimitConformance", targets: ["RateLimitConformance"]),
        .library(name: "RateLimitTesting", targets: ["RateLimitTesting"]),
        .executable(name: "ratelimit-conformance", targets: ["ratelimit-conformance"]),
        .executable(name: "ratelimit-bench", targets: ["ratelimit-bench"]),
        .library(name: "RateLimitClock", targets: ["RateLimitClock"]),
        .library(name: "RateLimitActor", targets: ["RateLimitActor"]),
        .library(name: "RateLimitLock", targets: ["RateLimitLock"]),
        .library(name: "RateLimitDispatch", targets: ["RateLimitDispatch"]),
        .library(name: "RateLimitAtomic", targets: ["RateLimitAtomic"]),
        .library(name: "RateLimitHTTP", targets: ["RateLimitHTTP"]),
        .library(name: "RateLimitClient", targets: ["RateLimitClient"]),
        .library(name: "RateLimitRedis", targets: ["RateLimitRedis"]),
    ],
    targets: [
        // The pure model: value-type state machines, standard library only.
        .target(name: "RateLimitCore"),
        // A coarse monotonic clock for the adapters (each re-exports it): the system's last tick.
        .target(name: "RateLimitClock"),
        // A software prefetch for the registry shells (Swift has none; not a product).
        .target(name: "CPrefetch"),
        // Reader slots and row locks for the lock registry's admissions in parallel (not a product).
        .target(name: "CReaderSlots", dependencies: ["CPrefetch"]),
        // What the adapters' shells share: the clock as a timeline, the machine they execute, event
        // streams (package access only: not a product).
        .target(name: "RateLimitShell", dependencies: ["RateLimitCore", "RateLimitClock", "CPrefetch"]),
        // Adapters: thin shells around the core's wait queue, one target each (import one).
        .target(name: "RateLimitActor", dependencies: ["RateLimitCore", "RateLimitClock", "RateLimitShell"]),
        .target(
            name: "RateLimitLock",
            dependencies: ["RateLimitCore", "RateLimitClock", "RateLimitShell", "CPrefetch", "CReaderSlots"]),
        .target(name: "RateLimitDispatch", dependencies: ["RateLimitCore", "RateLimitClock", "RateLimitShell"]),
        .target(name: "RateLimitAtomic", dependencies: ["RateLimitCore", "RateLimitClock", "RateLimitShell"]),
        // Server feedback: Retry-After, RateLimit and X-RateLimit fields, server quota, backoff. Pure.
        .target(name: "RateLimitHTTP", dependencies: ["RateLimitCore"]),
        // The rate-limited client: per-endpoint limits, server feedback, retries, URLSession.
        .target(
            name: "RateLimitClient",
            dependencies: ["RateLimitHTTP", "RateLimitActor", "RateLimitCore", "RateLimitShell"]),
        // Limits shared through Redis: the scripts of Sources/RateLimitRedis/Scripts (embedded), run through the app's own
        // Redis client (a protocol it implements), so the package still depends on no other package.
        .target(name: "RateLimitRedis", dependencies: ["RateLimitCore"], exclude: ["Scripts"]),
        // Vectors, the reference over any strategy, randomized differential runs, shrinking.
        .target(name: "RateLimitConformance", dependencies: ["RateLimitCore", "RateLimitHTTP", "RateLimitTesting"]),
        // What tests of code that waits or runs concurrently need: a clock moved by hand, and a
        // linearizability checker. Foundation only.
        .target(name: "RateLimitTesting"),
        .executableTarget(name: "ratelimit-conformance", dependencies: ["RateLimitConformance", "RateLimitCore"]),
        // Benchmarks as ratios to bare primitives (make bench); heap statistics come from a C shim.
        .target(name: "CHeapStatistics"),
        .executableTarget(
            name: "ratelimit-bench",
            dependencies: [
                "RateLimitCore", "RateLimitClock", "RateLimitActor", "RateLimitLock", "RateLimitDispatch",
                "RateLimitAtomic", "RateLimitClient", "RateLimitTesting", "CHeapStatistics", "CPrefetch",
                "CReaderSlots",
            ]),
        // The Redis limiter's cost against one round trip of a trivial script (make bench-redis), and
        // the worker processes of the multi-process test (--worker).
        .executableTarget(
            name: "ratelimit-redis-bench", dependencies: ["RateLimitRedis", "RedisTestSupport", "CHeapStatistics"],
            path: "Tests/ratelimit-redis-bench"),
        // The documentation's examples (the README's and the DocC articles'), one per product, each built
        // with that product alone; `make readme-check` keeps their copies identical to these files.
        .executableTarget(name: "example-core", dependencies: ["RateLimitCore"], path: "Examples/Swift/Core"),
        .executableTarget(name: "example-actor", dependencies: ["RateLimitActor"], path: "Examples/Swift/Actor"),
        .executableTarget(name: "example-lock", dependencies: ["RateLimitLock"], path: "Examples/Swift/Lock"),
        .executableTarget(
            name: "example-dispatch", dependencies: ["RateLimitDispatch"], path: "Examples/Swift/Dispatch"),
        .executableTarget(name: "example-atomic", dependencies: ["RateLimitAtomic"], path: "Examples/Swift/Atomic"),
        .executableTarget(name: "example-http", dependencies: ["RateLimitHTTP"], path: "Examples/Swift/HTTP"),
        .executableTarget(name: "example-client", dependencies: ["RateLimitClient"], path: "Examples/Swift/Client"),
        .executableTarget(
            name: "example-adaptive", dependencies: ["RateLimitClient"], path: "Examples/Swift/Adaptive"),
        .executableTarget(name: "example-redis", dependencies: ["RateLimitRedis"], path: "Examples/Swift/Redis"),
        .executableTarget(
            name: "example-redis-cluster", dependencies: ["RateLimitRedis"], path: "Examples/Swift/RedisCluster"),
        .executableTarget(
            name: "example-conformance", dependencies: ["RateLimitConformance"], path: "Examples/Swift/Conformance"),
        // What only the tests share (not a product).
        .target(name: "RateLimitTestSupport", path: "Tests/RateLimitTestSupport"),
        // A redis-server started for a test, and a minimal RESP connection (not a product).
        .target(name: "RedisTestSupport", dependencies: ["RateLimitRedis"], path: "Tests/RedisTestSupport"),
        .testTarget(
            name: "RateLimitCoreTests", dependencies: ["RateLimitCore", "RateLimitConformance", "RateLimitTestSupport"]),
        .testTarget(
            name: "RateLimitAdapterTests",
            dependencies: [
                "RateLimitActor", "RateLimitLock", "RateLimitDispatch", "RateLimitAtomic", "RateLimitCore",
                "RateLimitShell",
                "RateLimitConformance", "RateLimitTestSupport",
            ]),
        .testTarget(
            name: "RateLimitHTTPTests",
            dependencies: ["RateLimitHTTP", "RateLimitCore", "RateLimitConformance", "RateLimitTestSupport"]),
        .testTarget(
            name: "RateLimitClientTests",
            dependencies: [
                "RateLimitClient", "RateLimitHTTP", "RateLimitActor", "RateLimitCore", "RateLimitConformance",
                "RateLimitTestSupport", "RedisTestSupport",
            ],
            exclude: ["Server"]),
        .testTarget(
            name: "RateLimitConformanceTests",
            dependencies: [
                "RateLimitConformance", "RateLimitCore", "RateLimitTestSupport", "RedisTestSupport",
                "ratelimit-conformance",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "RateLimitRedisTests",
            dependencies: [
                "RateLimitRedis", "RateLimitCore", "RateLimitConformance", "RateLimitTestSupport", "RedisTestSupport",
                "ratelimit-redis-bench",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
