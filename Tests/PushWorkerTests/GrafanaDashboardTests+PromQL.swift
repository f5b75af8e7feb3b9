import Foundation
import PushTestSupport
import PushWorker

/// Reading series and labels out of the dashboard's expressions, and labels out of the docs.
extension GrafanaDashboardTests {
    /// Every capture of the first group of `pattern` in `text`.
    static func matches(_ pattern: String, in text: String) -> Set<String> {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return Set(regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        })
    }

    /// The series an expression selects: every name followed by a `{…}` matcher.
    static func selectors(in expr: String) -> Set<String> {
        matches("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*\\{", in: expr)
    }

    /// The labels an expression matches on (`{name="…"}`) or aggregates by (`by (…)`, `without (…)`).
    static func labelNames(in expr: String) -> Set<String> {
        var names = Set<String>()
        for matchers in matches("\\{([^}]*)\\}", in: expr) {
            names.formUnion(matches("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)", in: matchers))
        }
        for list in matches("\\b(?:by|without)\\s*\\(([^)]*)\\)", in: expr) {
            names.formUnion(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return names
    }

    /// The catalog's metric a series belongs to (a histogram's `_bucket`, `_sum`, `_count` too), or
    /// `up`, Prometheus' own per target; nil for a series nobody exports.
    static func metric(of series: String) -> String? {
        if series == "up" || WorkerMetrics.catalog[series] != nil { return series }
        for suffix in ["_bucket", "_sum", "_count"] where series.hasSuffix(suffix) {
            let base = String(series.dropLast(suffix.count))
            if let metric = WorkerMetrics.catalog[base], !metric.buckets.isEmpty { return base }
        }
        return nil
    }

    /// Metric → its labels, in the order of docs/monitoring.md's metrics table (the labels column's
    /// backticked names outside parentheses, which hold values, and before a colon: "`kind`: `transport`, …").
    static func documentedLabels() throws -> [String: [String]] {
        let docs = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/monitoring.md"), encoding: .utf8)
        var labels: [String: [String]] = [:]
        for line in docs.split(separator: "\n") where line.hasPrefix("| `pushq_") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3 else { continue }
            var depth = 0
            var outside = ""
            for character in cells[3] {
                if character == "(" { depth += 1 } else if character == ")" { depth -= 1 } else if depth == 0 { outside.append(character) }
            }
            if let colon = outside.range(of: "`:") { outside = String(outside[..<colon.upperBound]) }
            let names = outside.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            labels[cells[1].replacingOccurrences(of: "`", with: "")] = names
        }
        return labels
    }

    /// `text` as a YAML double-quoted scalar (JSON's string syntax is one).
    static func yamlQuoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
