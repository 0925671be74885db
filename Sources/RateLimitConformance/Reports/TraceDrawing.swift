import RateLimitCore

/// A case drawn as an SVG timeline: what the Spec answered and what the implementation answered,
/// step by step, with the quota the Spec computes and the first difference marked.
///
/// One column per step, left to right in the trace's order, labelled with its instant in the
/// trace's own unit (nanoseconds); steps are evenly spaced, since instants of one trace may lie
/// nanoseconds or years apart. A refusal's retry-after is a bar from its step to the column where
/// time reaches the admission instant it promises (an arrow when that is past the last step).
/// The quota is the Spec's `remaining` (the largest acquire it would admit) after each step, on
/// the implementation's own history (CONF-2), scaled to the largest value drawn.
package enum TraceDrawing {
    /// The SVG of `outcome`, or `nil` when it has no trace (a configuration refusal).
    package static func svg(_ outcome: CaseOutcome, profile: ImplementationProfile, tolerance: Int64) -> String? {
        guard let trace = outcome.trace else { return nil }
        let merged = trace.mergedSteps
        let count = min(merged.count, outcome.answers.count, outcome.expected.count)
        guard count > 0 else { return nil }
        let steps = Array(merged.prefix(count))
        let quota = quotas(trace, steps, answers: outcome.answers, profile: profile, tolerance: tolerance)
        let divergence = (0..<count).first { outcome.answers[$0].comparable != outcome.expected[$0].comparable }

        let column = 64.0
        let left = 150.0
        let title = "\(outcome.id): \(trace.configuration.kind) \(trace.configuration.json.compactText)"
        // Wide enough for the title too (about 7.5 px per character at its size).
        let width = max(left + column * Double(count) + 40, 24 + 7.5 * Double(title.count))
        let quotaTop = 70.0
        let quotaHeight = 90.0
        let specLane = 200.0
        let implementationLane = 250.0
        let height = 320.0
        func x(_ index: Int) -> Double { left + column * (Double(index) + 0.5) }
        /// Where time reaches `instant` among the columns (between two steps' instants, linearly).
        func x(atInstant instant: Int64, from index: Int) -> (Double, beyond: Bool) {
            for next in index..<count where steps[next].now >= instant {
                guard next > index, steps[next].now > steps[next - 1].now else { return (x(next), false) }
                let previous = steps[next - 1].now
                let share = Double(instant - previous) / Double(steps[next].now - previous)
                return (x(next - 1) + column * min(max(share, 0), 1), false)
            }
            return (width - 12, true)
        }

        var svg = SVGWriter(width: width, height: height)
        svg.text(12, 22, title, size: 13, weight: "bold")
        svg.text(
            12, 42, "created at \(trace.createdAt) ns; one column per step; quota = the Spec's remaining", size: 11,
            fill: "#555")
        svg.text(12, quotaTop + 12, "Spec quota", size: 11, fill: "#555")
        svg.text(12, specLane + 4, "Spec", size: 12, weight: "bold")
        svg.text(12, implementationLane + 4, "implementation", size: 12, weight: "bold")

        // The quota as a step line.
        let largest = max(quota.compactMap { $0 }.max() ?? 0, 1)
        var points: [(Double, Double)] = []
        for (index, value) in quota.enumerated() {
            guard let value else { continue }
            let y = quotaTop + quotaHeight - quotaHeight * Double(value) / Double(largest)
            points.append((x(index) - column / 2, y))
            points.append((x(index) + column / 2, y))
        }
        svg.line(left, quotaTop + quotaHeight, width - 30, quotaTop + quotaHeight, stroke: "#bbb")
        if !points.isEmpty { svg.polyline(points, stroke: "#3b6fb6", className: "quota") }
        svg.text(left - 6, quotaTop + 4, "\(largest)", size: 10, fill: "#555", anchor: "end")
        svg.text(left - 6, quotaTop + quotaHeight + 4, "0", size: 10, fill: "#555", anchor: "end")

        for lane in [specLane, implementationLane] {
            svg.line(left, lane, width - 30, lane, stroke: "#ddd")
        }
        if let divergence {
            let at = x(divergence)
            svg.line(
                at, quotaTop - 8, at, height - 30, stroke: "#d33", dash: "5,4", width: 2, className: "divergence")
            svg.text(at + 4, quotaTop - 12, "first difference (step \(divergence + 1))", size: 11, fill: "#d33")
        }
        for index in 0..<count {
            let step = steps[index]
            svg.text(x(index), height - 34, step.description, size: 10, anchor: "middle")
            svg.text(x(index), height - 20, "\(step.now)", size: 9, fill: "#555", anchor: "middle")
            for (answer, lane) in [(outcome.expected[index], specLane), (outcome.answers[index], implementationLane)] {
                mark(answer, at: x(index), lane, &svg)
                if case .rejected(let wait) = answer, wait > 0 {
                    let (end, beyond) = x(atInstant: step.now.addingReportingOverflow(wait).partialValue, from: index)
                    let to = max(end, x(index) + 8)
                    // Staggered, so that bars of neighbouring steps that overlap stay apart.
                    let y = lane + 11 + Double(index % 4) * 4
                    svg.line(x(index) + 7, y, to, y, stroke: "#e08a00", width: 2, className: "retry")
                    if beyond { svg.text(to + 2, y + 4, "→", size: 12, fill: "#e08a00") }
                }
                svg.text(x(index), lane - 12, answer.brief, size: 8, fill: "#444", anchor: "middle")
            }
        }
        return svg.finish()
    }

    /// The Spec's `remaining` after each step, on the implementation's history (the judge's shadow).
    static func quotas(
        _ trace: Trace, _ steps: [RunStep], answers: [RateLimitResult], profile: ImplementationProfile,
        tolerance: Int64
    ) -> [Int64?] {
        var judge = Judge(
            configuration: trace.configuration, createdAt: trace.createdAt, profile: profile, tolerance: tolerance)
        var values: [Int64?] = []
        for (index, step) in steps.enumerated() {
            switch step {
            case .event(let event):
                _ = judge.judge(step: index + 1, event.event, at: event.now, got: answers[index])
            case .refusedReconfigure(let refused):
                _ = judge.judgeRefusedReconfigure(refused.configuration, at: refused.now, got: answers[index])
            }
            if case .allowed(let remaining) = judge.shadow.probe(.acquire(0), at: .generated(step.now)) {
                values.append(remaining)
            } else {
                values.append(nil)
            }
        }
        return values
    }

    /// An answer's mark: admitted (a filled circle), delayed (a ring), refused (a cross), refused
    /// until a release (an orange cross), never allowed (a square), invalid (a diamond).
    private static func mark(_ answer: RateLimitResult, at x: Double, _ y: Double, _ svg: inout SVGWriter) {
        switch answer {
        case .allowed: svg.circle(x, y, 7, fill: "#2a9d4b", className: "admitted")
        case .delayed: svg.circle(x, y, 7, fill: "white", stroke: "#2a9d4b", className: "delayed")
        case .rejected: svg.cross(x, y, 7, stroke: "#d33", className: "refused")
        case .rejectedUntilRelease: svg.cross(x, y, 7, stroke: "#e08a00", className: "refused")
        case .neverAllowed: svg.rect(x - 6, y - 6, 12, 12, fill: "#222", className: "never")
        case .invalid:
            svg.polygon([(x, y - 8), (x + 8, y), (x, y + 8), (x - 8, y)], fill: "#888", className: "invalid")
        }
    }
}

/// A minimal SVG writer: elements appended in order, text escaped, numbers with one decimal.
struct SVGWriter {
    private var body: [String] = []
    let width: Double
    let height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    mutating func text(
        _ x: Double, _ y: Double, _ content: String, size: Int, fill: String = "#111", weight: String = "normal",
        anchor: String = "start"
    ) {
        body.append(
            "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(size)\" fill=\"\(fill)\" font-weight=\"\(weight)\" text-anchor=\"\(anchor)\">\(HTML.escape(content))</text>"
        )
    }

    mutating func line(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, dash: String? = nil, width: Double = 1,
        className: String? = nil
    ) {
        body.append(
            "<line\(cls(className)) x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(n(width))\"\(dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")/>"
        )
    }

    mutating func polyline(_ points: [(Double, Double)], stroke: String, className: String) {
        let list = points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ")
        body.append(
            "<polyline\(cls(className)) points=\"\(list)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"2\"/>")
    }

    mutating func circle(
        _ x: Double, _ y: Double, _ r: Double, fill: String, stroke: String? = nil, className: String
    ) {
        body.append(
            "<circle\(cls(className)) cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(r))\" fill=\"\(fill)\"\(stroke.map { " stroke=\"\($0)\" stroke-width=\"2\"" } ?? "")/>"
        )
    }

    mutating func cross(_ x: Double, _ y: Double, _ r: Double, stroke: String, className: String) {
        body.append(
            "<path\(cls(className)) d=\"M\(n(x - r)),\(n(y - r))L\(n(x + r)),\(n(y + r))M\(n(x + r)),\(n(y - r))L\(n(x - r)),\(n(y + r))\" stroke=\"\(stroke)\" stroke-width=\"3\"/>"
        )
    }

    mutating func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, fill: String, className: String) {
        body.append(
            "<rect\(cls(className)) x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(w))\" height=\"\(n(h))\" fill=\"\(fill)\"/>"
        )
    }

    mutating func polygon(_ points: [(Double, Double)], fill: String, className: String) {
        let list = points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ")
        body.append("<polygon\(cls(className)) points=\"\(list)\" fill=\"\(fill)\"/>")
    }

    func finish() -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"trace\" width=\"\(n(width))\" height=\"\(n(height))\" viewBox=\"0 0 \(n(width)) \(n(height))\" font-family=\"sans-serif\">\n"
            + body.joined(separator: "\n") + "\n</svg>\n"
    }

    private func cls(_ name: String?) -> String { name.map { " class=\"\($0)\"" } ?? "" }

    /// One decimal, without a trailing `.0`.
    private func n(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths % 10))"
    }
}

/// Escaping for text placed in HTML or SVG.
enum HTML {
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
