import Foundation
import Testing

/// deploy/prometheus: the alert rules and the configuration docker-compose.yml mounts, checked
/// by promtool (`check rules`, `test rules` fires each alert on a small series, `check config`).
@Suite("Prometheus rules")
struct PrometheusRulesTests {
    static func path(_ name: String) -> String {
        repositoryRoot.appendingPathComponent("deploy/prometheus/" + name).path
    }

    /// The alerts of docs/monitoring.md's table "Alerts", in its order.
    static func documentedAlerts() throws -> [String] {
        let docs = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/monitoring.md"), encoding: .utf8)
        let section = (docs.components(separatedBy: "\n## Alerts\n").dropFirst().first ?? "").components(separatedBy: "\n\n")
        let table = section.first { $0.hasPrefix("| alert |") } ?? ""
        return table.split(separator: "\n").dropFirst(2).compactMap { line in
            line.split(separator: "`").dropFirst().first.map(String.init)
        }
    }

    @Test("alerts.yml passes promtool check rules and names every alert docs/monitoring.md lists")
    func checkRules() throws {
        let (ok, output) = try Promtool.run(["check", "rules", Self.path("alerts.yml")])
        #expect(ok, "\(output)")
        let documented = try Self.documentedAlerts()
        #expect(documented.count == 7)
        #expect(output.contains("SUCCESS: \(documented.count) rules found"), "\(output)")
        let rules = try String(contentsOfFile: Self.path("alerts.yml"), encoding: .utf8)
        for alert in documented {
            #expect(rules.contains("alert: \(alert)"))
        }
    }

    @Test("promtool test rules fires each alert on its series (alerts.test.yml)")
    func unitTests() throws {
        let (ok, output) = try Promtool.run(["test", "rules", Self.path("alerts.test.yml")])
        #expect(ok, "\(output)")
        let documented = try Self.documentedAlerts()
        let tests = try String(contentsOfFile: Self.path("alerts.test.yml"), encoding: .utf8)
        for alert in documented {
            #expect(tests.contains("alertname: \(alert)"), "no unit test fires \(alert)")
        }
    }

    @Test("prometheus.yml passes promtool check config")
    func checkConfig() throws {
        let (ok, output) = try Promtool.run(["check", "config", Self.path("prometheus.yml")])
        #expect(ok, "\(output)")
    }

    @Test("the checks fail on a broken rule")
    func brokenRuleFails() throws {
        let file = NSTemporaryDirectory() + "pushq-bad-rules-\(UUID().uuidString).yml"
        defer { unlink(file) }
        try "groups:\n  - name: x\n    rules:\n      - alert: Bad\n        expr: sum(rate(x[5m]) > \n".write(toFile: file, atomically: true, encoding: .utf8)
        let (ok, output) = try Promtool.run(["check", "rules", file])
        #expect(!ok, "\(output)")
    }
}
