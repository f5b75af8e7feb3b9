import Foundation
import PushTestSupport
import Testing

/// The docs hold together as pages are split and sections move: every relative link of
/// README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md reaches a file, and a heading of it when
/// it names one; README.md (the index, CONTRIBUTING.md says) links every page of docs/; and each
/// page stays short enough to read in one sitting.
@Suite("Documentation links and pages")
struct DocsLinkTests {
    /// The largest page of docs/, in bytes. docs/producers.md had grown to 26 499 bytes before the
    /// considerate-sending material moved to a page of its own; the longest page then was 24 795.
    static let pageLimit = 25 * 1024

    /// `text` without its fenced code blocks (a `# comment` in a shell block is no heading, and
    /// `[a](b)` in SQL is no link).
    static func prose(_ text: String) -> [Substring] {
        var lines: [Substring] = []
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if !inFence { lines.append(line) }
        }
        return lines
    }

    /// The anchor GitHub gives a heading: lower-cased, letters, digits, `_` and `-` kept, spaces
    /// made `-`, everything else dropped (`` `local_time` `` → `local_time`, `'s` → `s`).
    static func anchor(_ heading: Substring) -> String {
        var out = ""
        for c in heading.trimmingCharacters(in: .whitespaces).lowercased() {
            if c.isLetter || c.isNumber || c == "_" || c == "-" { out.append(c) } else if c == " " { out.append("-") }
        }
        return out
    }

    /// The anchors of the headings of `text`.
    static func anchors(_ text: String) -> Set<String> {
        var out: Set<String> = []
        for line in prose(text) {
            guard let hashes = line.firstIndex(where: { $0 != "#" }), hashes != line.startIndex,
                  line.distance(from: line.startIndex, to: hashes) <= 6, line[hashes] == " " else { continue }
            out.insert(anchor(line[line.index(after: hashes)...]))
        }
        return out
    }

    /// Every link target `[text](target)` of `text` outside code blocks, but those with a scheme
    /// (`https:`, `mailto:`).
    static func relativeLinks(_ text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: "\\]\\(([^)\\s]+)\\)")
        let scheme = try NSRegularExpression(pattern: "^[a-z][a-z0-9+.-]*:")
        var out: [String] = []
        for line in prose(text) {
            let s = String(line)
            for match in regex.matches(in: s, range: NSRange(s.startIndex..., in: s)) {
                guard let r = Range(match.range(at: 1), in: s) else { continue }
                let target = String(s[r])
                if scheme.firstMatch(in: target, range: NSRange(target.startIndex..., in: target)) == nil { out.append(target) }
            }
        }
        return out
    }

    @Test("the anchor of a heading is GitHub's, and links in code blocks are not links")
    func readerReadsAsGitHub() throws {
        #expect(Self.anchor("Local delivery time: `local_time`") == "local-delivery-time-local_time")
        #expect(Self.anchor("The recipient's time zone") == "the-recipients-time-zone")
        #expect(Self.anchor("Broadcast channels (iOS 18)") == "broadcast-channels-ios-18")
        let text = "# A page\n\n## Per user: `pushq.enqueue_for_user`\n\n```sh\n# not a heading [x](y.md)\n```\n[a](b.md#c) [w](https://example.com)\n"
        #expect(Self.anchors(text) == ["a-page", "per-user-pushqenqueue_for_user"])
        #expect(try Self.relativeLinks(text) == ["b.md#c"])
    }

    @Test("every relative link of README, CONTRIBUTING, CHANGELOG and docs/ reaches a file, and its heading when it names one")
    func linksResolve() throws {
        let root = repositoryRoot
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        var anchorsOf: [String: Set<String>] = [:]
        var checked = 0
        for (path, text) in DocumentationTests.documents + [("CHANGELOG.md", changelog)] {
            let folder = root.appendingPathComponent(path).deletingLastPathComponent()
            for link in try Self.relativeLinks(text) {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? root.appendingPathComponent(path) : folder.appendingPathComponent(String(parts[0]))
                let target = file.standardizedFileURL.path
                guard FileManager.default.fileExists(atPath: target) else {
                    Issue.record("\(path): the link \(link) names no file")
                    continue
                }
                guard parts.count == 2, target.hasSuffix(".md") else { continue }
                if anchorsOf[target] == nil {
                    anchorsOf[target] = Self.anchors((try? String(contentsOfFile: target, encoding: .utf8)) ?? "")
                }
                #expect(anchorsOf[target]?.contains(String(parts[1])) == true,
                        "\(path): the link \(link) names no heading of \(parts[0].isEmpty ? path : String(parts[0]))")
            }
        }
        // The reader found the docs' links (there are several hundred).
        #expect(checked > 200, "only \(checked) links read")
    }

    @Test("README.md links every page of docs/")
    func readmeLinksEveryPage() throws {
        let readme = try #require(DocumentationTests.documents.first { $0.path == "README.md" }).text
        let linked = Set(try Self.relativeLinks(readme).map { String($0.split(separator: "#")[0]) })
        let pages = DocumentationTests.documents.map(\.path).filter { $0.hasPrefix("docs/") }
        #expect(pages.count > 15)
        for page in pages { #expect(linked.contains(page), "README.md does not link \(page)") }
    }

    @Test("no page of docs/ is over 25 KiB: each reads in one sitting")
    func pagesAreShort() {
        for (path, text) in DocumentationTests.documents where path.hasPrefix("docs/") {
            #expect(text.utf8.count <= Self.pageLimit,
                    "\(path) is \(text.utf8.count) bytes (at most \(Self.pageLimit)): split it by task, as docs/considerate-sending.md was split from docs/producers.md")
        }
    }
}
