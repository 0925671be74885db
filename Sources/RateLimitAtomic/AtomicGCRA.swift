// The lock-free adapter: GCRA in one double-word atomic, for the hottest paths.
//
// The state of GCRA (Spec/GCRA.md) is two 64-bit integers, the theoretical arrival time and the
// last instant, held together in one `Atomic<WordPair>`: a compare-and-exchange loop reads the
// pair, runs the pure `step`, and publishes the new pair only if nobody changed it meanwhile.
// Refusals and queries change nothing, so they publish nothing. There is no queue: `acquire`
// sleeps on the clock for the exact retry-after and tries again, so waiters are not served in
// order (use another adapter when order matters). The configuration is fixed; `reset` is atomic.
//
// 64-bit platforms only (a WordPair of two 64-bit words). macOS 15, iOS 18 and later (Atomic).
// The hot path is `@inlinable`, so that it is specialized for the caller's clock: unspecialized,
// every call would look up generic metadata at run time (Performance.md, "Atomic GCRA").

@_exported import RateLimitClock
@_exported import RateLimitCore

#if _pointerBitWidth(_64)
    import RateLimitShell
    import Synchronization

    /// GCRA on one lock-free atomic: `tryAcquire`, `remaining`, `reset`, and a sleeping `acquire`.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public final class AtomicGCRA<C: Clock>: Sendable where C.Duration == Duration {
        @usableFromInline let word: Atomic<WordPair>
        /// The configuration (fixed for the limiter's life).
        public let gcra: GCRA
        @usableFromInline let timeline: ClockTimeline<C>

        /// A limiter of `gcra` created now on `clock`.
        public init(_ gcra: GCRA, clock: C) {
            self.gcra = gcra
            timeline = ClockTimeline(clock: clock)
            word = Atomic(Self.pack(gcra.initialState(at: .origin)))
        }

        @inlinable
        static func pack(_ state: GCRA.State) -> WordPair {
            WordPair(
                first: UInt(state.theoreticalArrivalNanoseconds), second: UInt(bitPattern: Int(state.lastNanoseconds)))
        }

        @inlinable
        static func unpack(_ pair: WordPair) -> GCRA.State {
            GCRA.State(
                theoreticalArrivalNanoseconds: UInt64(pair.first), lastNanoseconds: Int64(Int(bitPattern: pair.second)))
        }

        /// Applies `event` at `now` (the clock's reading) with a compare-and-exchange loop. The
        /// answer alone is returned: a tuple holding it would be destroyed through the runtime's
        /// generic tuple witness on every call (Performance.md, "Atomic GCRA").
        @inlinable
        func apply(_ event: RateLimitEvent<GCRA>, at now: RateLimitInstant) -> RateLimitResult {
            var current = word.load(ordering: .acquiring)
            while true {
                let state = Self.unpack(current)
                let (next, result) = gcra.step(state, event, at: now)
                if next == state { return result }
                let (exchanged, original) = word.compareExchange(
                    expected: current, desired: Self.pack(next), ordering: .acquiringAndReleasing)
                if exchanged { return result }
                current = original
            }
        }

        /// Takes `permits` now if GCRA admits them (the answer is GCRA's, CORE-5).
        @inlinable
        public func tryAcquire(_ permits: Int64 = 1) -> RateLimitResult { apply(.acquire(permits), at: timeline.now()) }

        /// The permits an acquire could take now, without taking any.
        @inlinable
        public func remaining() -> Int64 { apply(.acquire(0), at: timeline.now()).remaining ?? 0 }

        /// Resets to a full burst (GCRA-9).
        @discardableResult
        public func reset() -> RateLimitResult { apply(.reset, at: timeline.now()) }

        /// Tries until `permits` are admitted, sleeping on the clock for each exact retry-after; gives
        /// up with `timedOut` when the next try would come after the timeout, and with `cancelled`
        /// when the task is cancelled. No queue: concurrent callers are not served in order.
        public func acquire(_ permits: Int64 = 1, timeout: Duration? = nil) async throws(RateLimitAcquireError)
            -> RateLimitGrant
        {
            let start = timeline.now()
            let deadline = timeout.map { timeline.deadline(after: $0, from: start) }
            while true {
                let decided = timeline.now()  // the instant the answer's spans count from
                let answer = apply(.acquire(permits), at: decided)
                switch answer {
                case .allowed, .delayed:
                    return RateLimitGrant(permits: permits, answer: answer)
                case .neverAllowed:
                    throw .rejected(.neverAllowed)
                case .invalid(let error):
                    throw .rejected(.invalid(error))
                case .rejectedUntilRelease(let shortfall):
                    throw .rejected(.untilRelease(shortfall: shortfall))  // GCRA never answers this
                case .rejected(let retryAfter):
                    // the exact admission instant
                    let retry = timeline.deadline(after: .nanoseconds(retryAfter), from: decided)
                    if let deadline, retry > deadline { throw .timedOut }
                    do { try await timeline.clock.sleep(until: timeline.reading(of: retry), tolerance: nil) } catch {
                        throw .cancelled
                    }
                }
            }
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    extension AtomicGCRA where C == ContinuousClock {
        /// A limiter of `gcra` on the continuous clock.
        public convenience init(_ gcra: GCRA) {
            self.init(gcra, clock: ContinuousClock())
        }
    }
#endif
