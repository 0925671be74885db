// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "MyApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        // A checkout of swift-rate-limit (here: this repository, two folders up), or its Git URL:
        // .package(url: "<the URL you cloned it from>", branch: "main")
        .package(name: "swift-rate-limit", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "MyApp",
            dependencies: [.product(name: "RateLimitActor", package: "swift-rate-limit")]
        )
    ]
)
