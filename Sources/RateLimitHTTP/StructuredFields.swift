// Structured Field Lists (RFC 9651, Spec/HTTP.md HTTP-4): the parser the RateLimit fields need.
// It follows the RFC's parsing algorithms (§4.2) byte by byte; any failure fails the whole field.

/// A bare item of a structured field.
public enum StructuredItemValue: Hashable, Sendable {
    case integer(Int64)
    /// A decimal, exactly, in thousandths (`1.5` is 1500): no floating point.
    case decimal(thousandths: Int64)
    case string(String)
    case token(String)
    /// A byte sequence, as its base64 text (not decoded: the fields here only compare it).
    case byteSequence(String)
    case boolean(Bool)
    /// A date (RFC 9651 `@`), seconds since the epoch.
    case date(Int64)
    case displayString(String)
}

/// An item with its parameters, in order (a repeated key keeps its last value, RFC 9651 §4.2.3.2).
public struct StructuredItem: Hashable, Sendable {
    public var value: StructuredItemValue
    public var parameters: [(key: String, value: StructuredItemValue)]

    /// The value of parameter `key`, if present.
    public subscript(key: String) -> StructuredItemValue? { parameters.last { $0.key == key }?.value }

    public static func == (lhs: StructuredItem, rhs: StructuredItem) -> Bool {
        lhs.value == rhs.value && lhs.parameters.count == rhs.parameters.count
            && zip(lhs.parameters, rhs.parameters).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
        for parameter in parameters {
            hasher.combine(parameter.key)
            hasher.combine(parameter.value)
        }
    }
}

/// A member of a structured list: an item, or an inner list with its parameters.
public enum StructuredListMember: Hashable, Sendable {
    case item(StructuredItem)
    case innerList([StructuredItem], parameters: StructuredItem)
}

/// RFC 9651 §4.2.1: a whole field value as a List, or `nil` when it fails to parse.
public func parseStructuredList(_ value: some StringProtocol) -> [StructuredListMember]? {
    var parser = StructuredFieldParser(Array(value.utf8))
    return parser.list()
}

/// The parser's state: the bytes and a position.
struct StructuredFieldParser {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpaces() { while current == 32 { index += 1 } }
    private mutating func skipOWS() { while current == 32 || current == 9 { index += 1 } }

    /// §4.2 and §4.2.1: leading and trailing spaces, members separated by OWS "," OWS.
    mutating func list() -> [StructuredListMember]? {
        skipSpaces()
        var members: [StructuredListMember] = []
        while index < bytes.count {
            guard let member = listMember() else { return nil }
            members.append(member)
            skipOWS()
            guard index < bytes.count else { break }
            guard current == UInt8(ascii: ",") else { return nil }
            index += 1
            skipOWS()
            guard index < bytes.count else { return nil }  // a trailing comma
        }
        return members
    }

    private mutating func listMember() -> StructuredListMember? {
        if current == UInt8(ascii: "(") { return innerList() }
        return item().map { .item($0) }
    }

    /// §4.2.1.2
    private mutating func innerList() -> StructuredListMember? {
        index += 1
        var items: [StructuredItem] = []
        while index < bytes.count {
            skipSpaces()
            if current == UInt8(ascii: ")") {
                index += 1
                guard let parameters = parameters() else { return nil }
                return .innerList(items, parameters: StructuredItem(value: .boolean(true), parameters: parameters))
            }
            guard let item = item() else { return nil }
            items.append(item)
            guard current == 32 || current == UInt8(ascii: ")") else { return nil }
        }
        return nil
    }

    /// §4.2.3
    private mutating func item() -> StructuredItem? {
        guard let value = bareItem(), let parameters = parameters() else { return nil }
        return StructuredItem(value: value, parameters: parameters)
    }

    /// §4.2.3.2: `;` then spaces then a key, optionally `=` and a bare item.
    private mutating func parameters() -> [(key: String, value: StructuredItemValue)]? {
        var result: [(key: String, value: StructuredItemValue)] = []
        while current == UInt8(ascii: ";") {
            index += 1
            skipSpaces()
            guard let key = key() else { return nil }
            var value = StructuredItemValue.boolean(true)
            if current == UInt8(ascii: "=") {
                index += 1
                guard let parsed = bareItem() else { return nil }
                value = parsed
            }
            result.removeAll { $0.key == key }
            result.append((key, value))
        }
        return result
    }

    /// §4.2.3.3: lcalpha or `*`, then lcalpha, digits, `_ - . *`.
    private mutating func key() -> String? {
        guard let first = current, (first >= 97 && first <= 122) || first == 42 else { return nil }
        let start = index
        while let byte = current,
            (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 95 || byte == 45 || byte == 46
                || byte == 42
        {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// §4.2.3.1
    private mutating func bareItem() -> StructuredItemValue? {
        guard let first = current else { return nil }
        switch first {
        case UInt8(ascii: "-"), 48...57: return number()
        case UInt8(ascii: "\""): return string().map { .string($0) }
        case UInt8(ascii: ":"): return byteSequence()
        case UInt8(ascii: "?"): return boolean()
        case UInt8(ascii: "@"):
            index += 1
            guard case .integer(let seconds)? = number() else { return nil }
            return .date(seconds)
        case UInt8(ascii: "%"): return displayString()
        case UInt8(ascii: "*"), 65...90, 97...122: return token()
        default: return nil
        }
    }

    /// §4.2.4: at most 15 integer digits, or a decimal with at most 12 + 3.
    private mutating func number() -> StructuredItemValue? {
        var negative = false
        if current == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var integer: Int64 = 0
        var integerDigits = 0
        var fraction: Int64 = 0
        var fractionDigits = 0
        var isDecimal = false
        while let byte = current {
            if byte >= 48 && byte <= 57 {
                if isDecimal {
                    fractionDigits += 1
                    guard fractionDigits <= 3 else { return nil }
                    fraction = fraction * 10 + Int64(byte - 48)
                } else {
                    integerDigits += 1
                    guard integerDigits <= 15 else { return nil }
                    integer = integer * 10 + Int64(byte - 48)
                }
            } else if byte == UInt8(ascii: "."), !isDecimal {
                guard integerDigits <= 12, integerDigits > 0 else { return nil }
                isDecimal = true
            } else {
                break
            }
            index += 1
        }
        guard integerDigits > 0 else { return nil }
        if !isDecimal { return .integer(negative ? -integer : integer) }
        guard fractionDigits > 0 else { return nil }
        for _ in fractionDigits..<3 { fraction *= 10 }
        let thousandths = integer * 1_000 + fraction  // < 10¹⁵: no overflow
        return .decimal(thousandths: negative ? -thousandths : thousandths)
    }

    /// §4.2.5: printable ASCII, `\"` and `\\` the only escapes.
    private mutating func string() -> String? {
        index += 1
        var result: [UInt8] = []
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                guard let next = current, next == UInt8(ascii: "\"") || next == UInt8(ascii: "\\") else { return nil }
                result.append(next)
                index += 1
            case UInt8(ascii: "\""):
                return String(decoding: result, as: UTF8.self)
            case 0x20...0x7E:
                result.append(byte)
            default:
                return nil
            }
        }
        return nil
    }

    /// §4.2.6: ALPHA or `*`, then tchar, `:` and `/`.
    private mutating func token() -> StructuredItemValue? {
        let start = index
        index += 1
        while let byte = current, isTokenCharacter(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") {
            index += 1
        }
        return .token(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// §4.2.7: base64 between colons.
    private mutating func byteSequence() -> StructuredItemValue? {
        index += 1
        let start = index
        while let byte = current, byte != UInt8(ascii: ":") {
            guard
                (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57)
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
            else { return nil }
            index += 1
        }
        guard current == UInt8(ascii: ":") else { return nil }
        defer { index += 1 }
        return .byteSequence(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// §4.2.8
    private mutating func boolean() -> StructuredItemValue? {
        index += 1
        guard let byte = current, byte == 48 || byte == 49 else { return nil }
        index += 1
        return .boolean(byte == 49)
    }

    /// §4.2.10 (RFC 9651): `%"` then printable ASCII with lowercase percent-encoded UTF-8, `"`.
    private mutating func displayString() -> StructuredItemValue? {
        index += 1
        guard current == UInt8(ascii: "\"") else { return nil }
        index += 1
        var result: [UInt8] = []
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 1 < bytes.count, let high = lowerHex(bytes[index]), let low = lowerHex(bytes[index + 1])
                else { return nil }
                result.append(high << 4 | low)
                index += 2
            case UInt8(ascii: "\""):
                guard let text = String(validating: result, as: UTF8.self) else { return nil }
                return .displayString(text)
            case 0x20...0x7E:
                result.append(byte)
            default:
                return nil
            }
        }
        return nil
    }

    private func lowerHex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 97...102: byte - 87
        default: nil
        }
    }

    /// RFC 9110 tchar.
    private func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 48...57, 65...90, 97...122: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"),
            UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
