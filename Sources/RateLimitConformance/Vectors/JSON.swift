// A small, exact JSON value: integers are kept as `Int64` (never through floating point, so
// instants up to Int64.max survive), object keys keep their order, and the writer's output is the
// same bytes on every platform. Vector files and protocol lines both use it.

/// A JSON value with exact 64-bit integers and ordered object members.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// An integer that fits in `Int64`.
    case integer(Int64)
    /// Any other number, kept as its source text (vectors and the protocol never need one).
    case otherNumber(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.otherNumber(let a), .otherNumber(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.null, _), (.bool, _), (.integer, _), (.otherNumber, _), (.string, _), (.array, _), (.object, _): false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(value)
        case .otherNumber(let text): hasher.combine(text)
        case .string(let text): hasher.combine(text)
        case .array(let items): hasher.combine(items)
        case .object(let members):
            for (key, value) in members {
                hasher.combine(key)
                hasher.combine(value)
            }
        }
    }

    /// The member `key` of an object, `nil` otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The member names of an object, in order; empty otherwise.
    public var keys: [String] {
        guard case .object(let members) = self else { return [] }
        return members.map(\.0)
    }

    public var int64: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
}

// MARK: - Writing

extension JSONValue {
    /// Compact, one-line JSON (protocol lines).
    public var compactText: String {
        var output = ""
        write(into: &output, indent: nil, depth: 0)
        return output
    }

    /// Indented JSON with two spaces; arrays of scalars and small objects stay on one line so that a
    /// step of a story reads as one line.
    public var prettyText: String {
        var output = ""
        write(into: &output, indent: "  ", depth: 0)
        return output + "\n"
    }

    private var isInline: Bool {
        switch self {
        case .null, .bool, .integer, .otherNumber, .string: true
        case .array(let items):
            items.allSatisfy { if case .array = $0 { false } else if case .object = $0 { false } else { true } }
        case .object(let members):
            members.count <= 6
                && members.allSatisfy { $0.1.isInline && !($0.1.isContainer && $0.1.compactText.count > 60) }
        }
    }

    private var isContainer: Bool {
        switch self {
        case .array, .object: true
        case .null, .bool, .integer, .otherNumber, .string: false
        }
    }

    private func write(into output: inout String, indent: String?, depth: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .otherNumber(let text): output += text
        case .string(let text): Self.writeString(text, into: &output)
        case .array(let items):
            if items.isEmpty {
                output += "[]"
                return
            }
            guard let indent, !isInline else {
                output += "["
                for (index, item) in items.enumerated() {
                    if index > 0 { output += indent == nil ? "," : ", " }
                    item.write(into: &output, indent: indent == nil ? nil : indent, depth: depth + 1)
                }
                output += "]"
                return
            }
            output += "[\n"
            for (index, item) in items.enumerated() {
                output += String(repeating: indent, count: depth + 1)
                item.write(into: &output, indent: indent, depth: depth + 1)
                output += index == items.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: indent, count: depth) + "]"
        case .object(let members):
            if members.isEmpty {
                output += "{}"
                return
            }
            guard let indent, !isInline || depth == 0 else {
                output += "{"
                for (index, (key, value)) in members.enumerated() {
                    if index > 0 { output += indent == nil ? "," : ", " }
                    Self.writeString(key, into: &output)
                    output += indent == nil ? ":" : ": "
                    value.write(into: &output, indent: indent, depth: depth + 1)
                }
                output += "}"
                return
            }
            output += "{\n"
            for (index, (key, value)) in members.enumerated() {
                output += String(repeating: indent, count: depth + 1)
                Self.writeString(key, into: &output)
                output += ": "
                value.write(into: &output, indent: indent, depth: depth + 1)
                output += index == members.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: indent, count: depth) + "}"
        }
    }

    private static func writeString(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

// MARK: - Parsing

/// Why a text is not JSON, with the byte offset where parsing stopped.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

extension JSONValue {
    /// Parses one JSON value (RFC 8259) spanning all of `text`, whitespace aside. Nesting deeper
    /// than 64 levels is refused, so hostile input cannot exhaust the stack.
    public init(parsing text: String) throws(JSONParseError) {
        var parser = JSONParser(bytes: Array(text.utf8))
        self = try parser.parseDocument()
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var position = 0
    var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func failure(_ message: String) -> JSONParseError { JSONParseError(offset: position, message: message) }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected text after the value") }
        return value
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: String) throws(JSONParseError) {
        for byte in literal.utf8 {
            guard position < bytes.count, bytes[position] == byte else { throw failure("expected \(literal)") }
            position += 1
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw failure("unexpected end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    mutating func nest() throws(JSONParseError) {
        depth += 1
        if depth > 64 { throw failure("nesting deeper than 64 levels") }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try nest()
        defer { depth -= 1 }
        position += 1
        var members: [(String, JSONValue)] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object([])
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw failure("expected a member name")
            }
            let key = try parseString()
            guard !members.contains(where: { $0.0 == key }) else { throw failure("duplicate member \"\(key)\"") }
            skipWhitespace()
            try expect(":")
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            guard position < bytes.count else { throw failure("unterminated object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            throw failure("expected , or }")
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try nest()
        defer { depth -= 1 }
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array([])
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw failure("unterminated array") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            throw failure("expected , or ]")
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw failure("unterminated \\u escape") }
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("bad hex digit in \\u escape")
            }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        // Most strings have no escape: take them whole.
        var end = position
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20
        {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            defer { position = end + 1 }
            return String(decoding: bytes[position..<end], as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) {
            if !run.isEmpty {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll()
            }
        }
        while true {
            guard position < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush(&run, into: &scalars)
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(&run, into: &scalars)
                guard position < bytes.count else { throw failure("unterminated escape") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code), position + 1 < bytes.count,
                        bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("unpaired surrogate") }
                    scalars.append(scalar)
                default: throw failure("unknown escape")
                }
            case 0x00..<0x20:
                throw failure("control character in string")
            default:
                run.append(byte)
            }
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
            throw failure("expected a digit")
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            guard position > digits else { throw failure("expected a digit after .") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            guard position > digits else { throw failure("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        return .otherNumber(text)
    }
}
