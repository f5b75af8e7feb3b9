import Foundation
import PushTestSupport
import Testing

/// The chart's safe defaults (issue 45): no plaintext serve unless asked for, NetworkPolicies,
/// requests and limits, locked-down containers; and serve and the workers under roles of their own.
extension HelmChartTests {
    static var rolesValues: String { exampleValues[2] }

    /// Renders the chart with `yaml` as the only values file.
    static func render(_ yaml: String) async throws -> HelmChartCheck {
        let file = NSTemporaryDirectory() + "pushq-helm-values-\(UUID().uuidString).yaml"
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        return try await HelmChartCheck(chart: chart, values: [file])
    }

    static let urlOnly = "database: {url: postgresql://db/pushq}\n"

    @Test("defaults with only a database URL refuse to render: serve would listen in plain HTTP beyond loopback")
    func defaultsRefusePlaintext() async throws {
        let refused = try await Self.render(Self.urlOnly)
        #expect(refused.renderError?.contains("set serve.tls.secretName") == true, "\(refused.renderError ?? "rendered")")
        #expect(refused.renderError?.contains("serve.tls.terminatedByProxy=true") == true)
        #expect(refused.defaultValues["serve"].flatMap { ($0 as? [String: Any])?["tls"] as? [String: Any] }?["terminatedByProxy"] as? Bool == false)
        for choice in ["serve: {tls: {terminatedByProxy: true}}", "serve: {tls: {secretName: pushq-tls}}", "serve: {enabled: false}"] {
            let chosen = try await Self.render(Self.urlOnly + choice)
            #expect(chosen.renderError == nil && chosen.lintProblems == [] && chosen.invalid == [], "\(choice): \(chosen.renderError ?? "") \(chosen.invalid)")
        }
    }

    @Test("defaults render NetworkPolicies: serve from the ingress namespace, /metrics from monitoring, nothing to the Job")
    func defaultsRenderNetworkPolicies() async throws {
        let check = try await Self.render(Self.urlOnly + "serve: {tls: {terminatedByProxy: true}}")
        #expect(check.renderError == nil && check.invalid == [], "\(check.renderError ?? "") \(check.invalid)")
        let expected = ["serve": ("ingress-nginx", "demo-pushq-serve"), "worker": ("monitoring", "demo-pushq-worker")]
        for (component, (namespace, deploymentName)) in expected {
            let policy = try #require(check.object("NetworkPolicy", "demo-pushq-\(component)"), "no NetworkPolicy for \(component)")
            let spec = try #require(policy["spec"] as? [String: Any])
            #expect(spec["policyTypes"] as? [String] == ["Ingress"], "egress stays open by default")
            // The policy selects exactly the pods of its Deployment.
            let selector = try #require((spec["podSelector"] as? [String: Any])?["matchLabels"] as? [String: String])
            let pods = Self.podLabels(try #require(check.object("Deployment", deploymentName)))
            #expect(!selector.isEmpty && selector.allSatisfy { pods[$0.key] == $0.value })
            let rules = try #require(spec["ingress"] as? [[String: Any]])
            #expect(rules.count == 1)
            let from = rules.first?["from"] as? [[String: Any]] ?? []
            let namespaces = from.compactMap { (($0["namespaceSelector"] as? [String: Any])?["matchLabels"] as? [String: String])?["kubernetes.io/metadata.name"] }
            #expect(namespaces == [namespace] && from.count == 1, "\(component): \(from)")
            #expect((rules.first?["ports"] as? [[String: Any]])?.map { "\($0["port"] ?? "")/\($0["protocol"] ?? "")" } == ["http/TCP"])
        }
        let job = try #require(check.object("NetworkPolicy", "demo-pushq-migrate"))
        #expect(((job["spec"] as? [String: Any])?["ingress"] as? [Any])?.isEmpty == true, "the migration Job admits nothing")
        let off = try await Self.render(Self.urlOnly + "serve: {tls: {terminatedByProxy: true}}\nnetworkPolicy: {enabled: false}")
        #expect(!off.objects.contains { $0.object["kind"] as? String == "NetworkPolicy" })
    }

    @Test("defaults give every container requests and limits and a non-root, read-only, no-capability, seccomp context")
    func defaultsLockDownContainers() async throws {
        let check = try await Self.render(Self.urlOnly + "serve: {tls: {terminatedByProxy: true}}")
        let workloads = check.objects.map(\.object).filter { ["Deployment", "Job"].contains($0["kind"] as? String) }
        #expect(workloads.count == 3)
        for workload in workloads {
            let name = Self.metadata(workload)["name"] as? String ?? ""
            for container in Self.containers(workload) {
                let resources = container["resources"] as? [String: Any] ?? [:]
                for part in ["requests", "limits"] {
                    let values = resources[part] as? [String: Any] ?? [:]
                    #expect(values["cpu"] != nil && values["memory"] != nil, "\(name): no \(part)")
                }
                let security = container["securityContext"] as? [String: Any] ?? [:]
                #expect(security["runAsNonRoot"] as? Bool == true && (security["runAsUser"] as? Int ?? 0) > 0, "\(name)")
                #expect(security["readOnlyRootFilesystem"] as? Bool == true && security["allowPrivilegeEscalation"] as? Bool == false, "\(name)")
                #expect((security["capabilities"] as? [String: Any])?["drop"] as? [String] == ["ALL"], "\(name)")
                #expect((security["seccompProfile"] as? [String: Any])?["type"] as? String == "RuntimeDefault", "\(name)")
            }
        }
    }

    @Test("serve and the workers under their own roles: their URLs, the Job's grants, trusted proxies, limited egress")
    func ownRoles() async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [Self.rolesValues])
        #expect(check.lintProblems == [] && check.renderError == nil && check.invalid == [], "\(check.lintProblems) \(check.renderError ?? "") \(check.invalid)")
        let serve = try #require(check.object("Deployment", "demo-pushq-serve").flatMap { Self.containers($0).first })
        let worker = try #require(check.object("Deployment", "demo-pushq-worker").flatMap { Self.containers($0).first })
        let job = try #require(check.object("Job", "demo-pushq-migrate").flatMap { Self.containers($0).first })
        #expect(Self.secretRef(serve, "PUSHQ_DATABASE_URL") == "demo-pushq-database-roles/serve-url")
        #expect(Self.secretRef(worker, "PUSHQ_DATABASE_URL") == "pushq-worker-db/url")
        #expect(Self.secretRef(job, "PUSHQ_DATABASE_URL") == "demo-pushq-database/url", "the migration runs as the owner")
        #expect(job["command"] as? [String] == ["pushq", "migrate", "--grant-serve", "pushq_serve", "--grant-worker", "pushq_worker"])
        let roles = try #require(check.object("Secret", "demo-pushq-database-roles"))
        #expect((roles["stringData"] as? [String: String]) == ["serve-url": "postgresql://pushq_serve:serve-secret@postgres.db.svc:5432/pushq"])
        #expect(Self.plainEnv(serve)["PUSHQ_HTTP_TRUSTED_PROXIES"] == "10.42.0.0/16,fd00::/8")
        for component in ["serve", "worker", "migrate"] {
            let spec = try #require(check.object("NetworkPolicy", "demo-pushq-\(component)")?["spec"] as? [String: Any])
            #expect(spec["policyTypes"] as? [String] == ["Ingress", "Egress"] && (spec["egress"] as? [Any])?.count == 1, "\(component)")
        }
        let serveFrom = ((check.object("NetworkPolicy", "demo-pushq-serve")?["spec"] as? [String: Any])?["ingress"] as? [[String: Any]])?.first?["from"] as? [Any]
        #expect(serveFrom?.count == 2, "the ingress namespace and serveFrom's")
        let text = String(decoding: try JSONSerialization.data(withJSONObject: check.objects.filter { $0.object["kind"] as? String != "Secret" }.map(\.object)), as: UTF8.self)
        #expect(!text.contains("serve-secret"), "serve's password is in a workload")
    }
}
