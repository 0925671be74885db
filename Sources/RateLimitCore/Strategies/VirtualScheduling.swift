// The virtual-scheduling arithmetic shared by GCRA (policing) and the leaky bucket as a queue
// (shaping): one theoretical arrival time `tat`, an emission interval `T` per permit and a
// tolerance `τ = burst × T` (Spec/GCRA.md GCRA-4 ... GCRA-6, Spec/LeakyBucketQueue.md LBQ-4 ...).
// Both strategies admit exactly the same acquires; they differ in what the answer tells the
// caller (go now, or go at the scheduled start) and in how reconfigure treats the schedule.

/// Tolerance, interval and the admission arithmetic of ITU-T I.371's virtual scheduling,
/// generalised to weighted acquires.
@usableFromInline
struct VirtualSchedule: Hashable, Sendable {
    /// Permits admitted back to back from a full limiter.
    @usableFromInline let burst: Int64
    /// Nanoseconds one permit adds to the theoretical arrival time.
    @usableFromInline let intervalNanoseconds: Int64
    /// `burst × intervalNanoseconds`, validated to fit in an `Int64`.
    @usableFromInline let toleranceNanoseconds: Int64

    @usableFromInline init(burst: Int64, intervalNanoseconds: Int64) {
        self.burst = burst
        self.intervalNanoseconds = intervalNanoseconds
        self.toleranceNanoseconds = burst * intervalNanoseconds
    }

    /// Work already scheduled past `instant`, in nanoseconds (at most `Int64.max`).
    @inlinable func pending(tat: UInt64, at instant: UInt64) -> UInt64 {
        tat > instant ? tat - instant : 0
    }

    /// Permits that one acquire could take given `pending` work (which exceeds τ only in a leaky
    /// bucket queue reconfigured to a shorter queue while requests wait).
    @inlinable func remaining(pending: UInt64) -> Int64 {
        let tolerance = UInt64(toleranceNanoseconds)
        return pending >= tolerance ? 0 : Int64((tolerance - pending) / UInt64(intervalNanoseconds))
    }

    /// The decision for `permits` (`1...burst`) at the evaluation instant.
    @usableFromInline enum Decision {
        /// Admitted: the new theoretical arrival time, the scheduled start and the remaining quota.
        case admit(tat: UInt64, start: UInt64, remaining: Int64)
        /// Not admitted; the same acquire is first admitted at `admission` (may exceed `Int64.max`).
        case reject(admission: UInt64)
    }

    @inlinable func decide(tat: UInt64, permits: Int64, at instant: UInt64) -> Decision {
        let start = max(tat, instant)
        let cost = UInt64(permits) * UInt64(intervalNanoseconds)  // ≤ τ, since permits ≤ burst
        let needed = (start - instant) + cost  // pending ≤ Int64.max and cost ≤ τ: < 2^64
        let tolerance = UInt64(toleranceNanoseconds)
        if needed <= tolerance {
            return .admit(tat: start + cost, start: start, remaining: remaining(pending: needed))
        }
        // Rejected means tat > instant + (τ − cost): the first admitting instant is tat − (τ − cost).
        return .reject(admission: tat - (tolerance - cost))
    }

    /// Reconfigure keeping the available permits (`τ − pending`, in units of 1/T of a permit),
    /// rounded down to the new units and capped at the new tolerance; returns the new `tat`.
    /// GCRA's pending work never exceeds its tolerance at its evaluation instant.
    @inlinable func carryOver(tat: UInt64, at instant: UInt64, from previous: VirtualSchedule) -> UInt64 {
        let pending = previous.pending(tat: tat, at: instant)
        let available = UInt64(previous.toleranceNanoseconds) - min(pending, UInt64(previous.toleranceNanoseconds))
        let scaled = Wide.product(available, UInt64(intervalNanoseconds))
            .dividedRoundingDown(by: UInt64(previous.intervalNanoseconds))
        let tolerance = UInt64(toleranceNanoseconds)
        let kept = scaled < Wide(tolerance) ? scaled.low : tolerance
        return instant + (tolerance - kept)
    }
}
