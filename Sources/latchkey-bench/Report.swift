import Foundation

/// One measured figure, with its floor ratio and target when it has them.
struct Measurement: Codable {
    var section: String
    var name: String
    var summary: Summary
    /// The name of the floor measurement this figure is compared with.
    var floor: String?
    var ratioToFloor: Double?
    /// The goal from issue 9, in words, and whether the median meets it.
    var target: String?
    var targetMet: Bool?
}

/// A figure this run could not measure, and why.
struct NotMeasured: Codable {
    var section: String
    var name: String
    var reason: String
}

/// Everything one benchmark run found; printed as a table or as one JSON document.
struct Report: Codable {
    var version = 1
    var date: String
    var machine: String
    var notes: [String] = []
    var measurements: [Measurement] = []
    var notMeasured: [NotMeasured] = []

    init() {
        let formatter = ISO8601DateFormatter()
        date = formatter.string(from: Date())
        let info = ProcessInfo.processInfo
        let memory = Double(info.physicalMemory) / Double(1 << 30)
        machine =
            "\(info.activeProcessorCount) cores / \(String(format: "%.0f", memory)) GiB, \(info.operatingSystemVersionString)"
    }

    @discardableResult
    mutating func add(_ section: String, _ name: String, _ summary: Summary) -> Measurement {
        let measurement = Measurement(section: section, name: name, summary: summary)
        measurements.append(measurement)
        return measurement
    }

    mutating func add(_ measurement: Measurement) {
        measurements.append(measurement)
    }

    mutating func skip(_ section: String, _ name: String, _ reason: String) {
        notMeasured.append(NotMeasured(section: section, name: name, reason: reason))
    }

    /// The measurement named `name` in `section`.
    func find(_ section: String, _ name: String) -> Measurement? {
        measurements.first { $0.section == section && $0.name == name }
    }

    /// The JSON document (`version` 1), pretty-printed with sorted keys.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The table: one line per figure, grouped by section, then what was not measured.
    func table() -> String {
        var lines = ["Latchkey benchmarks, \(date), \(machine)"]
        lines += notes.map { "  note: \($0)" }
        let header = ["measurement", "median", "p10-p90", "min-max", "n", "vs floor", "target", "met"]
        var rows: [[String]] = []
        var currentSection = ""
        for m in measurements {
            if m.section != currentSection {
                currentSection = m.section
                rows.append(["[\(m.section)]", "", "", "", "", "", "", ""])
            }
            let s = m.summary
            rows.append([
                "  " + m.name, Self.time(s.median), "\(Self.time(s.p10))-\(Self.time(s.p90))",
                "\(Self.time(s.min))-\(Self.time(s.max))", "\(s.samples)",
                m.ratioToFloor.map { String(format: "%.2fx", $0) } ?? "",
                m.target ?? "", m.targetMet.map { $0 ? "yes" : "NO" } ?? "",
            ])
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func render(_ row: [String]) -> String {
            row.enumerated().map { column, text in
                column == 0
                    ? text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - text.count) + text
            }.joined(separator: "  ")
        }
        lines.append(render(header))
        lines += rows.map(render)
        lines.append(
            "vs floor: reads against the AEAD open of the vault's size, writes and deletes against write+fsync+rename+fsync dir of the vault's size, the unlock against crypto_pwhash alone, the Secret Service read against a bare libsecret lookup, whole-process figures against the peer in their target"
        )
        for skipped in notMeasured {
            lines.append("[\(skipped.section)] \(skipped.name): not measured: \(skipped.reason)")
        }
        return lines.joined(separator: "\n")
    }

    /// A duration in the most readable unit.
    static func time(_ seconds: Double) -> String {
        switch seconds {
        case ..<1e-3: String(format: "%.1f us", seconds * 1e6)
        case ..<1: String(format: "%.2f ms", seconds * 1e3)
        default: String(format: "%.2f s", seconds)
        }
    }
}
