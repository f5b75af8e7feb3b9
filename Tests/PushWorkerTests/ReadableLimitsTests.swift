import Foundation
import PushTestSupport
import Testing

/// Limits that keep what a reader meets short: a test's display name is a spec sentence of at most
/// 120 characters (the detail goes in a comment above it), and each section of the CHANGELOG (Unreleased,
/// each release) is one line per user-visible change, at most 8 KB.
@Suite("Readable limits")
struct ReadableLimitsTests {
    static let nameLimit = 120
    static let releaseLimit = 8 * 1024

    /// Every `@Test("…")` and `@Suite("…")` display name in `text`, with its line, unescaped as Swift
    /// reads it (`\"` is one character). A display name is one string literal: the macros take no
    /// concatenation or interpolation.
    static func displayNames(in text: String) throws -> [(line: Int, name: String)] {
        let regex = try NSRegularExpression(pattern: #"@(?:Test|Suite)\(\s*"((?:[^"\\\n]|\\.)*)""#)
        let ns = text as NSString
        return regex.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { match in
            let literal = ns.substring(with: match.range(at: 1))
            let line = ns.substring(to: match.range.location).reduce(into: 1) { count, c in if c == "\n" { count += 1 } }
            let name = literal.replacingOccurrences(of: #"\\(u\{[0-9a-fA-F]+\}|.)"#, with: "_", options: .regularExpression)
            return (line, name)
        }
    }

    @Test("the name reader counts characters as Swift reads the literal")
    func readerCountsUnescaped() throws {
        let sample = #"@Test("a \"quoted\" word") func f() {}  @Suite( "two\\three")"#
        let names = try Self.displayNames(in: sample).map(\.name)
        #expect(names.map(\.count) == [15, 9], "\(names)")
    }

    @Test("no @Test or @Suite display name under Tests/ is over 120 characters")
    func testNamesAreShort() throws {
        let tests = repositoryRoot.appendingPathComponent("Tests")
        let files = (FileManager.default.enumerator(atPath: tests.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted()
        var seen = 0
        for file in files {
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            for (line, name) in try Self.displayNames(in: text) {
                seen += 1
                #expect(name.count <= Self.nameLimit,
                        "Tests/\(file):\(line): a display name of \(name.count) characters (at most \(Self.nameLimit); put the detail in a comment): \(name.prefix(80))…")
            }
        }
        // The reader found the suites' names (there are well over a thousand).
        #expect(seen > 500, "only \(seen) display names read under \(tests.path)")
    }

    /// Each `## ` section of a changelog (Unreleased, each release) with its size in bytes.
    static func sections(of changelog: String) -> [(heading: String, bytes: Int)] {
        var out: [(heading: String, bytes: Int)] = []
        for line in changelog.components(separatedBy: "\n") {
            if line.hasPrefix("## ") { out.append((line, 0)) }
            if !out.isEmpty { out[out.count - 1].bytes += line.utf8.count + 1 }
        }
        return out
    }

    @Test("every CHANGELOG section, Unreleased and each release, is at most 8 KB")
    func changelogSectionsAreShort() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let sections = Self.sections(of: text)
        #expect(sections.contains { $0.heading.hasPrefix("## Unreleased") } && sections.count > 2, "\(sections.map(\.heading))")
        for (heading, bytes) in sections {
            #expect(bytes <= Self.releaseLimit,
                    "CHANGELOG.md \(heading) is \(bytes) bytes (at most \(Self.releaseLimit)): one line per user-visible change, the detail in docs/")
        }
    }
}
