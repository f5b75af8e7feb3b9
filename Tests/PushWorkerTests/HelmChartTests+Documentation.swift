import ChildProcess
import Foundation
import PushTestSupport
import Testing

/// The chart against pushq and its docs: the variables it sets are ones each command reads, and
/// docs/deploy.md's table of values names every value of values.yaml and nothing else.
extension HelmChartTests {
    /// The `PUSHQ_*` variables `pushq COMMAND` reads: those its `--help` names, and those every
    /// command reads without a flag (docs/configuration.md, "Every command", checked against the
    /// settings by `ConfigurationDocTests`).
    static func variablesRead(by command: String) async throws -> Set<String> {
        let (termination, out, err) = try await ChildProcess.run(pushqBinary, [command, "--help"], environment: [:])
        #expect(termination == .exit(0), "pushq \(command) --help: \(err)")
        let docs = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let everyCommand = docs.components(separatedBy: "\n### Every command\n").dropFirst().first?.components(separatedBy: "\n### ").first ?? ""
        #expect(everyCommand.contains("`PUSHQ_LOG_FORMAT`"), "docs/configuration.md has no section Every command")
        return DocumentationTests.variables(in: out).union(DocumentationTests.variables(in: everyCommand))
    }

    @Test("every PUSHQ_* variable a container of the chart gets is one its command reads (its --help, or every command's)", arguments: exampleValues)
    func variablesAreRead(values: String) async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [values])
        var checked = 0
        for workload in check.objects.map(\.object) where ["Deployment", "Job"].contains(workload["kind"] as? String) {
            for container in Self.containers(workload) {
                let command = try #require((container["command"] as? [String])?.dropFirst().first)
                let read = try await Self.variablesRead(by: command)
                let names = (container["env"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                for name in names {
                    #expect(read.contains(name), "pushq \(command) does not read \(name)")
                    checked += 1
                }
            }
        }
        #expect(checked >= 6)
    }

    /// `key` → default of docs/deploy.md's table of the chart's values.
    static func documentedValues() throws -> [String: String] {
        let docs = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/deploy.md"), encoding: .utf8)
        let section = docs.components(separatedBy: "\n## Kubernetes\n").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        var rows: [String: String] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            rows[cells[0].replacingOccurrences(of: "`", with: "")] = cells[1].replacingOccurrences(of: "`", with: "")
        }
        return rows
    }

    /// Every leaf of `values` by dotted path (an empty map or list is a leaf), with its value as JSON.
    static func leaves(_ values: [String: Any], prefix: String = "") -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in values {
            let path = prefix + key
            if let map = value as? [String: Any], !map.isEmpty {
                out.merge(leaves(map, prefix: path + "."), uniquingKeysWith: { a, _ in a })
            } else {
                let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
                out[path] = data.map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
            }
        }
        return out
    }

    @Test("docs/deploy.md (Kubernetes) documents every value of values.yaml with its default, and no other")
    func valuesAreDocumented() async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [Self.exampleValues[0]])
        let leaves = Self.leaves(check.defaultValues)
        #expect(leaves.count > 30)
        let documented = try Self.documentedValues()
        #expect(documented.count > 25)
        for (row, _) in documented {
            #expect(leaves.keys.contains { $0 == row || $0.hasPrefix(row + ".") }, "docs/deploy.md documents \(row), which values.yaml does not have")
            #expect(!documented.keys.contains { $0.hasPrefix(row + ".") }, "\(row) is documented as a whole and in parts")
        }
        for (path, value) in leaves {
            let row = documented.keys.first { path == $0 || path.hasPrefix($0 + ".") }
            #expect(row != nil, "values.yaml's \(path) is not in docs/deploy.md (Kubernetes)")
            if let row, row == path {
                let shown = documented[row] ?? ""
                #expect(shown == value || "\"\(shown)\"" == value || (shown == "none" && value == "\"\""),
                        "docs/deploy.md gives \(row) the default \(shown), values.yaml \(value)")
            }
        }
    }
}
