import RateLimitCore

/// Several implementations run through the same suite, side by side: implementation × strategy →
/// the level met, utilization, the failure groups by clause and what the profile left unchecked.
/// Rendered as text, JSON, Markdown (`reports/MATRIX.md`) and one self-contained HTML page.
package struct ConformanceMatrix: Sendable {
    /// One implementation to run: a line of the matrix file.
    package struct Entry: Sendable, Equatable {
        package var name: String
        package var version: String
        /// A shell command, run from the working directory, that speaks `Spec/protocol.md`.
        package var command: String

        package init(name: String, version: String, command: String) {
            self.name = name
            self.version = version
            self.command = command
        }
    }

    /// One implementation's run: its report and the cases its extensions were asked (the HTTP
    /// vectors, each machine's scenarios), or why there is none.
    package struct Row: Sendable {
        package var entry: Entry
        package var report: ConformanceReport?
        package var failure: String?
        package var extras: [CaseRunReport]

        package init(entry: Entry, report: ConformanceReport?, failure: String?, extras: [CaseRunReport] = []) {
            self.entry = entry
            self.report = report
            self.failure = failure
            self.extras = extras
        }

        /// How many expectations `--write-expect` writes for this run at `level`: what the
        /// implementation's regression gate starts from (Spec/Conformance.md, "Expectations").
        package func expectations(at level: ConformanceLevel) -> Int? {
            report.map { Set($0.findings(at: level) + extras.flatMap(\.findings)).count }
        }

        /// The cell of extension `label`: `exact` (every case answered as the vectors say), `N of M
        /// differ`, or `-` where the implementation does not declare it.
        package func cell(extension label: String) -> String {
            guard failure == nil else { return "error" }
            guard let extra = extras.first(where: { $0.label == label }), extra.notRun == nil else { return "-" }
            return extra.passed ? "exact" : "\(extra.differing) of \(extra.cases) differ"
        }
    }

    package var rows: [Row]
    /// How the suite ran: the date, the vectors, the random traces and the seed.
    package var runDescription: String

    /// The HTML page's title: the matrix's, or a single run's (`Conformance report: NAME`).
    package var title = "Rate limiter conformance matrix"
    /// The level the rows were judged at, which their expectations count findings below.
    package var level: ConformanceLevel = .exact

    package init(rows: [Row], runDescription: String) {
        self.rows = rows
        self.runDescription = runDescription
    }

    /// One run's report, as a page of its own (`--html` without `--matrix`).
    package init(report row: Row, runDescription: String) {
        self.init(rows: [row], runDescription: runDescription)
        title = "Conformance report: \(row.entry.name)"
    }

    /// The implementations a matrix file lists: a JSON object `{"implementations": [{"name",
    /// "version", "command"}]}` (or the bare array), or plain lines `name | version | command`
    /// (blank lines and lines starting with `#` ignored).
    package static func entries(from text: String) throws(ConformanceFormatError) -> [Entry] {
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.first == "{" || trimmed.first == "[" {
            let json: JSONValue
            do { json = try JSONValue(parsing: String(trimmed)) } catch {
                throw ConformanceFormatError("the matrix file is not valid JSON: \(error)")
            }
            let list = json["implementations"]?.array ?? json.array
            guard let list, !list.isEmpty else {
                throw ConformanceFormatError("the matrix file lists no implementations")
            }
            var entries: [Entry] = []
            for (index, item) in list.enumerated() {
                guard let name = item["name"]?.string, let version = item["version"]?.string,
                    let command = item["command"]?.string, !name.isEmpty, !command.isEmpty
                else {
                    throw ConformanceFormatError(
                        "implementation \(index + 1) of the matrix file needs a name, a version and a command")
                }
                entries.append(Entry(name: name, version: version, command: command))
            }
            return try unique(entries)
        }
        var entries: [Entry] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.trimmingWhitespace
            if content.isEmpty || content.hasPrefix("#") { continue }
            let fields = content.split(separator: "|", maxSplits: 2).map { String($0).trimmingWhitespace }
            guard fields.count == 3, !fields[0].isEmpty, !fields[2].isEmpty else {
                throw ConformanceFormatError("matrix file line \(number + 1): expected `name | version | command`")
            }
            entries.append(Entry(name: fields[0], version: fields[1], command: fields[2]))
        }
        guard !entries.isEmpty else { throw ConformanceFormatError("the matrix file lists no implementations") }
        return try unique(entries)
    }

    private static func unique(_ entries: [Entry]) throws(ConformanceFormatError) -> [Entry] {
        var seen: Set<String> = []
        for entry in entries where !seen.insert(entry.name).inserted {
            throw ConformanceFormatError("the matrix file lists \(entry.name) twice")
        }
        return entries
    }

    /// Every extension some row declared (`http`, then the scenario machines), in the order run.
    package var extensions: [String] {
        var labels: [String] = []
        for row in rows {
            for extra in row.extras where extra.notRun == nil && !labels.contains(extra.label) {
                labels.append(extra.label)
            }
        }
        return labels
    }

    /// Every strategy any row ran or skipped, in the Spec's order.
    package var strategies: [String] {
        let named = Set(rows.flatMap { $0.report?.strategies.map(\.strategy) ?? [] })
        return AnyRateLimitStrategy.identifiers.filter(named.contains)
    }

    /// A cell: `exact`, `exact ±5ns`, `safe`, `safe ±5ns`, `fails`, or `-` with the reason it did not run.
    package static func cell(_ report: StrategyReport?) -> String {
        guard let report else { return "-" }
        let tolerance = report.toleranceNanoseconds > 0 ? " ±\(report.toleranceNanoseconds)ns" : ""
        // FW-13, SWS-13: the variant the row was judged as, when it is not the Spec's design.
        let alignment = report.profile.alignment
        let variant =
            alignment != .origin && AnyRateLimitStrategy.alignments(of: report.strategy).contains(alignment)
            ? " (\(alignment.rawValue))" : ""
        switch report.level {
        case .exact: return "exact" + tolerance + variant
        case .safety: return "safe" + tolerance + variant
        case .failed: return "fails" + variant
        case .skipped: return "-"
        }
    }

    private static func reason(_ report: StrategyReport?) -> String {
        report?.skippedBecause ?? "not implemented"
    }

    // MARK: Text

    /// The matrix for a terminal: one line per implementation, then each one's failure groups.
    package var text: [String] {
        var lines = ["conformance matrix: \(runDescription)", ""]
        let header = ["implementation", "version", "expectations"] + strategies + extensions
        let table = rows.map { row in
            [row.entry.name, row.entry.version, row.expectations(at: level).map(String.init) ?? "-"]
                + strategies.map { strategy in
                    row.failure != nil ? "error" : Self.cell(row.report?.strategies.first { $0.strategy == strategy })
                } + extensions.map { row.cell(extension: $0) }
        }
        lines += TextTable.render(header: header, rows: table)
        for row in rows {
            lines.append("")
            if let failure = row.failure {
                lines.append("\(row.entry.name): did not run: \(failure)")
                continue
            }
            guard let report = row.report else { continue }
            let groups = report.strategies.flatMap(\.groups)
            lines.append("\(row.entry.name) \(row.entry.version): \(summary(report))")
            for group in groups.prefix(8) {
                lines.append("  \(Self.groupLine(group))")
            }
            if groups.count > 8 { lines.append("  ... \(groups.count - 8) more groups") }
            for extra in row.extras where extra.notRun == nil && !extra.passed {
                lines.append(
                    "  DIFF \(extra.label): \(extra.differing) of \(extra.cases) cases differ from \(extra.specFile)")
            }
        }
        return lines
    }

    private func summary(_ report: ConformanceReport) -> String {
        let ran = report.strategies.filter { $0.level != .skipped }
        let failing = ran.filter { $0.level == .failed }.count
        return
            "\(ran.count) \(ran.count == 1 ? "strategy" : "strategies") ran, \(ran.count - failing) conform (exact or safe), \(failing) \(failing == 1 ? "fails" : "fail")"
    }

    private static func groupLine(_ group: FindingGroup) -> String {
        let severity = group.severity.text.map { "; worst: \($0)" } ?? ""
        let verdict = group.kind.failsSafety ? "FAIL" : "DIFF"
        return
            "\(verdict) \(group.strategy) \(group.cause.clause) \(group.cause.title): \(group.kind.name), \(group.cases.count) case\(group.cases.count == 1 ? "" : "s")\(severity)"
    }

    // MARK: History

    /// This run's line of the matrix history (`--history`): when, with which vectors and
    /// options, and per row its version, its expectations and every cell that ran, so that a
    /// change between library versions or suite versions shows.
    package func historyLine(date: String) -> JSONValue {
        .object([
            ("date", .string(date)), ("run", .string(runDescription)),
            (
                "rows",
                .array(
                    rows.map { row in
                        let cells: [(String, String)] =
                            strategies.map { strategy in
                                let report = row.report?.strategies.first { $0.strategy == strategy }
                                return (strategy, row.failure != nil ? "error" : Self.cell(report))
                            }
                            + extensions.map { ($0, row.cell(extension: $0)) }
                        return .object([
                            ("name", .string(row.entry.name)), ("version", .string(row.entry.version)),
                            ("expectations", row.expectations(at: level).map { .integer(Int64($0)) } ?? .null),
                            ("cells", .object(cells.filter { $0.1 != "-" }.map { ($0.0, JSONValue.string($0.1)) })),
                        ])
                    })
            ),
        ])
    }

    /// The history's lines, newest first, as a Markdown section: per run and row, its version,
    /// its expectations and the cells that ran.
    package static func historyMarkdown(_ lines: [JSONValue]) -> String {
        var out = "\n## History\n\nEach `make matrix` run, newest first (`reports/matrix-history.jsonl`).\n\n"
        out += "| date | implementation | version | expectations | cells |\n|---|---|---|---:|---|\n"
        for line in lines.reversed() {
            let date = line["date"]?.string ?? "?"
            for row in line["rows"]?.array ?? [] {
                let cells: [String] =
                    if case .object(let members)? = row["cells"] {
                        members.map { "\($0.0): \($0.1.string ?? "?")" }
                    } else { [] }
                let expectations = row["expectations"]?.int64.map(String.init) ?? "-"
                out +=
                    "| \(date) | \(pipeSafe(row["name"]?.string ?? "?")) | \(pipeSafe(row["version"]?.string ?? "?")) | \(expectations) | \(pipeSafe(cells.joined(separator: ", "))) |\n"
            }
        }
        return out
    }

    // MARK: JSON

    package var json: JSONValue {
        .object([
            ("format", .string("ratelimit-conformance-matrix")), ("run", .string(runDescription)),
            ("strategies", .array(strategies.map(JSONValue.string))),
            (
                "implementations",
                .array(
                    rows.map { row in
                        var members: [(String, JSONValue)] = [
                            ("name", .string(row.entry.name)), ("version", .string(row.entry.version)),
                            ("command", .string(row.entry.command)),
                        ]
                        if let failure = row.failure { members.append(("error", .string(failure))) }
                        let declared = row.extras.filter { $0.notRun == nil }
                        if !declared.isEmpty {
                            members.append(
                                (
                                    "extensions",
                                    .array(
                                        declared.map { extra in
                                            .object([
                                                ("extension", .string(extra.label)),
                                                ("cases", .integer(Int64(extra.cases))),
                                                ("differing", .integer(Int64(extra.differing))),
                                            ])
                                        })
                                ))
                        }
                        if let count = row.expectations(at: level) {
                            members.append(("expectations", .integer(Int64(count))))
                        }
                        if let report = row.report {
                            members.append(
                                (
                                    "strategies",
                                    .array(
                                        report.strategies.map { strategy in
                                            .object([
                                                ("strategy", .string(strategy.strategy)),
                                                ("cell", .string(Self.cell(strategy))),
                                                ("level", .string(strategy.level.rawValue)),
                                                ("toleranceNanoseconds", .integer(strategy.toleranceNanoseconds)),
                                                (
                                                    "utilization",
                                                    strategy.utilization.map {
                                                        .string(ConformanceReport.decimal($0))
                                                    } ?? .null
                                                ),
                                                (
                                                    "skippedBecause",
                                                    strategy.skippedBecause.map(JSONValue.string) ?? .null
                                                ),
                                                (
                                                    "notChecked",
                                                    .array(
                                                        strategy.notChecked.map(
                                                            JSONValue.string))
                                                ),
                                                (
                                                    "groups",
                                                    .array(
                                                        strategy.groups.map { group in
                                                            .object([
                                                                ("clause", .string(group.cause.clause)),
                                                                ("title", .string(group.cause.title)),
                                                                ("kind", .string(group.kind.name)),
                                                                ("failsSafety", .bool(group.kind.failsSafety)),
                                                                ("cases", .integer(Int64(group.cases.count))),
                                                                (
                                                                    "worst",
                                                                    group.severity.text.map(JSONValue.string) ?? .null
                                                                ),
                                                                ("example", .string(group.example.id)),
                                                            ])
                                                        })
                                                ),
                                            ])
                                        })
                                ))
                        }
                        return .object(members)
                    })
            ),
        ])
    }

    // MARK: Markdown

    /// The published matrix (`reports/MATRIX.md`).
    package var markdown: String {
        var out = "# Conformance matrix\n\n"
        out +=
            "Generated by `make matrix` (`ratelimit-conformance --matrix Implementations/matrix.json`): \(runDescription).\n"
        out += "Each cell is the level the implementation meets for the strategy (Spec/Conformance.md, CONF-3):\n"
        out +=
            "`exact`, `safe` (never looser than the Spec, within the liveness bounds), either within a declared tolerance (`±T`), `fails`, or `-` where it did not run (the reason is below); a fixed window judged as the variant its profile declares names it (`(first-event)`, FW-13).\n"
        out +=
            "`expectations` counts the findings `--write-expect` writes for the row's run: what its maintainer's regression gate (`--expect`) starts from. After the strategies come the extensions a row declares (`http`: the HTTP vectors through server-feedback; the scenario machines): `exact`, or how many of their cases differ.\n\n"
        out +=
            "| implementation | version | expectations | " + (strategies + extensions).joined(separator: " | ") + " |\n"
        out += "|---|---|---:|" + String(repeating: "---|", count: strategies.count + extensions.count) + "\n"
        for row in rows {
            let cells =
                strategies.map { strategy in
                    row.failure != nil ? "error" : Self.cell(row.report?.strategies.first { $0.strategy == strategy })
                } + extensions.map { row.cell(extension: $0) }
            out += "| [\(row.entry.name)](#\(Self.anchor(row.entry.name))) | \(row.entry.version) | "
            out += "\(row.expectations(at: level).map(String.init) ?? "-") | "
            out +=
                cells.map { $0.hasPrefix("fails") ? "**fails**" + $0.dropFirst(5) : $0 }.joined(separator: " | ")
                + " |\n"
        }
        for row in rows {
            out += "\n## \(row.entry.name)\n\n"
            out += "Version \(row.entry.version); command `\(row.entry.command)`.\n\n"
            if let failure = row.failure {
                out += "Did not run: \(failure)\n"
                continue
            }
            guard let report = row.report else { continue }
            // Strategies that did not run, grouped by the reason given.
            var notRun: [(reason: String, strategies: [String])] = []
            for strategy in report.strategies where strategy.level == .skipped {
                let reason = Self.reason(strategy)
                if let index = notRun.firstIndex(where: { $0.reason == reason }) {
                    notRun[index].strategies.append(strategy.strategy)
                } else {
                    notRun.append((reason, [strategy.strategy]))
                }
            }
            for group in notRun {
                out += "Not run: \(group.strategies.joined(separator: ", ")) (\(group.reason)).\n\n"
            }
            let ran = report.strategies.filter { $0.level != .skipped }
            if !ran.isEmpty {
                out += "| strategy | level | utilization | not checked (profile) |\n|---|---|---:|---|\n"
            }
            for strategy in ran {
                let level = Self.cell(strategy)
                let utilization = strategy.utilization.map(ConformanceReport.percent) ?? "-"
                let unchecked = strategy.notChecked
                out +=
                    "| \(strategy.strategy) | \(Self.pipeSafe(level)) | \(utilization) | \(Self.pipeSafe(unchecked.isEmpty ? "-" : unchecked.joined(separator: "; "))) |\n"
            }
            for extra in row.extras where extra.notRun == nil {
                for line in extra.notChecked { out += "\n\(extra.label), not checked: \(line)\n" }
            }
            for extra in row.extras where extra.notRun == nil && !extra.passed {
                out += "\n\(extra.label) (\(extra.specFile)): \(extra.differing) of \(extra.cases) cases differ: "
                let listed = extra.failures.prefix(10)
                out += listed.map { "`\($0.id)`" }.joined(separator: ", ")
                out += extra.differing > listed.count ? ", …\n" : "\n"
            }
            let groups = report.strategies.flatMap(\.groups)
            if groups.isEmpty {
                let extensionsPass = row.extras.allSatisfy(\.passed)
                out += extensionsPass ? "\nNo finding: every case that ran is exact.\n" : ""
                if !ran.isEmpty, !extensionsPass {
                    out += "\nNo strategy finding: every strategy case that ran is exact.\n"
                }
                continue
            }
            out += "\nFindings by cause, the most severe first:\n\n"
            out +=
                "| strategy | clause | cause | kind | cases | worst | smallest case |\n|---|---|---|---|---:|---|---|\n"
            for group in groups {
                out +=
                    "| \(group.strategy) | \(group.cause.clause) | \(Self.pipeSafe(group.cause.title)) | \(group.kind.failsSafety ? "**\(group.kind.name)**" : group.kind.name) | \(group.cases.count) | \(Self.pipeSafe(group.severity.text ?? "-")) | `\(group.example.id)` |\n"
            }
            for strategy in report.strategies {
                guard let first = strategy.groups.first, let finding = first.example.primary else { continue }
                out += "\n\(strategy.strategy), \(first.cause.clause): `\(first.example.id)`, "
                out += "\(ConformanceReport.describe(finding).replacingOccurrences(of: "|", with: "\\|"))\n"
            }
        }
        return out
    }

    private static func pipeSafe(_ text: String) -> String {
        var escaped = ""
        for character in text { escaped += character == "|" ? "\\|" : String(character) }
        return escaped
    }

    static func anchor(_ name: String) -> String {
        String(name.lowercased().compactMap { $0.isLetter || $0.isNumber ? $0 : $0 == " " || $0 == "-" ? "-" : nil })
    }

    // MARK: HTML

    /// One self-contained page: the matrix, then per implementation its failure groups, each with
    /// a picture of its smallest case, and a shrunk random trace where one failed. No script and
    /// no external file.
    package var html: String {
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTML.escape(title))</title>
            <style>
            body{font-family:sans-serif;margin:2em;color:#111;max-width:1400px}
            table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px}
            th{background:#f4f4f4}.exact{background:#d8f3dc}.safe{background:#fff3bf}.fails{background:#ffd6d6}
            .none{color:#888}.figure{overflow-x:auto;border:1px solid #eee;margin:0.5em 0 1.5em}
            code{font-size:12px}
            </style></head><body>
            <h1>\(HTML.escape(title))</h1>

            """
        out +=
            "<p>\(HTML.escape(runDescription))</p>\n<table class=\"matrix\"><tr><th>implementation</th><th>version</th><th>expectations</th>"
        out += (strategies + extensions).map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows {
            out += "<tr><td><a href=\"#\(Self.anchor(row.entry.name))\">\(HTML.escape(row.entry.name))</a></td>"
            out += "<td>\(HTML.escape(row.entry.version))</td>"
            out += "<td>\(row.expectations(at: level).map(String.init) ?? "-")</td>"
            for strategy in strategies {
                let report = row.report?.strategies.first { $0.strategy == strategy }
                let cell = row.failure != nil ? "error" : Self.cell(report)
                let style =
                    cell.hasPrefix("exact") ? "exact" : cell.hasPrefix("safe") ? "safe" : cell == "-" ? "none" : "fails"
                out += "<td class=\"\(style)\">\(HTML.escape(cell))</td>"
            }
            for label in extensions {
                let cell = row.cell(extension: label)
                let style = cell == "exact" ? "exact" : cell == "-" ? "none" : "fails"
                out += "<td class=\"\(style)\">\(HTML.escape(cell))</td>"
            }
            out += "</tr>\n"
        }
        out += "</table>\n"
        for row in rows {
            out +=
                "<h2 id=\"\(Self.anchor(row.entry.name))\">\(HTML.escape(row.entry.name)) \(HTML.escape(row.entry.version))</h2>\n"
            out += "<p><code>\(HTML.escape(row.entry.command))</code></p>\n"
            if let failure = row.failure {
                out += "<p>Did not run: \(HTML.escape(failure))</p>\n"
                continue
            }
            guard let report = row.report else { continue }
            for strategy in report.strategies where !strategy.groups.isEmpty || strategy.shrunk != nil {
                out += "<h3>\(HTML.escape(strategy.strategy)): \(HTML.escape(Self.cell(strategy)))</h3>\n<table>"
                out +=
                    "<tr><th>clause</th><th>cause</th><th>kind</th><th>cases</th><th>worst</th><th>smallest case</th></tr>\n"
                for group in strategy.groups {
                    out += "<tr><td>\(HTML.escape(group.cause.clause))</td><td>\(HTML.escape(group.cause.title))</td>"
                    out += "<td>\(HTML.escape(group.kind.name))</td><td>\(group.cases.count)</td>"
                    out +=
                        "<td>\(HTML.escape(group.severity.text ?? "-"))</td><td><code>\(HTML.escape(group.example.id))</code></td></tr>\n"
                }
                out += "</table>\n"
                for group in strategy.groups {
                    guard
                        let picture = TraceDrawing.svg(
                            group.example, profile: strategy.profile, tolerance: strategy.toleranceNanoseconds)
                    else { continue }
                    out += "<p>\(HTML.escape(group.cause.clause)) \(HTML.escape(group.cause.title)): "
                    out += "<code>\(HTML.escape(group.example.id))</code>"
                    if let finding = group.example.primary {
                        out += ": \(HTML.escape(ConformanceReport.describe(finding)))"
                    }
                    out += "</p>\n<div class=\"figure\">\(picture)</div>\n"
                }
            }
        }
        return out + "</body></html>\n"
    }
}

extension StringProtocol {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
