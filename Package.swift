// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "swift-rate-limit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "RateLimitCore", targets: ["RateLimitCore"]),
        .library(name: "RateLimitConformance", targets: ["RateLimitConformance"]),
        .executable(name: "ratelimit-conformance", targets: ["ratelimit-conformance"]),
    ],
    targets: [
        // The pure model: value-type state machines, standard library only.
        .target(name: "RateLimitCore"),
        // Vectors, the reference over any strategy, randomized differential runs, shrinking.
        .target(name: "RateLimitConformance", dependencies: ["RateLimitCore"]),
        .executableTarget(name: "ratelimit-conformance", dependencies: ["RateLimitConformance", "RateLimitCore"]),
        .testTarget(name: "RateLimitCoreTests", dependencies: ["RateLimitCore", "RateLimitConformance"]),
        .testTarget(
            name: "RateLimitConformanceTests",
            dependencies: ["RateLimitConformance", "RateLimitCore", "ratelimit-conformance"],
            exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
