import Foundation
import Testing
import Yams

/// Checks docker-compose.yml against what pushq needs: PostgreSQL, then `pushq migrate`, then
/// `pushq worker` with the contract's variables and `pushq serve` reachable only as its TLS rule
/// allows, and Prometheus scraping the workers. No container engine runs in CI, so the files are
/// read as YAML (Yams) and checked.
@Suite("docker-compose.yml")
struct DockerComposeTests {
    /// The APNs variables of the contract (§3) the worker must receive from the host.
    static let apnsVariables = [
        "PUSHQ_APNS_TEAM_ID", "PUSHQ_APNS_KEY_ID", "PUSHQ_APNS_KEY_FILE",
        "PUSHQ_APNS_CERT_FILE", "PUSHQ_APNS_CERT_PASSWORD",
        "PUSHQ_APNS_TOPIC", "PUSHQ_APNS_ENVIRONMENT", "PUSHQ_APNS_URL", "PUSHQ_CA_FILE",
    ]

    static func load(_ name: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(name), encoding: .utf8)
    }

    /// Everything wrong with a compose file, one sentence each; empty when it is right.
    /// `prometheusConfig` reads a file the Prometheus service mounts (path relative to the
    /// repository, e.g. `deploy/prometheus/prometheus.yml`); nil when there is none.
    static func problems(in compose: ComposeFile, prometheusConfig: (String) -> String? = { _ in nil }) -> [String] {
        var problems: [String] = []
        for name in ["postgres", "migrate", "worker", "serve", "prometheus"] where compose.services[name] == nil {
            problems.append("no service \(name)")
        }
        if let postgres = compose.services["postgres"] {
            if !(postgres.scalar("image") ?? "").hasPrefix("postgres:") { problems.append("postgres does not run a postgres image") }
            if postgres.entries["healthcheck"] == nil { problems.append("postgres has no healthcheck") }
        }
        if let migrate = compose.services["migrate"] {
            if migrate.command != ["pushq", "migrate"] { problems.append("migrate runs \(migrate.command), not pushq migrate") }
            if migrate.dependsOn["postgres"] == nil {
                problems.append("migrate does not depend on postgres")
            } else if migrate.dependsOn["postgres"] != "service_healthy" {
                problems.append("migrate does not wait for postgres to be healthy")
            }
            if !migrate.environmentNames.contains("PUSHQ_DATABASE_URL") { problems.append("migrate lacks PUSHQ_DATABASE_URL") }
        }
        if let worker = compose.services["worker"] {
            if worker.command != ["pushq", "worker"] { problems.append("worker runs \(worker.command), not pushq worker") }
            if worker.dependsOn["migrate"] == nil {
                problems.append("worker does not depend on migrate")
            } else if worker.dependsOn["migrate"] != "service_completed_successfully" {
                problems.append("worker does not wait for migrate to complete successfully")
            }
            for name in ["PUSHQ_DATABASE_URL"] + apnsVariables where !worker.environmentNames.contains(name) {
                problems.append("worker lacks \(name)")
            }
            let keyMount = worker.list("volumes").first { $0.contains("PUSHQ_APNS_KEY_FILE") }
            if keyMount?.hasSuffix(":ro") != true { problems.append("worker does not mount the key file read-only") }
        }
        if let serve = compose.services["serve"] {
            problems += serveProblems(serve)
        }
        if let prometheus = compose.services["prometheus"] {
            problems += prometheusProblems(prometheus, worker: compose.services["worker"], config: prometheusConfig)
        }
        // Every published port, of every service, on this host's loopback only ("127.0.0.1:published:container").
        for (name, service) in compose.services.sorted(by: { $0.key < $1.key }) {
            for ports in service.list("ports") where !ports.hasPrefix("127.0.0.1:") || ports.split(separator: ":").count != 3 {
                problems.append("\(name) publishes \(ports) beyond this host's loopback")
            }
        }
        // serve and the worker may run under roles of their own, but out of the box connect as migrate does.
        let ownerURL = compose.services["migrate"]?.environment["PUSHQ_DATABASE_URL"] ?? nil
        for name in ["serve", "worker"] {
            guard let ownerURL, let url = compose.services[name]?.environment["PUSHQ_DATABASE_URL"] ?? nil else { continue }
            if unsetDefault(url) != ownerURL { problems.append("\(name)'s PUSHQ_DATABASE_URL is not migrate's when its own is unset") }
        }
        return problems
    }

    /// What a compose value becomes when the variable it names is unset: `${X:-default}` → `default`
    /// (the default may itself hold `${…}`); any other value stays.
    static func unsetDefault(_ value: String) -> String {
        guard value.hasPrefix("${"), value.hasSuffix("}"), let separator = value.range(of: ":-") else { return value }
        let name = value[value.index(value.startIndex, offsetBy: 2)..<separator.lowerBound]
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return value }
        return String(value[separator.upperBound..<value.index(before: value.endIndex)])
    }

    /// The variable that tells `pushq serve` a proxy in front terminates TLS.
    static let proxyVariable = "PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY"

    /// `pushq serve`: after the migration, on the port it publishes, with TLS of its own or, when
    /// told a proxy terminates it, published on this host's loopback only.
    static func serveProblems(_ serve: ComposeFile.Service) -> [String] {
        var problems: [String] = []
        let command = serve.command
        if Array(command.prefix(2)) != ["pushq", "serve"] { problems.append("serve runs \(command), not pushq serve") }
        if serve.dependsOn["migrate"] != "service_completed_successfully" {
            problems.append("serve does not wait for migrate to complete successfully")
        }
        if !serve.environmentNames.contains("PUSHQ_DATABASE_URL") { problems.append("serve lacks PUSHQ_DATABASE_URL") }
        let address = command.firstIndex(of: "--http-addr").flatMap { command.indices.contains($0 + 1) ? command[$0 + 1] : nil }
            ?? (serve.environment["PUSHQ_HTTP_ADDR"] ?? nil)
        guard let address, let port = address.split(separator: ":").last.map(String.init) else {
            problems.append("serve has no --http-addr")
            return problems
        }
        // "[host:]published:container", each published port of the container's listener.
        let published = serve.list("ports").map { $0.split(separator: ":").map(String.init) }.filter { $0.last == port }
        if published.isEmpty { problems.append("serve does not publish its port \(port)") }
        let ownTLS = serve.environmentNames.isSuperset(of: ["PUSHQ_HTTP_TLS_CERT", "PUSHQ_HTTP_TLS_KEY"])
        if !ownTLS {
            if serve.environment[proxyVariable] != "true" {
                problems.append("serve has neither PUSHQ_HTTP_TLS_CERT and PUSHQ_HTTP_TLS_KEY nor \(proxyVariable)=true: it refuses to start on \(address)")
            }
            for ports in published where ports.count != 3 || ports[0] != "127.0.0.1" {
                problems.append("serve publishes \(ports.joined(separator: ":")) without TLS: beyond this host's loopback")
            }
        }
        return problems
    }

    /// The Prometheus service: its image, its configuration mounted where `--config.file`
    /// points, and a scrape job whose targets are the workers on the port of their PUSHQ_HTTP_ADDR.
    static func prometheusProblems(_ prometheus: ComposeFile.Service, worker: ComposeFile.Service?,
                                   config: (String) -> String?) -> [String] {
        var problems: [String] = []
        if !(prometheus.scalar("image") ?? "").hasPrefix("prom/prometheus") { problems.append("prometheus does not run a prom/prometheus image") }
        let configPath = prometheus.command.first { $0.hasPrefix("--config.file=") }.map { String($0.dropFirst("--config.file=".count)) }
            ?? "/etc/prometheus/prometheus.yml"
        // A bind mount "./host/dir:/container/dir[:ro]" holding the configuration file.
        let source = prometheus.list("volumes").lazy.compactMap { volume -> String? in
            let parts = volume.split(separator: ":").map(String.init)
            guard parts.count >= 2, parts[0].hasPrefix("./") else { return nil }
            let target = parts[1]
            if configPath == target { return String(parts[0].dropFirst(2)) }
            if configPath.hasPrefix(target + "/") { return String(parts[0].dropFirst(2)) + configPath.dropFirst(target.count) }
            return nil
        }.first
        guard let source else {
            problems.append("prometheus does not mount its configuration \(configPath) from the repository")
            return problems
        }
        guard let text = config(source), let scrape = try? PrometheusConfig(text) else {
            problems.append("prometheus configuration \(source) is missing or not YAML")
            return problems
        }
        let address = worker?.environment["PUSHQ_HTTP_ADDR"] ?? nil
        guard let address, let port = address.split(separator: ":").last.flatMap({ Int($0) }) else {
            problems.append("worker does not set PUSHQ_HTTP_ADDR")
            return problems
        }
        if !address.hasPrefix("0.0.0.0:") && !address.hasPrefix("[::]:") {
            problems.append("worker listens on \(address): Prometheus in another container cannot reach it")
        }
        if !scrape.targets.contains(where: { $0.host == "worker" && $0.port == port }) {
            problems.append("no scrape target is worker:\(port) (the port of the worker's PUSHQ_HTTP_ADDR)")
        }
        for rules in scrape.ruleFiles {
            let dir = (source as NSString).deletingLastPathComponent
            if config(rules.hasPrefix("/") ? rules : dir + "/" + rules) == nil && !rules.hasPrefix("/") {
                problems.append("rule file \(rules) is not beside \(source)")
            }
        }
        return problems
    }

    static func repositoryFile(_ path: String) -> String? {
        try? load(path)
    }

    @Test("postgres, migrate and worker, in order, with the contract's variables; Prometheus scrapes the workers")
    func repositoryComposeFile() throws {
        let compose = try ComposeFile(try Self.load("docker-compose.yml"))
        #expect(Self.problems(in: compose, prometheusConfig: Self.repositoryFile) == [])
        #expect(compose.services.keys.sorted() == ["migrate", "postgres", "prometheus", "serve", "worker"])
    }

    @Test("the checks catch a broken file")
    func brokenFileIsCaught() throws {
        let compose = try ComposeFile("""
            services:
              postgres:
                image: redis:7
                ports:
                  - "5432:5432"
                  - "0.0.0.0:5433:5432"
                  - "127.0.0.1:5434:5432"
              migrate:
                command: pushq worker
                depends_on:
                  - postgres
                environment:
                  PUSHQ_DATABASE_URL: postgresql://db/pushq
              worker:
                command: ["pushq", "worker"]
                environment:
                  - PUSHQ_DATABASE_URL=${WORKER_DATABASE_URL:-postgresql://other/pushq}
                  - PUSHQ_APNS_TEAM_ID
                  - PUSHQ_HTTP_ADDR=127.0.0.1:9464
                  # - PUSHQ_APNS_KEY_ID
                volumes:
                  - ${PUSHQ_APNS_KEY_FILE}:/key.p8
              serve:
                command: pushq serve --http-addr 0.0.0.0:8080
                depends_on: [migrate]
                ports:
                  - "8080:8080"
                  - "127.0.0.1:8443:8080"
              prometheus:
                image: prom/prometheus:v2.53.0
                volumes:
                  - ./deploy/prometheus:/etc/prometheus:ro
            """)
        let config = """
            scrape_configs:
              - job_name: pushq
                static_configs:
                  - targets: ["worker:9100"]
            """
        let problems = Self.problems(in: compose, prometheusConfig: { $0 == "deploy/prometheus/prometheus.yml" ? config : nil })
        #expect(problems.contains("postgres does not run a postgres image"))
        #expect(problems.contains("postgres has no healthcheck"))
        #expect(problems.contains("migrate runs [\"pushq\", \"worker\"], not pushq migrate"))
        #expect(problems.contains("migrate does not wait for postgres to be healthy"))
        #expect(!problems.contains("migrate lacks PUSHQ_DATABASE_URL"))
        #expect(problems.contains("worker does not depend on migrate"))
        #expect(problems.contains("worker lacks PUSHQ_APNS_KEY_ID"))
        #expect(!problems.contains("worker lacks PUSHQ_APNS_TEAM_ID"))
        #expect(problems.contains("worker does not mount the key file read-only"))
        #expect(problems.contains("worker listens on 127.0.0.1:9464: Prometheus in another container cannot reach it"))
        #expect(problems.contains("no scrape target is worker:9464 (the port of the worker's PUSHQ_HTTP_ADDR)"))
        #expect(problems.contains("serve does not wait for migrate to complete successfully"))
        #expect(problems.contains("serve lacks PUSHQ_DATABASE_URL"))
        #expect(problems.contains("serve has neither PUSHQ_HTTP_TLS_CERT and PUSHQ_HTTP_TLS_KEY nor \(Self.proxyVariable)=true: it refuses to start on 0.0.0.0:8080"))
        #expect(problems.contains("serve publishes 8080:8080 without TLS: beyond this host's loopback"))
        #expect(!problems.contains("serve publishes 127.0.0.1:8443:8080 without TLS: beyond this host's loopback"))
        #expect(!problems.contains { $0.hasPrefix("serve runs") })
        #expect(problems.contains("postgres publishes 5432:5432 beyond this host's loopback"))
        #expect(problems.contains("postgres publishes 0.0.0.0:5433:5432 beyond this host's loopback"))
        #expect(!problems.contains { $0.contains("5434") })
        #expect(problems.contains("serve publishes 8080:8080 beyond this host's loopback"))
        #expect(problems.contains("worker's PUSHQ_DATABASE_URL is not migrate's when its own is unset"))
        #expect(Self.unsetDefault("${A:-x${B:-y}z}") == "x${B:-y}z" && Self.unsetDefault("plain") == "plain")
        let unpublished = try ComposeFile("services:\n  serve:\n    command: [pushq, serve, --http-addr, 0.0.0.0:9000]\n    environment: [PUSHQ_HTTP_TLS_CERT=/c, PUSHQ_HTTP_TLS_KEY=/k]\n")
        let serveWithTLS = Self.serveProblems(try #require(unpublished.services["serve"]))
        #expect(serveWithTLS.contains("serve does not publish its port 9000"))
        #expect(!serveWithTLS.contains { $0.contains("TLS") })
        #expect(try ComposeFile("services:\n  worker:\n    image: x\n").services.keys.sorted() == ["worker"])
        #expect(Self.problems(in: try ComposeFile("version: '3'\n")).contains("no service postgres"))
        let unmounted = try ComposeFile("services:\n  prometheus:\n    image: prom/prometheus\n")
        #expect(Self.problems(in: unmounted).contains("prometheus does not mount its configuration /etc/prometheus/prometheus.yml from the repository"))
    }

    @Test("the reader understands the forms compose allows")
    func readerForms() throws {
        let compose = try ComposeFile("""
            # comment
            services:
              a:
                command: pushq   migrate   # trailing comment
                depends_on: [b, c]
                environment: {X: 1}
              b:
                command:
                  - pushq
                  - "worker"
                depends_on:
                  c:
                    condition: service_started
                environment:
                  Y: "2"
                  Z:
              c:
                image: 'postgres:15'
            volumes:
              data:
            """)
        #expect(compose.services.keys.sorted() == ["a", "b", "c"])
        #expect(compose.services["a"]?.command == ["pushq", "migrate"])
        #expect(compose.services["a"]?.dependsOn == ["b": nil, "c": nil])
        #expect(compose.services["a"]?.environmentNames == ["X"])
        #expect(compose.services["b"]?.command == ["pushq", "worker"])
        #expect(compose.services["b"]?.dependsOn == ["c": "service_started"])
        #expect(compose.services["b"]?.environmentNames == ["Y", "Z"])
        #expect(compose.services["b"]?.environment["Y"] == "2")
        #expect(compose.services["c"]?.scalar("image") == "postgres:15")
        let scrape = try PrometheusConfig("""
            rule_files: [alerts.yml]
            scrape_configs:
              - job_name: a
                static_configs:
                  - targets: ["worker:9464", "other:80"]
              - job_name: b
                dns_sd_configs:
                  - names: [worker]
                    type: A
                    port: 9500
            """)
        #expect(scrape.targets.map { "\($0.host):\($0.port)" } == ["worker:9464", "other:80", "worker:9500"])
        #expect(scrape.ruleFiles == ["alerts.yml"])
    }

    @Test("the image's runtime stage has the C libraries pushq links")
    func dockerfileRuntime() throws {
        let dockerfile = try Self.load("Dockerfile")
        let stages = dockerfile.components(separatedBy: "\nFROM ")
        #expect(stages.count >= 3, "expected a build stage and a runtime stage")
        let runtime = stages.last ?? ""
        for package in ["libpq5", "libcurl4", "ca-certificates"] {
            #expect(runtime.contains(package), "the runtime stage does not install \(package)")
        }
        #expect(dockerfile.contains("libpq-dev") && dockerfile.contains("libcurl4-openssl-dev") && dockerfile.contains("libssl-dev"))
        #expect(runtime.contains("COPY --from=build"))
    }

    /// The manifest's linker flags name files by `\(Context.packageDirectory)/…` (the order of the
    /// worker's functions): a build stage that does not copy one fails at the link.
    @Test("the image's build stage copies every file the manifest's flags name")
    func dockerfileCopiesManifestFiles() throws {
        let manifest = try Self.load("Package.swift")
        let marker = "\\(Context.packageDirectory)/"
        let named = manifest.components(separatedBy: marker).dropFirst().map { rest in
            String(rest.prefix { $0 != "\"" && $0 != " " })
        }
        #expect(named.contains("scripts/function-order.txt"), "the manifest no longer names scripts/function-order.txt: \(named)")
        let copies = try Self.load("Dockerfile").split(separator: "\n").filter { $0.hasPrefix("COPY ") && !$0.contains("--from") }
        for path in named {
            #expect(FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent(path).path), "\(path) is missing")
            let copied = copies.contains { line in
                line.split(separator: " ").dropFirst().dropLast().contains { source in
                    path == source || path.hasPrefix(source.hasSuffix("/") ? String(source) : source + "/")
                }
            }
            #expect(copied, "the Dockerfile's build stage does not COPY \(path)")
        }
    }
}

/// The services of a compose file, parsed by Yams.
struct ComposeFile {
    struct Service {
        /// The service's keys and their parsed values.
        var entries: [String: Any] = [:]

        func scalar(_ key: String) -> String? {
            entries[key].flatMap(ComposeFile.text)
        }

        /// A list value (`[a, b]` or `- item` lines), each item as text.
        func list(_ key: String) -> [String] {
            (entries[key] as? [Any])?.compactMap(ComposeFile.text) ?? []
        }

        /// `command`, as an argument vector (a string is split on spaces, as compose does).
        var command: [String] {
            if entries["command"] is [Any] { return list("command") }
            return (scalar("command") ?? "").split(separator: " ").map(String.init)
        }

        /// `depends_on`: service name → condition (nil in the short form or without one).
        var dependsOn: [String: String?] {
            var out: [String: String?] = [:]
            if let names = entries["depends_on"] as? [Any] {
                for name in names.compactMap(ComposeFile.text) { out[name] = .some(nil) }
            } else if let map = entries["depends_on"] as? [String: Any] {
                for (name, value) in map {
                    out[name] = .some((value as? [String: Any])?["condition"].flatMap(ComposeFile.text))
                }
            }
            return out
        }

        /// `environment`: name → value (nil for a name passed through from the host), list form
        /// (`- NAME[=value]`) or mapping form.
        var environment: [String: String?] {
            var out: [String: String?] = [:]
            if let items = entries["environment"] as? [Any] {
                for item in items.compactMap(ComposeFile.text) {
                    let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
                    out[parts.first ?? ""] = .some(parts.count > 1 ? parts[1] : nil)
                }
            } else if let map = entries["environment"] as? [String: Any] {
                for (name, value) in map { out[name] = .some(ComposeFile.text(value)) }
            }
            return out
        }

        var environmentNames: Set<String> { Set(environment.keys) }
    }

    var services: [String: Service] = [:]

    /// - Throws: when `text` is not YAML.
    init(_ text: String) throws {
        let root = try Yams.load(yaml: text) as? [String: Any]
        for (name, value) in (root?["services"] as? [String: Any]) ?? [:] {
            services[name] = Service(entries: value as? [String: Any] ?? [:])
        }
    }

    /// A scalar as text (numbers and booleans as written); nil for null, a list or a mapping.
    static func text(_ value: Any) -> String? {
        switch value {
        case let s as String: return s
        case let i as Int: return String(i)
        case let d as Double: return String(d)
        case let b as Bool: return String(b)
        default: return nil
        }
    }
}

/// The parts of a Prometheus configuration the compose checks need.
struct PrometheusConfig {
    /// Every scrape target: `static_configs` targets and `dns_sd_configs` names with their port.
    var targets: [(host: String, port: Int)] = []
    var ruleFiles: [String] = []

    /// - Throws: when `text` is not YAML.
    init(_ text: String) throws {
        let root = try Yams.load(yaml: text) as? [String: Any] ?? [:]
        ruleFiles = (root["rule_files"] as? [Any])?.compactMap(ComposeFile.text) ?? []
        for job in (root["scrape_configs"] as? [[String: Any]]) ?? [] {
            for group in (job["static_configs"] as? [[String: Any]]) ?? [] {
                for target in (group["targets"] as? [Any])?.compactMap(ComposeFile.text) ?? [] {
                    let parts = target.split(separator: ":")
                    if parts.count == 2, let port = Int(parts[1]) { targets.append((String(parts[0]), port)) }
                }
            }
            for dns in (job["dns_sd_configs"] as? [[String: Any]]) ?? [] {
                guard let port = dns["port"] as? Int else { continue }
                for name in (dns["names"] as? [Any])?.compactMap(ComposeFile.text) ?? [] { targets.append((name, port)) }
            }
        }
    }
}
