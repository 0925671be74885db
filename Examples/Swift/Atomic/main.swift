import RateLimitAtomic  // lock-free GCRA: 64-bit platforms, macOS 15 / iOS 18 and later

if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
    let perClient = AtomicGCRA(try GCRA(burst: 20, emissionInterval: .milliseconds(50)))
    if case .allowed = perClient.tryAcquire() { print("serve") }  // one compare-and-swap, no lock, no queue
}
