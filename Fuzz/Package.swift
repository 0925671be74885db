// swift-tools-version: 6.0
// Coverage-guided fuzzing (libFuzzer) of every parser of input the package does not control,
// through the main package's API (internal readers by @testable import), its products unchanged. Built and run by
// `make fuzz` (each target for a bounded time) and `make fuzz-long`; see Fuzz/README.md.
import PackageDescription

/// A fuzz target over one product of the main package. libFuzzer supplies `main`: the target
/// defines only `LLVMFuzzerTestOneInput`.
func fuzzTarget(_ name: String, over product: String) -> Target {
    .executableTarget(
        name: name, dependencies: [.product(name: product, package: "swift-rate-limit")],
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

let package = Package(
    name: "swift-rate-limit-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "swift-rate-limit", path: "..")],
    targets: [
        // Response fields: Retry-After, HTTP-dates, RateLimit / RateLimit-Policy, X-RateLimit-*.
        fuzzTarget("FuzzHTTP", over: "RateLimitHTTP"),
        // Every answer an implementation under test gives over the protocol, read and judged.
        fuzzTarget("FuzzProtocol", over: "RateLimitConformance"),
        // The JSON every file and every answer of an implementation under test is read with.
        fuzzTarget("FuzzJSON", over: "RateLimitConformance"),
        // Vector, scenario, HTTP vector, expectations and profile files.
        fuzzTarget("FuzzFiles", over: "RateLimitConformance"),
        // Codable configurations of every strategy.
        fuzzTarget("FuzzConfigurations", over: "RateLimitCore"),
        // Script replies from Redis to the shared limiters.
        fuzzTarget("FuzzRedis", over: "RateLimitRedis"),
    ]
)
