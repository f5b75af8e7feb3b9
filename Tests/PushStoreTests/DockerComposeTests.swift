import Foundation
import Testing

/// Checks docker-compose.yml against what pushq needs: PostgreSQL, then `pushq migrate`, then
/// `pushq worker` with the contract's variables. No container engine runs in CI, so the file
/// is read as text by ``ComposeFile``, a small line-based reader of the YAML subset compose
/// files use (no YAML library is available).
@Suite("docker-compose.yml")
struct DockerComposeTests {
    /// The APNs variables of the contract (§3) the worker must receive from the host.
    static let apnsVariables = [
        "PUSHQ_APNS_TEAM_ID", "PUSHQ_APNS_KEY_ID", "PUSHQ_APNS_KEY_FILE",
        "PUSHQ_APNS_CERT_FILE", "PUSHQ_APNS_CERT_PASSWORD",
        "PUSHQ_APNS_TOPIC", "PUSHQ_APNS_ENVIRONMENT", "PUSHQ_APNS_URL", "PUSHQ_APNS_CA_FILE",
    ]

    static func load(_ name: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(name), encoding: .utf8)
    }

    /// Everything wrong with a compose file, one sentence each; empty when it is right.
    static func problems(in compose: ComposeFile) -> [String] {
        var problems: [String] = []
        for name in ["postgres", "migrate", "worker"] where compose.services[name] == nil {
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
        return problems
    }

    @Test("postgres, migrate and worker, in order, with the contract's variables")
    func repositoryComposeFile() throws {
        let compose = ComposeFile(try Self.load("docker-compose.yml"))
        #expect(Self.problems(in: compose) == [])
        #expect(compose.services.keys.sorted() == ["migrate", "postgres", "worker"])
    }

    @Test("the checks catch a broken file")
    func brokenFileIsCaught() {
        let compose = ComposeFile("""
            services:
              postgres:
                image: redis:7
              migrate:
                command: pushq worker
                depends_on:
                  - postgres
                environment:
                  PUSHQ_DATABASE_URL: postgresql://db/pushq
              worker:
                command: ["pushq", "worker"]
                environment:
                  - PUSHQ_DATABASE_URL=postgresql://db/pushq
                  - PUSHQ_APNS_TEAM_ID
                  # - PUSHQ_APNS_KEY_ID
                volumes:
                  - ${PUSHQ_APNS_KEY_FILE}:/key.p8
            """)
        let problems = Self.problems(in: compose)
        #expect(problems.contains("postgres does not run a postgres image"))
        #expect(problems.contains("postgres has no healthcheck"))
        #expect(problems.contains("migrate runs [\"pushq\", \"worker\"], not pushq migrate"))
        #expect(problems.contains("migrate does not wait for postgres to be healthy"))
        #expect(!problems.contains("migrate lacks PUSHQ_DATABASE_URL"))
        #expect(problems.contains("worker does not depend on migrate"))
        #expect(problems.contains("worker lacks PUSHQ_APNS_KEY_ID"))
        #expect(!problems.contains("worker lacks PUSHQ_APNS_TEAM_ID"))
        #expect(problems.contains("worker does not mount the key file read-only"))
        #expect(ComposeFile("services:\n  worker:\n    image: x\n").services.keys.sorted() == ["worker"])
        #expect(Self.problems(in: ComposeFile("version: '3'\n")).contains("no service postgres"))
    }

    @Test("the reader understands the forms compose allows")
    func readerForms() {
        let compose = ComposeFile("""
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
        #expect(compose.services["c"]?.scalar("image") == "postgres:15")
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
}

/// The services of a compose file, read line by line.
///
/// Understands block mappings and lists by indentation, inline `[a, b]` lists and `{k: v}`
/// maps, quoted scalars and `#` comments: the subset compose files are written in. Anchors,
/// multi-line strings and the like are not needed here and not handled.
struct ComposeFile {
    struct Service {
        /// Each key of the service: its inline value (after `key:`), and the lines nested under it,
        /// dedented to the key's children.
        var entries: [String: (inline: String, block: [Line])] = [:]

        func scalar(_ key: String) -> String? {
            guard let inline = entries[key]?.inline, !inline.isEmpty else { return nil }
            return ComposeFile.unquote(inline)
        }

        /// A list value: inline `[a, b]`, or `- item` lines.
        func list(_ key: String) -> [String] {
            guard let entry = entries[key] else { return [] }
            if entry.inline.hasPrefix("[") { return ComposeFile.flowItems(entry.inline) }
            return entry.block.filter { $0.indent == entry.block.first?.indent && $0.text.hasPrefix("- ") }
                .map { ComposeFile.unquote(String($0.text.dropFirst(2))) }
        }

        /// The keys of a mapping value: inline `{k: v}`, or `key:` lines at the first level.
        func mappingKeys(_ key: String) -> [(key: String, children: [Line])] {
            guard let entry = entries[key] else { return [] }
            if entry.inline.hasPrefix("{") {
                return ComposeFile.flowItems(entry.inline).map { (ComposeFile.splitKey($0)?.key ?? $0, []) }
            }
            guard let level = entry.block.first?.indent else { return [] }
            var out: [(String, [Line])] = []
            for line in entry.block {
                if line.indent == level, let (k, _) = ComposeFile.splitKey(line.text) {
                    out.append((k, []))
                } else if line.indent > level, !out.isEmpty {
                    out[out.count - 1].1.append(line)
                }
            }
            return out
        }

        /// `command`, as an argument vector (a string is split on spaces, as compose does).
        var command: [String] {
            if let entry = entries["command"], entry.inline.isEmpty || entry.inline.hasPrefix("[") { return list("command") }
            return (scalar("command") ?? "").split(separator: " ").map(String.init)
        }

        /// `depends_on`: service name → condition (nil in the short form or without one).
        var dependsOn: [String: String?] {
            var out: [String: String?] = [:]
            if let entry = entries["depends_on"], entry.inline.hasPrefix("[") || entry.block.first?.text.hasPrefix("- ") == true {
                for name in list("depends_on") { out[name] = .some(nil) }
                return out
            }
            for (name, children) in mappingKeys("depends_on") {
                let condition = children.compactMap { ComposeFile.splitKey($0.text) }.first { $0.key == "condition" }
                out[name] = .some(condition.map { ComposeFile.unquote($0.value) })
            }
            return out
        }

        /// The variable names of `environment`, list form (`- NAME[=value]`) or mapping form.
        var environmentNames: Set<String> {
            guard let entry = entries["environment"] else { return [] }
            if entry.inline.hasPrefix("[") || entry.block.first?.text.hasPrefix("- ") == true {
                return Set(list("environment").map { String($0.split(separator: "=", maxSplits: 1).first ?? "") })
            }
            return Set(mappingKeys("environment").map(\.key))
        }
    }

    struct Line {
        var indent: Int
        var text: String
    }

    var services: [String: Service] = [:]

    init(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).compactMap(Self.line)
        guard let start = lines.firstIndex(where: { $0.indent == 0 && $0.text == "services:" }) else { return }
        let body = lines[(start + 1)...].prefix { $0.indent > 0 }
        guard let serviceIndent = body.first?.indent else { return }
        var current: String?
        var keyIndent: Int?
        var lastKey: String?
        for line in body {
            if line.indent == serviceIndent, let (name, _) = Self.splitKey(line.text) {
                current = name
                keyIndent = nil
                lastKey = nil
                services[name] = Service()
                continue
            }
            guard let name = current, line.indent > serviceIndent else { continue }
            if keyIndent == nil { keyIndent = line.indent }
            if line.indent == keyIndent, let (key, value) = Self.splitKey(line.text) {
                services[name]?.entries[key] = (value, [])
                lastKey = key
            } else if line.indent > keyIndent!, let key = lastKey {
                services[name]?.entries[key]?.block.append(line)
            }
        }
    }

    /// A line without its comment, with its indentation; nil for a blank or comment-only line.
    static func line(_ raw: Substring) -> Line? {
        var text = ""
        var quote: Character?
        var previous: Character = " "
        for c in raw {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "#" && previous.isWhitespace {
                break
            }
            text.append(c)
            previous = c
        }
        let indent = text.prefix { $0 == " " }.count
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : Line(indent: indent, text: trimmed)
    }

    /// `key: value` or `key:` → (key, value); nil when the line is not a mapping entry.
    static func splitKey(_ text: String) -> (key: String, value: String)? {
        guard !text.hasPrefix("- "), let colon = text.range(of: ":"),
              colon.upperBound == text.endIndex || text[colon.upperBound] == " " else { return nil }
        let key = unquote(String(text[..<colon.lowerBound]))
        let value = text[colon.upperBound...].trimmingCharacters(in: .whitespaces)
        return key.isEmpty ? nil : (key, value)
    }

    /// The items of `[a, "b"]` or `{a: 1, b: 2}`, unquoted (commas inside quotes kept).
    static func flowItems(_ text: String) -> [String] {
        let inner = text.dropFirst().dropLast()
        var items: [String] = []
        var item = ""
        var quote: Character?
        for c in inner {
            if let q = quote {
                if c == q { quote = nil }
                item.append(c)
            } else if c == "\"" || c == "'" {
                quote = c
                item.append(c)
            } else if c == "," {
                items.append(item)
                item = ""
            } else {
                item.append(c)
            }
        }
        items.append(item)
        return items.map { unquote($0) }.filter { !$0.isEmpty }
    }

    static func unquote(_ text: String) -> String {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.count >= 2, let first = t.first, first == t.last, first == "\"" || first == "'" {
            return String(t.dropFirst().dropLast())
        }
        return t
    }
}
