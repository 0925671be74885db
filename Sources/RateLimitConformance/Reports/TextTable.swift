// Plain-text tables for the command's reports.

/// Plain-text tables with aligned columns.
package enum TextTable {
    /// The header, a rule and the rows, each column padded to its widest cell.
    package static func render(header: [String], rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        return [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + rows.map(line)
    }

    /// `text`, or its first `limit - 1` characters and `…`, so that a table keeps its width.
    package static func clipped(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(0, limit - 1))) + "…"
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
