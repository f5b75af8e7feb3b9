import Foundation
import PushStore

/// The schema history between 0.3.0 and 0.4.0 as it was developed: migrations 12 to 60, one
/// step at a time, which no release shipped. 0.4.0 replaced them with its release files (100 to
/// 104) and its fresh schema; they stay here as fixtures (`Fixtures/dev-chain/`, the files as
/// they were) so that tests can build a database as a development build left it: the schema
/// equality test, and `pushq migrate`'s adoption or refusal of such a database.
enum DevChain {
    /// 0.3.0's migrations (1 to 11, still this release's) and the chain's, in order, applied with
    /// the migrator's own directives (`PGConnection.migrate(_:logger:)`).
    static let all: [Migration] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/dev-chain")
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".sql") }.sorted()
        let chain = files.compactMap { file -> Migration? in
            guard let version = Int(file.prefix(3)),
                  let sql = try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8) else { return nil }
            return Migration(version: version, name: String(file.dropFirst(4).dropLast(4)), sql: sql)
        }
        return Migration.all.filter { $0.version <= 11 } + chain
    }()

    /// The chain up to and including `version`.
    static func upTo(_ version: Int) -> [Migration] { all.filter { $0.version <= version } }
}
