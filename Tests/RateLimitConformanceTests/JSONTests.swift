import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

@Suite("Exact JSON")
struct JSONTests {
    @Test("64-bit integers are exact at both ends; anything else is kept as its text")
    func integers() async throws { try await offThePool { try integersOnThread() } }

    private func integersOnThread() throws {
        #expect(try JSONValue(parsing: "9223372036854775807") == .integer(.max))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .integer(.min))
        #expect(try JSONValue(parsing: "9223372036854775808") == .otherNumber("9223372036854775808"))
        #expect(try JSONValue(parsing: "1.5e3") == .otherNumber("1.5e3"))
        #expect(try JSONValue(parsing: "[0, -0, 12]") == .array([.integer(0), .integer(0), .integer(12)]))
    }

    @Test("Strings keep escapes, control characters and non-BMP characters through a round trip")
    func strings() async throws { try await offThePool { try stringsOnThread() } }

    private func stringsOnThread() throws {
        let text = "a\"b\\c\n\t\u{01}é𝄞/"
        let written = JSONValue.string(text).compactText
        #expect(try JSONValue(parsing: written) == .string(text))
        #expect(try JSONValue(parsing: "\"\\ud834\\udd1e\\u00e9\\/\"") == .string("𝄞é/"))
    }

    @Test("Malformed text is refused with the byte offset, never trapped on")
    func malformed() async { await offThePool { malformedOnThread() } }

    private func malformedOnThread() {
        for text in [
            "", "{", "[1,]", "{\"a\":1,\"a\":2}", "01", "\"\u{01}\"", "tru", "1 2", "\"\\ud834\"", "-", "1.", "1e",
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65), "{\"a\" 1}", "\"\\x\"",
        ] {
            #expect(throws: JSONParseError.self, "\(text.prefix(20)) parsed") { try JSONValue(parsing: text) }
        }
    }

    @Test("Random and mutated input never traps; whatever parses re-parses to the same value")
    func fuzz() async throws { try await offThePool { try fuzzOnThread() } }

    private func fuzzOnThread() throws {
        var rng = SeededGenerator(seed: 77, stream: "json-fuzz", index: 0)
        let seeds = [
            "{\"now\": 9223372036854775807, \"event\": {\"kind\": \"acquire\", \"permits\": -3}}",
            "[true, false, null, \"x\\n\", 1.5, [], {}]",
        ]
        let alphabet = Array("{}[]\",:0123456789-+.eEtrufalsn \\u\n\t".utf8)
        for _ in 0..<20_000 {
            var bytes = Array(rng.pick(seeds).utf8)
            for _ in 0..<Int(rng.int(in: 1...4)) {
                let position = Int(rng.int(in: 0...Int64(bytes.count - 1)))
                switch rng.int(in: 0...2) {
                case 0: bytes[position] = rng.pick(alphabet)
                case 1: bytes.remove(at: position)
                default: bytes.insert(rng.pick(alphabet), at: position)
                }
            }
            guard let value = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)) else { continue }
            #expect(try JSONValue(parsing: value.compactText) == value)
            #expect(try JSONValue(parsing: value.prettyText) == value)
        }
    }

    @Test("The writer keeps member order and puts a story step on one line")
    func writer() async throws { try await offThePool { try writerOnThread() } }

    private func writerOnThread() throws {
        let step = JSONValue.object([
            ("now", .integer(9)), ("event", .object([("kind", .string("acquire")), ("permits", .integer(1))])),
        ])
        #expect(step.compactText == "{\"now\":9,\"event\":{\"kind\":\"acquire\",\"permits\":1}}")
        #expect(
            JSONValue.array([step]).prettyText
                == "[\n  {\"now\": 9, \"event\": {\"kind\": \"acquire\", \"permits\": 1}}\n]\n")
    }
}
