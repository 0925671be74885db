import Foundation

/// A picture of clients learning a server's limit (issue 39): one panel per run, side by side, each
/// with the server's admissions per second (from its own log), its refusals, and, for a client
/// whose events are read, the rate it had learned and the attempts it sent per second. SVG, drawn
/// by hand: the article "Learning the server's limit" shows the one
/// `RATELIMIT_NGINX_PICTURE=<file>` writes.
struct LearningPicture {
    struct Panel {
        let title: String
        /// Seconds from the server's first arrival: each admission, each refusal.
        let admitted: [Double]
        let refused: [Double]
        /// Seconds from the client's first send: each attempt, and each change of the learned rate
        /// (per second), when the client's own events are known.
        let sends: [Double]
        let learned: [(at: Double, rate: Double)]
    }

    let serverRate: Double
    let rows: [[Panel]]

    private static let width = 420.0
    private static let height = 200.0
    private static let margin = (left: 40.0, top: 28.0, right: 10.0, bottom: 28.0)

    /// Counts per whole second, from 0 to `seconds` (later instants left out).
    private static func perSecond(_ instants: [Double], seconds: Int) -> [Int] {
        var counts = Array(repeating: 0, count: seconds + 1)
        for instant in instants where instant >= 0 && Int(instant) <= seconds { counts[Int(instant)] += 1 }
        return counts
    }

    func svg() -> String {
        let panels = rows.flatMap { $0 }
        let seconds = Int(
            (panels.flatMap { $0.admitted + $0.refused + $0.sends }.max() ?? 1).rounded(.up))
        let top = max(2 * serverRate, Double(panels.flatMap { Self.perSecond($0.sends, seconds: seconds) }.max() ?? 0))
        let columns = rows.map(\.count).max() ?? 1
        let (w, h, m) = (Self.width, Self.height, Self.margin)
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(w) * columns)" height="\(Int(h) * rows.count + 24)" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="8" y="\(Int(h) * rows.count + 16)" fill="#444">per second: the server's admissions (green), the client's attempts (grey), the rate it learned (blue); 429s (red ticks); the server's rate (dashed)</text>

            """
        for (row, panelsOfRow) in rows.enumerated() {
            for (column, panel) in panelsOfRow.enumerated() {
                let (x0, y0) = (Double(column) * w, Double(row) * h)
                let plotWidth = w - m.left - m.right
                let plotHeight = h - m.top - m.bottom
                func x(_ second: Double) -> Double { x0 + m.left + plotWidth * second / Double(max(1, seconds)) }
                func y(_ rate: Double) -> Double { y0 + m.top + plotHeight * (1 - min(rate, top) / top) }
                func line(_ counts: [Int], _ color: String, _ width: Double) -> String {
                    let points = counts.enumerated().map {
                        String(format: "%.1f,%.1f", x(Double($0) + 0.5), y(Double($1)))
                    }
                    return
                        "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(width)\" points=\"\(points.joined(separator: " "))\"/>\n"
                }
                out += "<text x=\"\(x0 + m.left)\" y=\"\(y0 + 16)\" font-weight=\"bold\">\(panel.title)</text>\n"
                out += String(
                    format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                    x(0), y(0), x(Double(seconds)), y(0))
                out += String(
                    format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                    x(0), y(0), x(0), y(top))
                for tick in stride(from: 0.0, through: top, by: 10) {
                    out += String(
                        format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">%.0f</text>\n",
                        x(0) - 4, y(tick) + 4, tick)
                }
                for second in stride(from: 0, through: seconds, by: 10) {
                    out += String(
                        format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\">%d s</text>\n",
                        x(Double(second)), y(0) + 14, second)
                }
                out += String(
                    format:
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n",
                    x(0), y(serverRate), x(Double(seconds)), y(serverRate))
                // Each series ends with its run's last whole second (the partial one would read low).
                let own = max(0, Int(panel.admitted.last ?? 0) - 1)
                if !panel.sends.isEmpty { out += line(Self.perSecond(panel.sends, seconds: own), "#aaa", 1) }
                out += line(Self.perSecond(panel.admitted, seconds: own), "#2a9d3a", 1.8)
                if let first = panel.learned.first {
                    var points = [String(format: "%.1f,%.1f", x(max(0, first.at)), y(first.rate))]
                    for (previous, next) in zip(panel.learned, panel.learned.dropFirst()) {
                        points.append(String(format: "%.1f,%.1f", x(max(0, next.at)), y(previous.rate)))
                        points.append(String(format: "%.1f,%.1f", x(max(0, next.at)), y(next.rate)))
                    }
                    points.append(String(format: "%.1f,%.1f", x(Double(own + 1)), y(panel.learned.last!.rate)))
                    out +=
                        "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.4\" points=\"\(points.joined(separator: " "))\"/>\n"
                }
                for refusal in panel.refused {
                    out += String(
                        format:
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d22\" stroke-width=\"1.5\"/>\n",
                        x(refusal), y(0), x(refusal), y(0) - 8)
                }
            }
        }
        return out + "</svg>\n"
    }
}
