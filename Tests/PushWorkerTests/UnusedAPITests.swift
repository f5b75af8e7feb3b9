import Foundation
import PushTestSupport
import Testing

/// API production never used, and parallel lists of providers, stay out of the tree: a second
/// truth beside the one the worker uses (`Disposition.refundsAttempt`), or a list a provider
/// added must be threaded through, is what these declarations were.
@Suite("Unused API")
struct UnusedAPITests {
    /// The text of every `.swift` file under `folder` of the repository, by path.
    static func sources(_ folder: String) -> [(path: String, text: String)] {
        let root = repositoryRoot.appendingPathComponent(folder)
        let files = (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
        return files.sorted().compactMap { file in
            (try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)).map { (folder + "/" + file, $0) }
        }
    }

    /// Where `pattern` matches in `files`, as `path: line`.
    static func matches(_ pattern: String, in files: [(path: String, text: String)]) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return files.flatMap { file in
            file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { i, line in
                let text = String(line)
                return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil ? nil : "\(file.path):\(i + 1)"
            }
        }
    }

    @Test("no declaration of the API production never used, nor of the second truth beside refundsAttempt")
    func noUnusedAPI() throws {
        let sources = Self.sources("Sources")
        #expect(sources.count > 100)
        // Spelled in pieces so that this file does not name them.
        for name in ["enum " + "DeviceToken", "maximum" + "BatchSize", "func " + "unlisten", "var " + "columnNames",
                     "var " + "consumesAttempt", "var " + "isFinal", "var " + "blame", "var " + "grantedCount"] {
            #expect(try Self.matches(#"\b"# + name + #"\b"#, in: sources) == [], "\(name)")
        }
    }

    @Test("the worker's credentials are one map keyed by provider: no FCM list beside the APNs one")
    func noParallelCredentialLists() throws {
        let files = Self.sources("Sources") + Self.sources("Tests") + Self.sources("bench")
        #expect(try Self.matches("fcm" + "Credentials", in: files) == [])
    }
}
