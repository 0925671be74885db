import RateLimitCore

// A run as JUnit XML (`--junit`), the report every CI shows: one test suite per strategy (its
// vector cases and random traces), per kind of vector of the extensions, and one for what
// exploration found. A failure carries the clause and kind of its finding and the command that
// replays it.

/// A run as JUnit XML.
package struct JUnitReport: Sendable {
    package struct TestCase: Sendable {
        package var name: String
        /// `(message, text)` when the case fails.
        package var failure: (message: String, text: String)?
        /// Why the case did not run, when it did not.
        package var skipped: String?

        package init(name: String, failure: (message: String, text: String)? = nil, skipped: String? = nil) {
            (self.name, self.failure, self.skipped) = (name, failure, skipped)
        }
    }

    package struct Suite: Sendable {
        package var name: String
        package var cases: [TestCase]
        package init(name: String, cases: [TestCase]) { (self.name, self.cases) = (name, cases) }
    }

    package var name: String
    package var suites: [Suite] = []

    package init(name: String) { self.name = name }

    /// The strategies' cases, judged at `level`; `replay` says how to run one case again.
    package mutating func add(_ report: ConformanceReport, at level: ConformanceLevel, replay: (CaseOutcome) -> String)
    {
        for strategy in report.strategies {
            if let reason = strategy.skippedBecause {
                suites.append(
                    Suite(name: strategy.strategy, cases: [TestCase(name: strategy.strategy, skipped: reason)]))
                continue
            }
            var cases = (strategy.outcomes + strategy.refusals).map { outcome -> TestCase in
                if let reason = outcome.skippedBecause { return TestCase(name: outcome.id, skipped: reason) }
                guard outcome.level < level, outcome.level != .skipped else { return TestCase(name: outcome.id) }
                let primary = outcome.primary
                let message =
                    primary.map { "\($0.cause.description): \($0.kind.name) at step \($0.step)" }
                    ?? outcome.subjectFailure.map { "CONF-11 \($0.description)" } ?? "below \(level.rawValue)"
                let detail = primary.map { "expected \($0.expected), got \($0.got)" } ?? ""
                return TestCase(name: outcome.id, failure: (message, "\(detail)\nreplay: \(replay(outcome))"))
            }
            if let reason = strategy.belowFloor {
                cases.append(
                    TestCase(
                        name: "\(strategy.strategy) checked enough to judge (CONF-7)",
                        failure: ("THIN: \(reason)", "the profile leaves too little checked")))
            }
            if let reason = strategy.stoppedBecause {
                cases.append(TestCase(name: "\(strategy.strategy) ran to the end (CONF-11)", failure: (reason, reason)))
            }
            suites.append(Suite(name: strategy.strategy, cases: cases))
        }
    }

    /// The HTTP and scenario vectors: each failing case by its id, the others as one case.
    package mutating func add(_ extras: [CaseRunReport]) {
        for extra in extras {
            if let reason = extra.notRun {
                suites.append(Suite(name: extra.label, cases: [TestCase(name: extra.label, skipped: reason)]))
                continue
            }
            var cases = extra.failures.map {
                TestCase(
                    name: $0.id,
                    failure: ("not as \(extra.specFile) says", $0.differences.joined(separator: "\n")))
            }
            let passed = extra.cases - extra.differing
            if passed > 0 {
                cases.append(TestCase(name: "\(passed) other \(extra.label) cases as \(extra.specFile) says"))
            }
            suites.append(Suite(name: extra.label, cases: cases))
        }
    }

    /// What exploration found (the exhaustive pass, generated scenarios), each finding a failing
    /// case with its replay, or one passing case when it found nothing.
    package mutating func addExploration(_ findings: [(Expectation, replay: String)]) {
        let cases =
            findings.isEmpty
            ? [TestCase(name: "exploration found nothing")]
            : findings.map { finding, replay in
                TestCase(
                    name: finding.description, failure: ("\(finding.cause) (\(finding.kind))", "replay: \(replay)"))
            }
        suites.append(Suite(name: "exploration", cases: cases))
    }

    /// The XML document.
    package var xml: String {
        // HTML's escapes, after the control characters XML 1.0 has no place for, even escaped.
        func escaped(_ text: String) -> String {
            HTML.escape(
                String(
                    String.UnicodeScalarView(
                        text.unicodeScalars.map {
                            $0.value < 0x20 && $0 != "\n" && $0 != "\t" || (0xFFFE...0xFFFF).contains($0.value)
                                ? "?" : $0
                        })))
        }
        let failures = suites.reduce(0) { $0 + $1.cases.filter { $0.failure != nil }.count }
        let total = suites.reduce(0) { $0 + $1.cases.count }
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="\#(escaped(name))" tests="\#(total)" failures="\#(failures)">"#,
        ]
        for suite in suites {
            let failed = suite.cases.filter { $0.failure != nil }.count
            let skipped = suite.cases.filter { $0.skipped != nil }.count
            lines.append(
                #"  <testsuite name="\#(escaped(suite.name))" tests="\#(suite.cases.count)" failures="\#(failed)" skipped="\#(skipped)">"#
            )
            for testCase in suite.cases {
                let open = #"    <testcase classname="\#(escaped(suite.name))" name="\#(escaped(testCase.name))""#
                if let failure = testCase.failure {
                    lines.append(open + ">")
                    lines.append(
                        #"      <failure message="\#(escaped(failure.message))">\#(escaped(failure.text))</failure>"#)
                    lines.append("    </testcase>")
                } else if let reason = testCase.skipped {
                    lines.append(open + ">")
                    lines.append(#"      <skipped message="\#(escaped(reason))"/>"#)
                    lines.append("    </testcase>")
                } else {
                    lines.append(open + "/>")
                }
            }
            lines.append("  </testsuite>")
        }
        lines.append("</testsuites>")
        return lines.joined(separator: "\n") + "\n"
    }
}
