import ArgumentParser
import Foundation
import PushCore
import PushServe
import PushStore
import PGClient

/// `pushq api-key create|list|revoke`: the keys of `pushq serve`.
struct APIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-key",
        abstract: "Create, list and revoke the API keys of pushq serve.",
        discussion: """
            A key is printed once, when it is created; pushq keeps only its SHA-256 (pushq.api_keys). \
            Scopes: read (the queue and the dashboard), enqueue (read, and enqueue or cancel \
            notifications), devices (register and unregister devices), admin (everything, the \
            dashboard's lane and hold actions included). Creating and revoking are written to \
            pushq.audit_log with your user name.
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key and print it (once).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The key's name: 1 to 64 of A-Z a-z 0-9 _ . - (who the audit log says acted).") var name: String
        @Option(help: "read, enqueue, devices or admin.") var scope: String

        func run() async throws {
            guard let scope = APIScope(rawValue: scope.lowercased()) else {
                throw ValidationError("--scope \(scope): expected read, enqueue, devices or admin")
            }
            let key = APIKeySecret.newKey()
            let record = try await APIKeyCommand.connection(database) { c in
                try await c.transaction { c in
                    let record = try c.createAPIKey(name: name, scope: scope.rawValue, keyHash: APIKeySecret.hash(key))
                    try c.recordAudit(AuditEntry(actor: APIKeyCommand.user, keyID: nil, action: "api_key.create",
                                                 target: "api_key \(record.name)", rows: 1, via: "cli", detailJSON: #"{"scope":"\#(scope.rawValue)"}"#))
                    return record
                }
            }
            print(key)
            FileHandle.standardError.write(Data("created key \(record.name) (scope \(record.scope)): store it now, it is not shown again\n".utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys: name, scope, created, last used, revoked.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let keys = try await APIKeyCommand.connection(database) { try await $0.apiKeys() }
            print(Self.line(["name", "scope", "created", "last used", "revoked"]))
            for k in keys {
                print(Self.line([k.name, k.scope, Self.time(k.createdAt), k.lastUsedAt.map(Self.time) ?? "never", k.revokedAt.map(Self.time) ?? "-"]))
            }
        }

        /// The cells in columns of 22 characters (a longer cell pushes the rest right), no trailing space.
        static func line(_ cells: [String]) -> String {
            let padded = cells.dropLast().map { $0.count >= 22 ? $0 + " " : $0.padding(toLength: 22, withPad: " ", startingAt: 0) }
            return padded.joined() + (cells.last ?? "")
        }

        static func time(_ date: Date) -> String {
            ISO8601DateFormatter().string(from: date)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: its next request is refused, its dashboard sessions end.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The key's name.") var name: String

        func run() async throws {
            let revoked = try await APIKeyCommand.connection(database) { c in
                try await c.transaction { c -> Bool in
                    guard let key = try c.revokeAPIKey(name: name) else { return false }
                    try c.recordAudit(AuditEntry(actor: APIKeyCommand.user, keyID: key.id, action: "api_key.revoke",
                                                 target: "api_key \(key.name)", rows: 1, via: "cli"))
                    return true
                }
            }
            guard revoked else { throw CommandFailure("no key named \(name) (pushq api-key list)") }
            print("revoked \(name)")
        }
    }

    /// Runs `body` on a connection to the database of `options`, closed after; a refusal by a named
    /// constraint becomes its explanation (`name: a key of that name exists…`).
    static func connection<T: Sendable>(_ options: DatabaseOptions, _ body: (PGConnection) async throws -> T) async throws -> T {
        let settings = options.settings()
        let logger = try settings.logger(label: "pushq.api-key")
        let c = try await PGConnection.connect(try settings.databaseURL(), logger: logger)
        do {
            return try await c.closing(body)
        } catch let error as PGError {
            guard let name = error.constraint, let explained = ConstraintExplanation.of(name) else { throw error }
            throw CommandFailure("\(explained.field): \(explained.rule) (\(name))")
        }
    }

    /// Who the audit log says acted: the operating-system user.
    static var user: String {
        if let pw = getpwuid(geteuid()), let name = pw.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "unknown"
    }
}
