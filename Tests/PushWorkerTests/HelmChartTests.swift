import Foundation
import PushCore
import PushTestSupport
import Testing

/// deploy/helm/pushq, checked offline by Helm itself and the Kubernetes schemas
/// (``HelmChartCheck``: `helm lint --strict`, `helm template`, every object validated strictly
/// against Kubernetes 1.25 and the newest schemas kubernetes-validate ships), then what the
/// rendered objects must say for pushq to run: the migration before the workers, the commands,
/// ports and probes, the scrape annotations, the Secrets, no secret in plain sight.
/// What no test here can check: that a cluster schedules the pods and the image runs there.
@Suite("Helm chart")
struct HelmChartTests {
    static let chart = "deploy/helm/pushq"
    static let exampleValues = ["\(chart)/ci/token-values.yaml", "\(chart)/ci/tls-values.yaml", "\(chart)/ci/roles-values.yaml"]

    @Test("both example values files lint strictly, render, and every object is valid Kubernetes 1.25 and newest", arguments: exampleValues)
    func lintsRendersValidates(values: String) async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [values])
        #expect(check.lintProblems == [])
        #expect(check.renderError == nil)
        #expect(check.invalid == [])
        #expect(check.objects.count >= 4, "\(check.objects.map(\.template))")
    }

    @Test("the migration runs first: a pre-install/pre-upgrade hook Job after the database Secret it reads")
    func migrationHook() async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [Self.exampleValues[0]])
        let job = try #require(check.object("Job", "demo-pushq-migrate"))
        let secret = try #require(check.object("Secret", "demo-pushq-database"))
        for hooked in [job, secret] {
            let hooks = Set((Self.annotations(hooked)["helm.sh/hook"] ?? "").split(separator: ",").map(String.init))
            #expect(hooks == ["pre-install", "pre-upgrade"])
        }
        #expect(Int(Self.annotations(secret)["helm.sh/hook-weight"] ?? "") ?? 0 < Int(Self.annotations(job)["helm.sh/hook-weight"] ?? "") ?? 0,
                "the Secret must exist before the Job that reads it")
        #expect(((secret["stringData"] as? [String: Any])?["url"] as? String) == "postgresql://pushq:secret@postgres.db.svc:5432/pushq")
        let container = try #require(Self.containers(job).first)
        #expect(container["command"] as? [String] == ["pushq", "migrate"])
        #expect(Self.secretRef(container, "PUSHQ_DATABASE_URL") == "demo-pushq-database/url")
        #expect(Self.podSpec(job)["restartPolicy"] as? String == "Never")
    }

    /// workers: pushq worker, /metrics, /healthz and /readyz on their port, scrape annotations, credentials
    /// read-only from their Secret
    @Test("workers: pushq worker, /metrics, /healthz and /readyz, scrape annotations, credentials read-only from their Secret")
    func workers() async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [Self.exampleValues[0]])
        let deployment = try #require(check.object("Deployment", "demo-pushq-worker"))
        #expect((deployment["spec"] as? [String: Any])?["replicas"] as? Int == 3)
        let container = try #require(Self.containers(deployment).first)
        #expect(container["command"] as? [String] == ["pushq", "worker"])
        #expect(Self.secretRef(container, "PUSHQ_DATABASE_URL") == "demo-pushq-database/url")
        let env = Self.plainEnv(container)
        #expect(env["PUSHQ_HTTP_ADDR"] == "0.0.0.0:9464")
        #expect(Self.ports(container) == ["http": 9464])
        #expect(Self.probe(container, "livenessProbe") == "HTTP http/healthz")
        #expect(Self.probe(container, "readinessProbe") == "HTTP http/readyz")
        let annotations = Self.podAnnotations(deployment)
        #expect(annotations["prometheus.io/scrape"] == "true")
        #expect(annotations["prometheus.io/port"] == "9464")
        #expect(annotations["prometheus.io/path"] == "/metrics")
        // Every file a variable names is a key of the credentials Secret, under its read-only mount.
        let mount = try #require((container["volumeMounts"] as? [[String: Any]])?.first { $0["name"] as? String == "credentials" })
        #expect(mount["readOnly"] as? Bool == true)
        let mountPath = try #require(mount["mountPath"] as? String)
        let volume = (Self.podSpec(deployment)["volumes"] as? [[String: Any]])?.first { $0["name"] as? String == "credentials" }
        #expect((volume?["secret"] as? [String: Any])?["secretName"] as? String == "demo-pushq-credentials")
        let secret = try #require(check.object("Secret", "demo-pushq-credentials"))
        let files = Set(((secret["stringData"] as? [String: Any]) ?? [:]).keys)
        let named = env.filter { $0.key.hasSuffix("_FILE") }.values
        #expect(named.count == 2)
        for path in named {
            #expect(path.hasPrefix(mountPath + "/") && files.contains(String(path.dropFirst(mountPath.count + 1))), "\(path) is not in the credentials Secret")
        }
    }

    /// serve: pushq serve --http-addr 0.0.0.0:8080 told a proxy terminates TLS, ready on /healthz (the
    /// database answers), alive while it accepts connections, behind a Service of its pods only
    @Test("serve behind a TLS proxy: listens on 0.0.0.0:8080, ready on /healthz, alive while it accepts, behind its own Service")
    func serveBehindProxy() async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [Self.exampleValues[0]])
        let deployment = try #require(check.object("Deployment", "demo-pushq-serve"))
        let container = try #require(Self.containers(deployment).first)
        #expect(container["command"] as? [String] == ["pushq", "serve", "--http-addr", "0.0.0.0:8080"])
        #expect(Self.plainEnv(container)[ServeTLS.proxyVariable] == "true")
        #expect(Self.plainEnv(container)["PUSHQ_HTTP_TLS_CERT"] == nil)
        #expect(Self.ports(container) == ["http": 8080])
        #expect(Self.probe(container, "readinessProbe") == "HTTP http/healthz")
        #expect(((container["livenessProbe"] as? [String: Any])?["tcpSocket"] as? [String: Any])?["port"] as? String == "http")
        let service = try #require(check.object("Service", "demo-pushq-serve"))
        let spec = try #require(service["spec"] as? [String: Any])
        let selector = try #require(spec["selector"] as? [String: String])
        let servePods = Self.podLabels(deployment)
        let workerPods = Self.podLabels(try #require(check.object("Deployment", "demo-pushq-worker")))
        #expect(selector.allSatisfy { servePods[$0.key] == $0.value })
        #expect(!selector.allSatisfy { workerPods[$0.key] == $0.value }, "the Service would send requests to workers")
        #expect((spec["ports"] as? [[String: Any]])?.first?["targetPort"] as? String == "http")
    }

    /// TLS values: serve reads its certificate from the Secret, probes in HTTPS; every Secret is the user's;
    /// no scrape annotations
    @Test("TLS values: serve reads its certificate from the Secret, probes in HTTPS; every Secret is the user's; no scrape")
    func serveWithOwnTLS() async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [Self.exampleValues[1]])
        #expect(!check.objects.contains { $0.object["kind"] as? String == "Secret" })
        let serve = try #require(check.object("Deployment", "demo-pushq-serve"))
        let container = try #require(Self.containers(serve).first)
        let env = Self.plainEnv(container)
        #expect(env[ServeTLS.proxyVariable] == nil)
        let mount = (container["volumeMounts"] as? [[String: Any]])?.first { $0["name"] as? String == "tls" }
        let dir = try #require(mount?["mountPath"] as? String)
        #expect(env["PUSHQ_HTTP_TLS_CERT"] == dir + "/tls.crt" && env["PUSHQ_HTTP_TLS_KEY"] == dir + "/tls.key")
        let volume = (Self.podSpec(serve)["volumes"] as? [[String: Any]])?.first { $0["name"] as? String == "tls" }
        #expect((volume?["secret"] as? [String: Any])?["secretName"] as? String == "pushq-serve-tls")
        #expect(Self.probe(container, "readinessProbe") == "HTTPS http/healthz")
        #expect(Self.secretRef(container, "PUSHQ_DATABASE_URL") == "pushq-db/connection-url")
        let worker = try #require(check.object("Deployment", "demo-pushq-worker"))
        let workerContainer = try #require(Self.containers(worker).first)
        #expect((workerContainer["envFrom"] as? [[String: Any]])?.compactMap { ($0["secretRef"] as? [String: Any])?["name"] as? String } == ["pushq-apns-env"])
        #expect(Self.podAnnotations(worker)["prometheus.io/scrape"] == nil)
        #expect((Self.podSpec(worker)["imagePullSecrets"] as? [[String: Any]])?.first?["name"] as? String == "registry-credentials")
    }

    /// every pod runs as a non-root user, read-only, without privilege escalation or a service account token;
    /// no secret in plain sight
    @Test("every pod runs non-root, read-only, without privilege escalation or service account token; no secret in plain sight", arguments: exampleValues)
    func podsAreLockedDown(values: String) async throws {
        let check = try await HelmChartCheck(chart: Self.chart, values: [values])
        let workloads = check.objects.map(\.object).filter { ["Deployment", "Job"].contains($0["kind"] as? String) }
        #expect(workloads.count == 3)
        for workload in workloads {
            let pod = Self.podSpec(workload)
            #expect(pod["automountServiceAccountToken"] as? Bool == false)
            #expect((pod["securityContext"] as? [String: Any])?["runAsNonRoot"] as? Bool == true)
            for container in Self.containers(workload) {
                let security = container["securityContext"] as? [String: Any] ?? [:]
                #expect(security["readOnlyRootFilesystem"] as? Bool == true && security["allowPrivilegeEscalation"] as? Bool == false)
                #expect(Self.plainEnv(container)["PUSHQ_DATABASE_URL"] == nil, "the database URL is in plain sight")
                #expect(Self.plainEnv(container)["PUSHQ_APNS_CERT_PASSWORD"] == nil)
            }
            let text = String(decoding: try JSONSerialization.data(withJSONObject: workload), as: UTF8.self)
            #expect(!text.contains("secret@postgres"), "the database password is in a workload")
            #expect(text.contains("pushq:\(PushqVersion.current)"), "the image's tag is not pushq --version")
        }
    }

    @Test("the chart refuses what would not run, naming the value")
    func refusals() async throws {
        let dir = NSTemporaryDirectory() + "pushq-helm-values-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func render(_ yaml: String) async throws -> HelmChartCheck {
            let file = dir + "/\(UUID().uuidString).yaml"
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            return try await HelmChartCheck(chart: Self.chart, values: [file])
        }
        #expect(try await render("{}").renderError?.contains("database.url (PUSHQ_DATABASE_URL) or database.existingSecret is required") == true)
        let url = "database: {url: postgresql://db/pushq}\n"
        let open = try await render(url + "serve: {tls: {secretName: '', terminatedByProxy: false}}")
        #expect(open.renderError?.contains("set serve.tls.secretName") == true)
        #expect(try await render(url + "worker: {env: {PUSHQ_HTTP_ADDR: '127.0.0.1:1'}}").renderError?.contains("PUSHQ_HTTP_ADDR is set by the chart") == true)
        let misspelt = try await render(url + "worker: {replica: 2, env: {LOG_LEVEL: debug}}")
        #expect(misspelt.lintProblems.contains { $0.contains("additional properties 'replica' not allowed") })
        #expect(misspelt.lintProblems.contains { $0.contains("'LOG_LEVEL' does not match pattern") })
        #expect(try await render(url + "serve: {enabled: false}").object("Deployment", "demo-pushq-serve") == nil)
    }

    @Test("the checks catch a template Kubernetes would refuse and one that is not YAML")
    func brokenChartIsCaught() async throws {
        let copy = NSTemporaryDirectory() + "pushq-helm-chart-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: repositoryRoot.appendingPathComponent(Self.chart).path, toPath: copy)
        let template = copy + "/templates/deployment-worker.yaml"
        let text = try String(contentsOfFile: template, encoding: .utf8)
        try text.replacingOccurrences(of: "  replicas: {{", with: "  replica: {{").write(toFile: template, atomically: true, encoding: .utf8)
        let values = repositoryRoot.appendingPathComponent(Self.exampleValues[0]).path
        let refused = try await HelmChartCheck(chart: copy, values: [values])
        #expect(refused.renderError == nil)
        #expect(refused.invalid.contains { $0.contains("Deployment demo-pushq-worker") && $0.contains("replica") }, "\(refused.invalid)")
        try (text + "\n  : [\n").write(toFile: template, atomically: true, encoding: .utf8)
        let broken = try await HelmChartCheck(chart: copy, values: [values])
        #expect(!broken.lintProblems.isEmpty)
        #expect(broken.renderError?.contains("deployment-worker.yaml does not render to YAML") == true)
    }
}

/// The name of the variable that tells `pushq serve` a proxy terminates TLS, as the chart and
/// docker-compose.yml set it.
enum ServeTLS {
    static let proxyVariable = "PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY"
}
