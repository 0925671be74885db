import Foundation
import RateLimitConformance
import RateLimitCore
import Testing

private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(json.utf8))
}

private func encode<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// The refusal `body` throws: its coding path (keys joined by dots) and its description.
private func refusal(_ body: () throws -> Void) -> (path: String, message: String)? {
    do {
        try body()
        return nil
    } catch let DecodingError.dataCorrupted(context) {
        return (context.codingPath.map(\.stringValue).joined(separator: "."), context.debugDescription)
    } catch let DecodingError.keyNotFound(key, context) {
        return ((context.codingPath + [key]).map(\.stringValue).joined(separator: "."), "missing")
    } catch let DecodingError.typeMismatch(_, context) {
        return (context.codingPath.map(\.stringValue).joined(separator: "."), "not an integer")
    } catch {
        return ("", "\(error)")
    }
}

@Suite("Configurations as JSON (Spec/Core.md CORE-16)")
struct ConfigurationCodingTests {
    @Test(
        "CORE-16 every configuration of every vector file decodes, with Foundation's decoder, to what the suite's loader builds, and encodes back to the same fields"
    )
    func vectorsDecode() throws {
        var checked = 0
        for file in try VectorGenerator.files() {
            for story in file.stories {
                // A variant's story names its alignment beside the fields (FW-13); JSON has it inside.
                let alignment =
                    story.alignment == .origin ? "" : #""alignment": "\#(story.alignment.rawValue)", "#
                let fields = "{" + alignment + story.configuration.json.compactText.dropFirst()
                let any = try decode(
                    AnyRateLimitStrategy.self, #"{"strategy": "\#(file.strategy)", "configuration": \#(fields)}"#)
                #expect(any == story.configuration, "\(story.id)")
                let back = try JSONValue(parsing: try encode(any))
                #expect(
                    back["configuration"]?["alignment"]?.string == (alignment.isEmpty ? nil : story.alignment.rawValue))
                let configuration = try back["configuration"].map { json throws(ConformanceFormatError) in
                    try AnyRateLimitStrategy(
                        strategy: file.strategy,
                        json: .object(json.keys.filter { $0 != "alignment" }.map { ($0, json[$0] ?? .null) }))
                }
                #expect(
                    back["strategy"]?.string == file.strategy
                        && configuration?.aligned(story.alignment) == story.configuration,
                    "\(story.id): \(back.compactText)")
                checked += 1
            }
        }
        #expect(checked > 100)
    }

    @Test("CORE-16 each strategy alone round-trips through its fields; optional fields may be left out")
    func eachStrategy() throws {
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 10, period: .seconds(1), initialTokens: 2)
        #expect(try decode(TokenBucket.self, try encode(bucket)) == bucket)
        #expect(
            try encode(bucket)
                == #"{"capacity":5,"initialTokens":2,"periodNanoseconds":1000000000,"permitsPerPeriod":10}"#)
        #expect(
            try decode(TokenBucket.self, #"{"capacity": 5, "permitsPerPeriod": 10, "periodNanoseconds": 1000000000}"#)
                .initialTokens == 5,
            "initialTokens left out: a full bucket, as TB-1 says")
        #expect(
            try decode(LeakyBucketMeter.self, #"{"capacity": 3, "leakPermitsPerPeriod": 1, "periodNanoseconds": 10}"#)
                .initialLevel == 0)
        #expect(
            try decode(PayLater.self, #"{"burst": 3, "emissionIntervalNanoseconds": 7}"#).initialTokens == 3,
            "initialTokens left out: a rested limiter, as PL-1 says")
        let values: [any RateLimitStrategy & Codable] = [
            try IntervalTokenBucket(capacity: 4, tokensPerInterval: 2, intervalNanoseconds: 10),
            try GCRA(burst: 3, emissionIntervalNanoseconds: 7),
            try PayLater(burst: 3, emissionIntervalNanoseconds: 7, initialTokens: 1),
            try WarmUp(burst: 2, emissionIntervalNanoseconds: 7, warmUpPeriodNanoseconds: 70),
            try FixedWindow(limit: 2, windowNanoseconds: 9), try SlidingWindowLog(limit: 2, windowNanoseconds: 9),
            try SlidingWindowCounter(limit: 2, windowNanoseconds: 9),
            try SlidingWindowSegments(limit: 2, segmentsPerWindow: 6, segmentNanoseconds: 10),
            try LeakyBucketQueue(queueCapacity: 2, intervalNanoseconds: 5),
            try ConcurrencyLimiter(limit: 4),
        ]
        func roundTrip<S: RateLimitStrategy & Codable>(_ value: S) throws {
            let text = try encode(value)
            #expect(try decode(S.self, text) == value, "\(text)")
        }
        for value in values { try roundTrip(value) }
        let composite = try CompositeLimit(
            .gcra(try GCRA(burst: 3, emissionIntervalNanoseconds: 7)), .concurrency(try ConcurrencyLimiter(limit: 2)))
        #expect(try decode(CompositeLimit.self, try encode(composite)) == composite)
    }

    @Test("CORE-16 FW-13 SWS-13 a window's alignment is a string member, written only when it is not the origin")
    func alignment() throws {
        let creation = try FixedWindow(limit: 5, windowNanoseconds: 60, alignment: .creation)
        #expect(try encode(creation) == #"{"alignment":"creation","limit":5,"windowNanoseconds":60}"#)
        #expect(try encode(creation.aligned(.origin)) == #"{"limit":5,"windowNanoseconds":60}"#)
        for alignment in WindowAlignment.allCases {
            #expect(
                try decode(FixedWindow.self, try encode(creation.aligned(alignment))) == creation.aligned(alignment))
        }
        #expect(
            try decode(
                AnyRateLimitStrategy.self,
                #"{"strategy": "fixed-window", "configuration": {"limit": 5, "windowNanoseconds": 60, "alignment": "first-event"}}"#
            ) == .fixedWindow(creation.aligned(.firstEvent)))
        let unknown = refusal {
            _ = try decode(FixedWindow.self, #"{"limit": 5, "windowNanoseconds": 60, "alignment": "creation-time"}"#)
        }
        #expect(unknown?.path == "alignment" && unknown?.message.contains("unknown alignment") == true)
        let elsewhere = refusal {
            _ = try decode(SlidingWindowLog.self, #"{"limit": 5, "windowNanoseconds": 60, "alignment": "creation"}"#)
        }
        #expect(elsewhere?.path == "alignment" && elsewhere?.message.contains("unknown field") == true)
        // SWS-13: segments align to the origin or to the creation.
        let segments = try SlidingWindowSegments(
            limit: 3, segmentsPerWindow: 2, segmentNanoseconds: 5, alignment: .creation)
        #expect(try decode(SlidingWindowSegments.self, try encode(segments)) == segments)
        #expect(try encode(segments).contains(#""alignment":"creation""#))
        let firstEvent = refusal {
            _ = try decode(
                SlidingWindowSegments.self,
                #"{"limit": 3, "segmentsPerWindow": 2, "segmentNanoseconds": 5, "alignment": "first-event"}"#)
        }
        #expect(firstEvent?.path == "alignment", "\(String(describing: firstEvent))")
    }

    @Test(
        "CORE-16 CORE-3 a configuration is refused by its field: missing, unknown, not an integer, or refused by the Spec"
    )
    func refusals() {
        let missing = refusal { _ = try decode(GCRA.self, #"{"burst": 3}"#) }
        #expect(missing?.path == "emissionIntervalNanoseconds")
        let unknown = refusal {
            _ = try decode(GCRA.self, #"{"burst": 3, "emissionIntervalNanoseconds": 5, "brust": 1}"#)
        }
        #expect(unknown?.path == "brust" && unknown?.message.contains("unknown field") == true)
        let notInteger = refusal { _ = try decode(GCRA.self, #"{"burst": "3", "emissionIntervalNanoseconds": 5}"#) }
        #expect(notInteger?.path == "burst")
        #expect(
            refusal { _ = try decode(GCRA.self, #"{"burst": 1.5, "emissionIntervalNanoseconds": 5}"#) } != nil,
            "a fraction is not an integer")
        let refused = refusal { _ = try decode(GCRA.self, #"{"burst": 0, "emissionIntervalNanoseconds": 5}"#) }
        #expect(refused?.path == "burst" && refused?.message == "burst = 0 must be at least 1")
        let nested = refusal {
            _ = try decode(
                AnyRateLimitStrategy.self,
                #"{"strategy": "token-bucket", "configuration": {"capacity": 2, "permitsPerPeriod": 1, "periodNanoseconds": 10, "initialTokens": 3}}"#
            )
        }
        #expect(
            nested?.path == "configuration.initialTokens" && nested?.message.contains("exceeds the maximum 2") == true,
            "\(String(describing: nested))")
        let strategy = refusal {
            _ = try decode(AnyRateLimitStrategy.self, #"{"strategy": "leaky", "configuration": {}}"#)
        }
        #expect(strategy?.message.contains("unknown strategy \"leaky\"") == true)
        let composite = refusal { _ = try decode(CompositeLimit.self, #"{"limits": []}"#) }
        #expect(composite?.path == "limits")
    }

    @Test("CORE-16 REG-1 a registry's rules load from JSON and are validated as the initializer validates them")
    func rules() throws {
        let json = #"""
            [{"keys": {"prefix": "api/"}, "strategy": {"strategy": "gcra", "configuration": {"burst": 5, "emissionIntervalNanoseconds": 200000000}},
              "overflow": {"queue": {"limit": 10, "timeoutNanoseconds": 2000000000}}, "warningThreshold": 2},
             {"keys": {"exact": "login"}, "strategy": {"strategy": "fixed-window", "configuration": {"limit": 5, "windowNanoseconds": 60000000000}}},
             {"keys": {"anyKey": true}, "strategy": {"strategy": "concurrency", "configuration": {"limit": 4}}, "overflow": "reject"}]
            """#
        let rules = try decode([RateLimitRule<AnyRateLimitStrategy>].self, json)
        #expect(rules.map(\.keys) == [.prefix("api/"), .exact("login"), .anyKey])
        #expect(rules[0].overflow == .queue(limit: 10, timeout: .seconds(2)) && rules[0].warningThreshold == 2)
        #expect(rules[1].overflow == .reject && rules[1].warningThreshold == 0)
        #expect(try decode([RateLimitRule<AnyRateLimitStrategy>].self, try encode(rules)) == rules)
        _ = try RateLimitRegistry(rules: rules, at: .origin)
        let threshold = refusal {
            _ = try decode(
                RateLimitRule<GCRA>.self,
                #"{"keys": {"anyKey": true}, "strategy": {"burst": 5, "emissionIntervalNanoseconds": 1}, "warningThreshold": 5}"#
            )
        }
        #expect(threshold?.message.contains("warningThreshold") == true, "\(String(describing: threshold))")
        let emptyKey = refusal {
            _ = try decode(KeyPattern.self, #"{"prefix": ""}"#)
            _ = try decode(
                RateLimitRule<GCRA>.self,
                #"{"keys": {"prefix": ""}, "strategy": {"burst": 1, "emissionIntervalNanoseconds": 1}}"#)
        }
        #expect(emptyKey != nil)
        #expect(
            refusal { _ = try decode(KeyPattern.self, #"{"exact": "a", "prefix": "b"}"#) } != nil,
            "one pattern at a time")
        #expect(
            refusal { _ = try decode(OverflowPolicy.self, #""drop""#) }?.message == "unknown overflow policy \"drop\"")
    }
}
