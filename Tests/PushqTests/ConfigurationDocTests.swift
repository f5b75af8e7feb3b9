import ArgumentParser
import Foundation
@testable import pushq
import Testing

/// `docs/configuration.md` and `docs/flags.md` against `--help` and the settings catalog: every flag of every
/// command, every variable pushq reads, each with its default and what it accepts.
@Suite("docs/configuration.md")
struct ConfigurationDocTests {
    static let commands: [(name: String, type: any ParsableCommand.Type)] = [
        ("migrate", Migrate.self), ("worker", Worker.self), ("send", Send.self), ("status", Status.self), ("prune", Prune.self),
        ("serve", Serve.self), ("api-key create", APIKeyCommand.Create.self), ("api-key list", APIKeyCommand.List.self),
        ("api-key revoke", APIKeyCommand.Revoke.self), ("webpush-key", WebPushKey.self),
    ]

    /// The settings whose flags `command` reads (its other flags, like `pushq send --topic`, are its own).
    static func settingFlags(_ command: String) throws -> [SettingKey] {
        let database = Array(try DatabaseOptions.parse([]).flags.keys)
        switch command {
        case "worker": return database + Array(try Worker.parse([]).flags.keys)
        case "serve": return database + Array(try Serve.parse([]).flags.keys)
        case "webpush-key": return []
        default: return database
        }
    }

    /// The repository's `docs/<page>`: `configuration.md` (the variables) or `flags.md` (each command's flags).
    static func document(_ page: String = "configuration.md") throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs").appendingPathComponent(page), encoding: .utf8)
    }

    /// The cells of the table rows in `text` whose first cell starts with `prefix`, backticks removed.
    static func rows(_ text: some StringProtocol, firstCellPrefix prefix: String) -> [[String]] {
        text.split(separator: "\n").filter { $0.hasPrefix("| `" + prefix) }.map { line in
            line.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
        }
    }

    /// The lines of `text` under the heading `heading`, up to the next heading of its level or above.
    static func section(_ text: String, _ heading: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return nil }
        let level = heading.prefix { $0 == "#" }.count
        let body = lines[(start + 1)...].prefix { line in
            let hashes = line.prefix { $0 == "#" }.count
            return hashes == 0 || hashes > level || !line.dropFirst(hashes).hasPrefix(" ")
        }
        return body.joined(separator: "\n")
    }

    /// `pushq <command> --help`, unwrapped.
    static func help(_ command: any ParsableCommand.Type) -> String {
        PushqCommand.helpMessage(for: command, columns: 10_000)
    }

    /// The flags a help text lists in its options (not `--help` and `--version`).
    static func flags(inHelp help: String) -> Set<String> {
        let lines = help.split(separator: "\n")
        let options = lines.drop { $0 != "OPTIONS:" }
        return Set(options.compactMap { line -> String? in
            guard let match = line.firstMatch(of: /^  (?:-[A-Za-z], )?(--[a-z0-9-]+)/) else { return nil }
            return String(match.1)
        }).subtracting(["--help", "--version"])
    }

    /// every variable the settings reader knows has a row, with its flag, default and what it accepts, and no
    /// other variable is named
    @Test("every variable the settings reader knows has a row with its flag, default and accepted values; no other is named")
    func variables() throws {
        let doc = try Self.document()
        let variables = try #require(Self.section(doc, "## Variables"))
        let rows = Self.rows(variables, firstCellPrefix: "PUSHQ_")
        let byVariable = Dictionary(rows.map { ($0[0], $0) }, uniquingKeysWith: { first, _ in first })
        #expect(rows.count == byVariable.count, "each variable documented once")
        #expect(Set(byVariable.keys) == Set(SettingKey.all.map(\.variable)))
        for key in SettingKey.all {
            guard let row = byVariable[key.variable] else { continue }
            #expect(row.count == 5, "\(key.variable): variable | flag | default | accepts | what it does")
            guard row.count == 5 else { continue }
            #expect(row[1] == (key.flag ?? "—"), "\(key.variable)'s flag")
            #expect(row[2] == key.defaultValue, "\(key.variable)'s default")
            #expect(row[3] == key.accepts, "\(key.variable) accepts")
            #expect(!row[4].isEmpty)
            for alias in key.aliases { #expect(row[4].contains(alias), "\(key.variable)'s old name \(alias) documented in its row") }
        }
        let named = Set(doc.matches(of: /PUSHQ_[A-Z0-9_]+/).map { String($0.output) })
        #expect(named.subtracting(SettingKey.all.flatMap { [$0.variable] + $0.aliases }).isEmpty, "unknown variables named")
    }

    @Test("every flag of every command's --help has a row in its section, and every row is a flag of that command", arguments: commands.map(\.name))
    func flags(command: String) throws {
        let type = try #require(Self.commands.first { $0.name == command }?.type)
        let help = Self.help(type)
        let inHelp = Self.flags(inHelp: help)
        #expect(!inHelp.isEmpty)
        let section = try #require(Self.section(try Self.document("flags.md"), "## `pushq \(command)`"), "a section for pushq \(command) in docs/flags.md")
        let rows = Self.rows(section, firstCellPrefix: "--")
        #expect(Set(rows.map { $0[0] }) == inHelp)
        let settings = try Self.settingFlags(command)
        #expect(Set(settings.compactMap(\.flag)).isSubset(of: inHelp))
        for key in settings {
            #expect(help.contains("$" + key.variable), "\(command) --help names \(key.variable)")
            #expect(rows.first { $0[0] == key.flag }?[1] == key.variable, "\(key.flag ?? "") overrides \(key.variable)")
        }
        for row in rows where row[1] != "—" {
            #expect(settings.contains { $0.flag == row[0] && $0.variable == row[1] }, "\(row[0]) does not override \(row[1])")
        }
    }

    @Test("the worker's --help states each flag's default and lists every variable without a flag, with its default")
    func workerHelp() throws {
        let flagged = SettingKey.credentialKeys + SettingKey.sending + SettingKey.tuning.filter { $0.flag != nil }
        #expect(Set(try Worker.parse([]).flags.keys) == Set(flagged))
        let help = Self.help(Worker.self)
        for key in flagged {
            #expect(help.contains("Overrides $\(key.variable). Default: \(key.defaultValue)."), "\(key.variable)")
        }
        for key in SettingKey.all where key.flag == nil {
            #expect(help.contains("\(key.variable) [\(key.defaultValue)]"), "\(key.variable)")
        }
        for key in SettingKey.all {
            for alias in key.aliases { #expect(help.contains("\(alias) (now \(key.variable))"), "\(alias)") }
        }
    }
}
