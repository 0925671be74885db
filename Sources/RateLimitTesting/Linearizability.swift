import Foundation

// Linearizability checking for concurrent histories (Wing & Gong's search with Lowe's
// memoization, the algorithm of Porcupine). A history is linearizable with respect to a
// sequential model when its operations can be put in one order that (1) respects real time: an
// operation that returned before another was called comes first, and (2) gives every operation
// the output the model gives it, step by step. The search walks the history's call and return
// events, tentatively linearizes a pending call when the model agrees with its output, and
// backtracks when a return is reached with its call not yet linearized; a cache of
// (linearized set, model state) pairs already explored keeps the search from repeating itself.

/// One completed operation of a concurrent history.
public struct HistoryOperation<Input: Sendable, Output: Sendable>: Sendable {
    /// Stamps from one monotonic counter: `call < returned`, all distinct across the history.
    public var call: UInt64
    public var returned: UInt64
    public var input: Input
    public var output: Output

    public init(call: UInt64, returned: UInt64, input: Input, output: Output) {
        self.call = call
        self.returned = returned
        self.input = input
        self.output = output
    }
}

/// The verdict of a linearizability check.
public enum LinearizabilityVerdict: Equatable, Sendable {
    /// A valid order exists: the indices of the operations, in linearization order.
    case linearizable(order: [Int])
    /// No valid order exists; `longestPrefix` is the longest sequence of operations the search
    /// managed to linearize (the operation after it is where every attempt failed).
    case notLinearizable(longestPrefix: [Int])
    /// The search explored `states` distinct states without deciding (bounded effort).
    case undecided(states: Int)

    public var isLinearizable: Bool { if case .linearizable = self { true } else { false } }
}

/// Checks concurrent histories against a sequential model.
public enum LinearizabilityChecker {
    /// Whether `history` is linearizable with respect to the model starting at `initial`, where
    /// `step(state, input)` gives the next state and the output the model expects.
    public static func check<State: Hashable, Input: Sendable, Output: Equatable & Sendable>(
        _ history: [HistoryOperation<Input, Output>], initial: State, maximumStates: Int = 5_000_000,
        step: (State, Input) -> (State, Output)
    ) -> LinearizabilityVerdict {
        // The events in time order, as a doubly linked list (indices into `events`).
        var events: [HistoryEvent] = []
        for (index, operation) in history.enumerated() {
            events.append(HistoryEvent(operation: index, isCall: true, time: operation.call))
            events.append(HistoryEvent(operation: index, isCall: false, time: operation.returned))
        }
        events.sort { $0.time < $1.time }
        var callOf: [Int] = Array(repeating: -1, count: history.count)
        for position in events.indices {
            if events[position].isCall { callOf[events[position].operation] = position }
        }
        for position in events.indices where !events[position].isCall {
            let call = callOf[events[position].operation]
            events[call].match = position
            events[position].match = call
        }
        // Node `count` is the sentinel head.
        let head = events.count
        var next = Array(events.indices.map { $0 + 1 }) + [0]
        var previous = [head] + Array(events.indices.dropLast())
        if events.isEmpty { return .linearizable(order: []) }
        next[events.count - 1] = -1

        func lift(_ call: Int) {
            for node in [call, events[call].match] {
                if previous[node] >= 0 { next[previous[node]] = next[node] }
                if next[node] >= 0 { previous[next[node]] = previous[node] }
            }
        }
        func unlift(_ call: Int) {
            for node in [events[call].match, call] {
                if previous[node] >= 0 { next[previous[node]] = node }
                if next[node] >= 0 { previous[next[node]] = node }
            }
        }

        var linearized = [UInt64](repeating: 0, count: (history.count + 63) / 64)
        var cache: Set<SearchKey<State>> = []
        var calls: [(node: Int, state: State)] = []
        var state = initial
        var node = next[head]
        var longest: [Int] = []
        while next[head] >= 0 {
            if cache.count > maximumStates { return .undecided(states: cache.count) }
            if node < 0 { break }
            if events[node].isCall {
                let operation = history[events[node].operation]
                let (after, expected) = step(state, operation.input)
                if expected == operation.output {
                    var set = linearized
                    set[events[node].operation / 64] |= 1 << UInt64(events[node].operation % 64)
                    if cache.insert(SearchKey(linearized: set, state: after)).inserted {
                        calls.append((node, state))
                        state = after
                        linearized = set
                        lift(node)
                        if calls.count > longest.count { longest = calls.map { events[$0.node].operation } }
                        node = next[head]
                        continue
                    }
                }
                node = next[node]
            } else {
                // A return whose call is not linearized: undo the last choice and try the next one.
                guard let (call, saved) = calls.popLast() else {
                    return .notLinearizable(longestPrefix: longest)
                }
                state = saved
                linearized[events[call].operation / 64] &= ~(1 << UInt64(events[call].operation % 64))
                unlift(call)
                node = next[call]
            }
        }
        return .linearizable(order: calls.map { events[$0.node].operation })
    }
}

/// A call or return of an operation, in the search's time-ordered list.
private struct HistoryEvent {
    var operation: Int
    var isCall: Bool
    var time: UInt64
    var match = -1
}

/// A point of the search: which operations are linearized, and the model's state after them.
private struct SearchKey<State: Hashable>: Hashable {
    var linearized: [UInt64]
    var state: State
}

/// Records a concurrent history: stamps calls and returns from one counter, from any thread.
// @unchecked: `counter` and `operations` are touched only while `lock` is held.
package final class HistoryRecorder<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var counter: UInt64 = 0
    private var operations: [HistoryOperation<Input, Output>] = []

    package init() {}

    /// A fresh stamp; take one just before calling the operation.
    package func stamp() -> UInt64 {
        lock.withLock {
            counter += 1
            return counter
        }
    }

    /// Records an operation called at `call` (a stamp) that has just returned `output`.
    package func record(call: UInt64, input: Input, output: Output) {
        lock.withLock {
            counter += 1
            operations.append(HistoryOperation(call: call, returned: counter, input: input, output: output))
        }
    }

    /// The operations recorded so far.
    package var history: [HistoryOperation<Input, Output>] { lock.withLock { operations } }
}
