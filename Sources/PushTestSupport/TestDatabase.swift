import ChildProcess
import Foundation
import Logging
import PushStore
import PGClient

/// Test support shared by the test targets (a library so that they need not copy it).
///
/// A fresh database on the test cluster, dropped at the end of `body`.
///
/// The cluster comes from `PUSHQ_DATABASE_URL`, which `make test` sets to the local
/// throwaway cluster (`scripts/pg-local`). Each test gets its own database so that
/// tests run in parallel without seeing each other's rows.
public enum TestDatabase {
    public static let logger: Logger = {
        var logger = Logger(label: "pushq.test")
        logger.logLevel = .warning
        return logger
    }()

    public static var serverURL: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["PUSHQ_DATABASE_URL"], !url.isEmpty else {
                throw TestSetupError("PUSHQ_DATABASE_URL is not set: run `make test`, or set it to a PostgreSQL server you can create databases on")
            }
            return url
        }
    }

    public static func with<T>(migrated: Bool = true, _ body: (_ url: String) async throws -> T) async throws -> T {
        let name = "pushq_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let admin = try await PGConnection.connect(try serverURL, logger: logger)
        try await admin.execute("CREATE DATABASE \(name)")
        let url = PGURL.withDatabase(try serverURL, name)
        do {
            if migrated {
                let c = try await PGConnection.connect(url, logger: logger)
                _ = try await c.migrate(logger: logger)
                await c.close()
            }
            let value = try await body(url)
            try await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
            await admin.close()
            return value
        } catch {
            try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
            await admin.close()
            throw error
        }
    }

    /// Connects to a fresh migrated database for the duration of `body`.
    public static func withConnection<T>(_ body: (PGConnection) async throws -> T) async throws -> T {
        try await with { url in
            let c = try await PGConnection.connect(url, logger: logger)
            do {
                let value = try await body(c)
                await c.close()
                return value
            } catch {
                await c.close()
                throw error
            }
        }
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The repository root, found from this file's path.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Runs `scripts/pg-local` on a cluster of its own in `dir` (not the shared test cluster),
/// returning what it printed: for tests that stop and restart PostgreSQL.
@discardableResult
public func pgLocal(_ command: String, dir: String) throws -> String {
    var environment = ProcessInfo.processInfo.environment
    environment["PUSHQ_PG_DIR"] = dir
    environment.removeValue(forKey: "PUSHQ_PG_PORT")
    let result = try ChildProcess.runBlocking(repositoryRoot.appendingPathComponent("scripts/pg-local").path, [command], environment: environment)
    guard result.termination == .exit(0) else {
        throw TestSetupError("scripts/pg-local \(command) failed (\(result.termination)): \(result.stderr)")
    }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}
