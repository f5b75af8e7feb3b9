import ChildProcess
import Foundation
import PushStore
import PushTestSupport
import PushWorker
import Testing

/// README.md, CONTRIBUTING.md and docs/*.md name only things that exist: every `PUSHQ_*`
/// variable is one `pushq` reads (its `--help`) or a script of this repository reads, every
/// `pushq_*` metric is in the worker's catalog, and every `pushq.*` object is in the migrated
/// schema (or is a log label `pushq` uses). A rename that leaves the docs behind fails here.
@Suite("Documentation is exact")
struct DocumentationTests {
    /// The documents checked, by path from the repository root, with their text.
    static let documents: [(path: String, text: String)] = {
        let root = repositoryRoot
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        let paths = ["README.md", "CONTRIBUTING.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return paths.map { path in
            (path, (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? "")
        }
    }()

    /// Every match of `pattern` (its first capture group when it has one) in the documents,
    /// with the documents naming it.
    static func names(_ pattern: String) throws -> [String: Set<String>] {
        let regex = try NSRegularExpression(pattern: pattern)
        var found: [String: Set<String>] = [:]
        for (path, text) in documents {
            let range = NSRange(text.startIndex..., in: text)
            for match in regex.matches(in: text, range: range) {
                let r = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
                if let swiftRange = Range(r, in: text) { found[String(text[swiftRange]), default: []].insert(path) }
            }
        }
        return found
    }

    /// Whether documented `name` is in `known`; a name ending in `*` (`PUSHQ_RETAIN_*`) must be
    /// the prefix of at least one.
    static func isKnown(_ name: String, in known: Set<String>) -> Bool {
        name.hasSuffix("*") ? known.contains { $0.hasPrefix(name.dropLast()) } : known.contains(name)
    }

    /// Every `PUSHQ_*` name in `text`.
    static func variables(in text: String) -> Set<String> {
        guard let regex = try? NSRegularExpression(pattern: "PUSHQ_[A-Z0-9_]*[A-Z0-9]") else { return [] }
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
        return Set(matches.compactMap { Range($0.range, in: text).map { String(text[$0]) } })
    }

    @Test("the documents exist and name variables, metrics and SQL objects (the checks below have something to check)")
    func documentsAreRead() throws {
        for (path, text) in Self.documents { #expect(!text.isEmpty, "\(path) is empty or unreadable") }
        #expect(Self.documents.contains { $0.path == "docs/monitoring.md" })
        #expect(try Self.names("PUSHQ_[A-Z0-9_]+").count > 20)
        #expect(try Self.names("pushq_[a-z0-9_]+").count > 10)
        #expect(try Self.names("(?<![\\w.])pushq\\.([a-z_][a-z0-9_]*)").count > 5)
    }

    @Test("every PUSHQ_* variable the docs name is read by pushq (--help of its commands) or by a script of the repository")
    func variablesExist() async throws {
        var known = Set<String>()
        for command in ["migrate", "worker", "send", "status", "prune", "serve"] {
            let (termination, out, err) = try await ChildProcess.run(pushqBinary, [command, "--help"], environment: [:])
            #expect(termination == .exit(0), "pushq \(command) --help: \(err)")
            known.formUnion(Self.variables(in: out))
        }
        #expect(known.contains("PUSHQ_DATABASE_URL") && known.contains("PUSHQ_APNS_STREAMS"), "--help names no variable: \(known)")
        // Variables of the scripts and the compose file (the demo's tokens, the container's user, the bench's binaries).
        let root = repositoryRoot
        let scripts = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("scripts").path).map { "scripts/" + $0 }
        for file in scripts + ["docker-compose.yml", "Dockerfile", "Makefile"] {
            let text = (try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)) ?? ""
            known.formUnion(Self.variables(in: text))
        }
        #expect(!Self.isKnown("PUSHQ_NO_SUCH_VARIABLE", in: known) && !Self.isKnown("PUSHQ_NO_SUCH_*", in: known))
        for (name, paths) in try Self.names("PUSHQ_[A-Z0-9_]*[A-Z0-9](?:_\\*)?") {
            #expect(Self.isKnown(name, in: known), "\(name), named in \(paths.sorted()), is read by neither pushq nor a script")
        }
    }

    /// `pushq_` names in the docs that are not metrics, each with the file that makes it true.
    static let notMetrics = ["pushq_demo": "scripts/run-demo", "pushq_enqueued": "Sources/PushStore/Migrations/SQL/001_schema.sql",
                                     "pushq_lanes": "Sources/PushStore/Migrations/SQL/100_release_0_4_0.sql"]

    @Test("every pushq_* metric the docs name is in the worker's catalog (histograms with _bucket, _sum, _count)")
    func metricsExist() throws {
        var known = Set<String>()
        for (name, metric) in WorkerMetrics.catalog {
            known.insert(name)
            if !metric.buckets.isEmpty { known.formUnion(["_bucket", "_sum", "_count"].map { name + $0 }) }
        }
        #expect(!Self.isKnown("pushq_no_such_total", in: known) && Self.isKnown("pushq_queue_*", in: known))
        for (name, file) in Self.notMetrics {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
            #expect(text.contains(name), "\(name) is no longer in \(file): drop it from notMetrics")
        }
        for (name, paths) in try Self.names("(?<![\\w.])pushq_[a-z0-9_]*[a-z0-9](?:_\\*)?") where Self.notMetrics[name] == nil {
            #expect(Self.isKnown(name, in: known), "\(name), named in \(paths.sorted()), is not a metric the worker exports")
        }
    }

    @Test("every pushq.* object and every constraint or index the docs name exists in the migrated schema")
    func sqlObjectsExist() async throws {
        try await TestDatabase.withConnection { db in
            let r = try await db.query("""
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'pushq'
                UNION SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'pushq'
                UNION SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'pushq'
                """)
            var objects = Set((0..<r.count).compactMap { r.string($0, 0) })
            let c = try await db.query("""
                SELECT conname FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = 'pushq'
                """)
            var constraints = Set((0..<c.count).compactMap { c.string($0, 0) })
            // Triggers, and the constraint names pushq's functions raise checks under
            // (`RAISE … USING CONSTRAINT = 'name'`, e.g. notifications_channel_known; or
            // `CONSTRAINT = TG_TABLE_NAME || '_suffix'`: the name for each table whose trigger calls it,
            // e.g. lanes_time_zone_known).
            let t = try await db.query("""
                SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = 'pushq' AND NOT t.tgisinternal
                UNION SELECT m[1] FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,
                      regexp_matches(p.prosrc, 'CONSTRAINT = ''([a-z0-9_]+)''', 'g') m
                 WHERE n.nspname = 'pushq'
                UNION SELECT c.relname || m[1] FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid,
                      regexp_matches(p.prosrc, 'CONSTRAINT = TG_TABLE_NAME \\|\\| ''([a-z0-9_]+)''', 'g') m
                 WHERE c.relnamespace = 'pushq'::regnamespace AND NOT t.tgisinternal
                UNION \(TableRules.functionRulesSQL)
                """)
            constraints.formUnion((0..<t.count).compactMap { t.string($0, 0) })
            #expect(objects.contains("notifications") && constraints.contains("devices_pkey"))
            #expect(constraints.contains("notifications_channel_known") && constraints.contains("lanes_time_zone_known"))

            // The claim designs measured beside the schema (bench/claim-designs, docs/performance.md)
            // create objects of their own in the bench's databases.
            let designs = try Self.designObjects()
            #expect(designs.contains("due") && designs.contains("leases"))
            objects.formUnion(designs)
            constraints.formUnion(designs)

            // `pushq.worker` and the like are log labels (docs/monitoring.md, Logs), not SQL objects.
            let labels = try Self.logLabels()
            #expect(labels.contains("worker"))
            for (name, paths) in try Self.names("(?<![\\w.])pushq\\.([a-z_][a-z0-9_]*)") {
                #expect(objects.contains(name) || labels.contains(name),
                        "pushq.\(name), named in \(paths.sorted()), is neither in the schema nor a log label")
            }
            // An index a later migration dropped is history, not a mistake: the release's, and those the
            // unreleased development chain between 0.3.0 and 0.4.0 dropped (its files are test fixtures now;
            // docs/notes/ tell of them).
            let devChain = repositoryRoot.appendingPathComponent("Tests/PushStoreTests/Fixtures/dev-chain")
            let devSQL = try FileManager.default.contentsOfDirectory(atPath: devChain.path).filter { $0.hasSuffix(".sql") }
                .map { try String(contentsOf: devChain.appendingPathComponent($0), encoding: .utf8) }
            let dropped = Set((Migration.all.map(\.sql) + devSQL).flatMap { sql in
                sql.matches(of: #/DROP INDEX (?:CONCURRENTLY )?(?:IF EXISTS )?pushq\.([a-z0-9_]+)/#).map { String($0.1) }
            })
            #expect(dropped == ["notifications_device_token", "notifications_device_token_settled", "notifications_lease", "notifications_due",
                                "notifications_lane_due", "notifications_expiry", "notifications_finished", "notifications_channel_waiting",
                                "notifications_token_hash"])
            for (name, paths) in try Self.names("`((?:notifications|devices|credential_pauses)_[a-z0-9_]+)`") {
                #expect(objects.contains(name) || constraints.contains(name) || dropped.contains(name),
                        "\(name), named in \(paths.sorted()), is neither a constraint, an index nor a trigger of the schema")
            }
        }
    }

    /// The tables, indexes, functions and triggers the SQL files of bench/claim-designs create.
    static func designObjects() throws -> Set<String> {
        try captures("CREATE (?:TABLE|INDEX|FUNCTION|TRIGGER|PROCEDURE) (?:pushq\\.)?([a-z_][a-z0-9_]*)", in: "bench/claim-designs", ending: ".sql")
    }

    /// The `pushq.<label>` loggers the `pushq` executable creates, from its sources.
    static func logLabels() throws -> Set<String> {
        try captures("label: \"pushq\\.([a-z_]+)\"", in: "Sources/pushq", ending: ".swift")
    }

    /// The first capture group of every match of `pattern` in the files of `folder` (from the
    /// repository root, not its subfolders) whose names end in `suffix`.
    static func captures(_ pattern: String, in folder: String, ending suffix: String) throws -> Set<String> {
        let directory = repositoryRoot.appendingPathComponent(folder)
        let regex = try NSRegularExpression(pattern: pattern)
        var found = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(suffix) {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { found.insert(String(text[range])) }
            }
        }
        return found
    }
}
