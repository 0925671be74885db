// The table for people and the JSON for machines, with the machine they were measured on.

import Foundation

struct Machine {
    let cpu: String
    let cores: Int
    let memory: UInt64
    let system: String

    static var current: Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        let info = ProcessInfo.processInfo
        return Machine(
            cpu: model ?? "unknown CPU", cores: info.activeProcessorCount, memory: info.physicalMemory,
            system: info.operatingSystemVersionString)
    }

    var description: String { "\(cpu), \(cores) cores, \(memory / 1_048_576) MiB, \(system)" }
}

func number(_ value: Double) -> String {
    value >= 100
        ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

func renderTable(_ results: [Measurement], machine: Machine, smoke: Bool) -> String {
    var lines = [
        "ratelimit-bench\(smoke ? " (smoke: a few operations, once; not a measurement)" : "") on \(machine.description)",
        "",
    ]
    let header = ["section", "measurement", "median", "spread", "unit", "floor", "ratio", "target", ""]
    var rows: [[String]] = [header]
    for result in results {
        let target = [
            result.ratioTarget.map { "≤ \(number($0))x" },
            result.absoluteTarget.map { "≤ \(number($0)) \(result.unit)" },
        ]
        .compactMap { $0 }.joined(separator: ", ")
        let verdict = result.meetsTarget.map { $0 ? "ok" : result.outOfReach ? "out of reach" : "MISSED" } ?? ""
        rows.append([
            result.section, result.name + (result.note.map { " (\($0))" } ?? ""), number(result.median),
            result.samples.count > 1 ? "\(number(result.minimum))–\(number(result.maximum))" : "", result.unit,
            result.floor.map { "\($0) (\(number(result.floorMedian ?? 0)))" } ?? "",
            result.ratio.map { "\(number($0))x" } ?? "", target, verdict,
        ])
    }
    let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    for (index, row) in rows.enumerated() {
        lines.append(
            row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(
                separator: "  "))
        if index == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
    }
    let targets = results.compactMap(\.meetsTarget)
    lines.append("")
    let unreachable = results.filter { $0.meetsTarget == false && $0.outOfReach }.count
    lines.append(
        "\(targets.filter { $0 }.count) of \(targets.count) targets met\(unreachable > 0 ? ", \(unreachable) shown out of reach by a bound" : ""); medians of \(results.first?.samples.count ?? 0) repetitions after a warm-up"
    )
    return lines.joined(separator: "\n")
}

func renderJSON(_ results: [Measurement], machine: Machine, smoke: Bool) -> String {
    func string(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\""
    }
    func optional(_ value: Double?) -> String { value.map { String($0) } ?? "null" }
    let entries = results.map { result in
        """
            {"section": \(string(result.section)), "name": \(string(result.name)), "unit": \(string(result.unit)), \
        "median": \(result.median), "min": \(result.minimum), "max": \(result.maximum), "samples": [\(result.samples.map { String($0) }.joined(separator: ", "))], \
        "floor": \(result.floor.map(string) ?? "null"), "floorMedian": \(optional(result.floorMedian)), "ratio": \(optional(result.ratio)), \
        "ratioTarget": \(optional(result.ratioTarget)), "absoluteTarget": \(optional(result.absoluteTarget)), \
        "meetsTarget": \(result.meetsTarget.map { String($0) } ?? "null"), "outOfReach": \(result.outOfReach), "note": \(result.note.map(string) ?? "null")}
        """
    }
    return """
        {"machine": {"cpu": \(string(machine.cpu)), "cores": \(machine.cores), "memoryBytes": \(machine.memory), "system": \(string(machine.system))},
         "smoke": \(smoke), "results": [
        \(entries.joined(separator: ",\n"))
        ]}
        """
}
