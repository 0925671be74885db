// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "swift-rate-limit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "RateLimitCore", targets: ["RateLimitCore"]),
    ],
    targets: [
        // The pure model: value-type state machines, standard library only.
        .target(name: "RateLimitCore"),
        .testTarget(name: "RateLimitCoreTests", dependencies: ["RateLimitCore"]),
    ],
    swiftLanguageModes: [.v6]
)
