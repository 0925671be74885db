// Header fields as a server sent them (Spec/HTTP.md, HTTP-1).

/// A response's header fields: names compared without regard to ASCII case, values in the order
/// received. Pure data: no networking.
public struct HTTPFields: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The fields as received, in order.
    public let pairs: [(name: String, value: String)]

    public init(_ pairs: [(name: String, value: String)]) {
        self.pairs = pairs
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { (name: $0.0, value: $0.1) })
    }

    /// Every value of the field `name`, in order (RFC 9110 §5.3: repeated lines are one list).
    public func values(_ name: String) -> [String] {
        pairs.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// The field `name` as one combined value (`a, b` for repeated lines), or `nil` when absent.
    public func combined(_ name: String) -> String? {
        let all = values(name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    /// ASCII case-insensitive comparison of field names (non-ASCII bytes must match exactly).
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }

    public static func == (lhs: HTTPFields, rhs: HTTPFields) -> Bool {
        lhs.pairs.count == rhs.pairs.count
            && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.name)
            hasher.combine(pair.value)
        }
    }
}
