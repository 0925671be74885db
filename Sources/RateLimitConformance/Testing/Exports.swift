// The test utilities (`ManualClock`, `LinearizabilityChecker`) live in their own product,
// RateLimitTesting, for apps that need them without the suite; the suite re-exports them, so that
// `import RateLimitConformance` still brings them.
@_exported import RateLimitTesting
