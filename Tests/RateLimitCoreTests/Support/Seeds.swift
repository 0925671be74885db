import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

typealias PropertySeed = TestSeed
