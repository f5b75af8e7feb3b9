import Foundation
import PushTestSupport
import PushWorker
import Testing

/// deploy/grafana/pushq-dashboard.json: a dashboard Grafana can import (its structure), whose expressions
/// are PromQL (promtool parses each, after the one substitution Grafana would make of its
/// variables), name only series the worker exports (`WorkerMetrics.catalog`, or Prometheus' own
/// `up`) with labels docs/monitoring.md's metrics table gives them, and graph every metric that is
/// not deprecated. What no test here checks: how Grafana draws it.
@Suite("Grafana dashboard")
struct GrafanaDashboardTests {
    static func dashboard() throws -> [String: Any] {
        let data = try Data(contentsOf: repositoryRoot.appendingPathComponent("deploy/grafana/pushq-dashboard.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func panels(_ dashboard: [String: Any]) -> [[String: Any]] {
        dashboard["panels"] as? [[String: Any]] ?? []
    }

    /// (panel title, expression, legend) of every query.
    static func queries(_ dashboard: [String: Any]) -> [(panel: String, expr: String, legend: String)] {
        panels(dashboard).flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).map {
                (panel["title"] as? String ?? "", $0["expr"] as? String ?? "", $0["legendFormat"] as? String ?? "")
            }
        }
    }

    /// Grafana's variables as it would substitute them for a query, so promtool can parse it.
    static func substituted(_ expr: String) -> String {
        expr.replacingOccurrences(of: "$__rate_interval", with: "5m").replacingOccurrences(of: "$job", with: ".+")
    }

    /// a dashboard Grafana imports: uid, schema version, a Prometheus data source variable every panel uses,
    /// panel ids unique, a 24-column grid without overlap
    @Test("a dashboard Grafana imports: uid, schema version, a data source variable, unique panel ids, a grid without overlap")
    func structure() throws {
        let dashboard = try Self.dashboard()
        #expect(dashboard["uid"] as? String == "pushq-overview" && dashboard["title"] as? String == "pushq")
        #expect((dashboard["schemaVersion"] as? Int ?? 0) >= 36)
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        #expect(variables.contains { $0["name"] as? String == "datasource" && $0["type"] as? String == "datasource" && $0["query"] as? String == "prometheus" })
        let panels = Self.panels(dashboard)
        #expect(panels.count > 20)
        #expect(Set(panels.compactMap { $0["id"] as? Int }).count == panels.count)
        var boxes: [(title: String, x: Int, y: Int, w: Int, h: Int)] = []
        for panel in panels {
            let title = panel["title"] as? String ?? "?"
            let grid = panel["gridPos"] as? [String: Int] ?? [:]
            let box = (title, grid["x"] ?? -1, grid["y"] ?? -1, grid["w"] ?? 0, grid["h"] ?? 0)
            #expect(box.1 >= 0 && box.2 >= 0 && box.3 > 0 && box.4 > 0 && box.1 + box.3 <= 24, "\(title): \(grid)")
            for other in boxes where box.1 < other.x + other.w && other.x < box.1 + box.3 && box.2 < other.y + other.h && other.y < box.2 + box.4 {
                Issue.record("\(title) overlaps \(other.title)")
            }
            boxes.append(box)
            guard panel["type"] as? String != "row" else { continue }
            #expect((panel["datasource"] as? [String: String])?["uid"] == "${datasource}", "\(title) does not use the data source variable")
            #expect(!(panel["targets"] as? [Any] ?? []).isEmpty, "\(title) has no query")
            #expect(!(panel["description"] as? String ?? "").isEmpty, "\(title) has no description")
        }
    }

    @Test("every expression is PromQL: promtool check rules parses them all")
    func expressionsParse() throws {
        let queries = Self.queries(try Self.dashboard())
        #expect(queries.count > 25)
        let rules = queries.enumerated().map { i, query in
            "      - record: pushq:dashboard_\(i)\n        expr: \(Self.yamlQuoted(Self.substituted(query.expr)))"
        }
        let file = NSTemporaryDirectory() + "pushq-dashboard-rules-\(UUID().uuidString).yml"
        defer { unlink(file) }
        try ("groups:\n  - name: dashboard\n    rules:\n" + rules.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let (ok, output) = try Promtool.run(["check", "rules", file])
        #expect(ok, "\(output)")
        #expect(output.contains("SUCCESS: \(queries.count) rules found"), "\(output)")
    }

    /// the expressions name only series the worker exports, with labels the metrics table gives them, and
    /// graph every metric not deprecated
    @Test("the expressions name only exported series with their labels, and graph every metric not deprecated")
    func seriesExist() throws {
        let dashboard = try Self.dashboard()
        let labels = try Self.documentedLabels()
        #expect(labels.count >= WorkerMetrics.catalog.count - 8, "docs/monitoring.md's metrics table was not read: \(labels.keys.sorted())")
        var graphed = Set<String>()
        for query in Self.queries(dashboard) {
            let metrics = Self.selectors(in: query.expr)
            #expect(!metrics.isEmpty, "\(query.panel): \(query.expr) names no series")
            var allowed: Set<String> = ["job", "instance"]
            for series in metrics {
                guard let metric = Self.metric(of: series) else {
                    Issue.record("\(query.panel): \(series) is not a series of WorkerMetrics.catalog")
                    continue
                }
                graphed.insert(metric)
                allowed.formUnion(labels[metric] ?? [])
                if series.hasSuffix("_bucket") { allowed.insert("le") }
            }
            let used = Self.labelNames(in: query.expr)
            #expect(used.isSubset(of: allowed), "\(query.panel): \(query.expr) uses labels \(used.subtracting(allowed).sorted())")
            let legend = Self.matches("\\{\\{\\s*(\\w+)\\s*\\}\\}", in: query.legend)
            #expect(legend.isSubset(of: used), "\(query.panel): legend \(query.legend) names labels the expression does not keep")
        }
        let deprecated = Set(WorkerMetrics.catalog.values.filter { $0.help.hasPrefix("Deprecated") }.map(\.name))
        #expect(deprecated.count == 8 && graphed.isDisjoint(with: deprecated))
        #expect(Set(WorkerMetrics.catalog.keys).subtracting(deprecated).subtracting(graphed).sorted() == [])
        let job = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]])?.first { $0["name"] as? String == "job" }
        let definition = job?["definition"] as? String ?? ""
        #expect(definition.hasPrefix("label_values(") && Self.metric(of: String(definition.dropFirst(13).prefix { $0 != "," })) != nil)
    }

    @Test("the checks catch an unknown series, an unknown label and a legend the expression does not keep")
    func checksCatchMistakes() throws {
        #expect(Self.metric(of: "pushq_notifications_sent_total") == nil)
        #expect(Self.metric(of: "pushq_request_duration_seconds_bucket") == "pushq_request_duration_seconds")
        #expect(Self.metric(of: "pushq_queue_due_rows_bucket") == nil)
        #expect(Self.metric(of: "up") == "up")
        let expr = #"sum by (provider, state) (rate(pushq_requests_total{job=~"$job",statuss="200"}[$__rate_interval]))"#
        #expect(Self.selectors(in: expr) == ["pushq_requests_total"])
        #expect(Self.labelNames(in: expr) == ["provider", "state", "job", "statuss"])
        let labels = try Self.documentedLabels()
        #expect(labels["pushq_requests_total"] == ["provider", "credential", "environment", "status"])
        #expect(labels["pushq_notifications_finished_total"] == ["outcome", "reason", "credential", "environment"])
        #expect(labels["pushq_claim_batch_rows"] == [])
    }
}
