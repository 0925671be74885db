// The wait queue's and the registry's deadlines (Spec/WaitQueue.md WQ-5, Spec/Registry.md REG-11).

/// A binary min-heap of (deadline, payload), ordered by deadline then payload.
@usableFromInline
struct DeadlineHeap<Payload: Comparable & Sendable>: Sendable {
    @usableFromInline var items: [(deadline: Int64, payload: Payload)] = []

    @inlinable var isEmpty: Bool { items.isEmpty }

    @inlinable var first: (deadline: Int64, payload: Payload)? { items.first }

    var count: Int { items.count }

    private static func before(_ a: (deadline: Int64, payload: Payload), _ b: (deadline: Int64, payload: Payload))
        -> Bool
    {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.payload < b.payload
    }

    @usableFromInline
    mutating func insert(deadline: Int64, _ payload: Payload) {
        items.append((deadline, payload))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @usableFromInline
    mutating func removeFirst() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, Self.before(items[left], items[smallest]) { smallest = left }
            if right < items.count, Self.before(items[right], items[smallest]) { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
