import Dispatch
import RateLimitDispatch  // completion handlers

// Keep the limiter alive (a property, not a local): released from memory, it closes, and every
// request still waiting gets `.closed` at once.
let uploads = try DispatchRateLimiter(try LeakyBucketQueue(queueCapacity: 10, interval: .milliseconds(200)))
let done = DispatchSemaphore(value: 0)
uploads.acquire { result in  // runs once, on the callback queue, at the request's start
    if case .success = result { print("start the upload") }
    done.signal()
}
done.wait()
