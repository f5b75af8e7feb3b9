/// Removes secrets from text about to be logged: the password of a connection URL or
/// conninfo string, bearer tokens and JWTs, PEM private keys; and the whole value of a field
/// whose name says it is a secret.
///
/// A second line of defence: pushq never puts secrets in its log messages on purpose; this
/// catches one that arrives inside an error text or a URL. Pure.
///
/// Hand-written scanners over UTF-8 rather than Swift `Regex`: every log line with a URL in it
/// passes here, and the regex engine cost the worker ~0.8 MB of resident code and a parse per
/// pattern. `SecretRedactionTests` checks the scanners against the five regular expressions
/// they implement (written beside each pass below) on generated text.
public enum SecretRedaction {
    /// What replaces a secret.
    public static let mask = "[redacted]"

    /// `text` with every secret it recognises replaced by ``mask``.
    public static func redact(_ text: String) -> String {
        guard mayHoldSecret(text) else { return text }
        var s = Array(text.utf8)
        s = privateKeys(s)
        s = urlPasswords(s)
        s = namedValues(s)
        s = bearerTokens(s)
        s = jwts(s)
        return String(decoding: s, as: UTF8.self)
    }

    /// Whether a field of this name holds a secret (its whole value is replaced).
    public static func isSecretKey(_ key: String) -> Bool {
        let k = key.lowercased()
        return ["password", "passwd", "secret", "authorization", "private_key", "privatekey", "jwt", "bearer"].contains { k.contains($0) }
            || k.hasSuffix("token.value")
    }

    /// A cheap test that skips the scanners for ordinary text.
    private static func mayHoldSecret(_ text: String) -> Bool {
        let lower = text.lowercased()
        return ["://", "pass", "pwd", "secret", "bearer", "eyj", "private key"].contains { lower.contains($0) }
    }

    private static let maskBytes = Array(mask.utf8)

    /// Copies `s`, replacing each match that `match(s, i)` finds when tried at `i`, left to
    /// right, without overlaps. `match` returns the kept prefix's end and the replaced part's end
    /// (the part between them becomes ``mask``), or nil when nothing matches at `i`.
    private static func replacing(_ s: [UInt8], _ match: ([UInt8], Int) -> (keep: Int, end: Int)?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            if let m = match(s, i) {
                out.append(contentsOf: s[i..<m.keep])
                out.append(contentsOf: maskBytes)
                i = max(m.end, i + 1)
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return out
    }

    /// `-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`
    private static func privateKeys(_ s: [UInt8]) -> [UInt8] {
        replacing(s) { s, i in
            guard let afterBegin = armour(s, i, "-----BEGIN ") else { return nil }
            var j = afterBegin
            while j <= s.count {
                if let end = armour(s, j, "-----END ") { return (i, end) }
                j += 1
            }
            return (i, s.count)
        }
    }

    /// At `i`: `opening`, then `[A-Z ]*PRIVATE KEY-----`; the index after it.
    private static func armour(_ s: [UInt8], _ i: Int, _ opening: String) -> Int? {
        guard let j = literal(s, i, opening, ignoringCase: false) else { return nil }
        // `[A-Z ]*` is greedy, then backs off until "PRIVATE KEY-----" follows.
        var k = j
        while k < s.count, isUpper(s[k]) || s[k] == UInt8(ascii: " ") { k += 1 }
        while k >= j {
            if let end = literal(s, k, "PRIVATE KEY-----", ignoringCase: false) { return end }
            k -= 1
        }
        return nil
    }

    /// `(?<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*):[^@\s]*@` → `head:[redacted]@`
    private static func urlPasswords(_ s: [UInt8]) -> [UInt8] {
        replacing(s) { s, i in
            guard i < s.count, isLetter(s[i]) else { return nil }
            var j = i + 1
            while j < s.count, isLetter(s[j]) || isDigit(s[j]) || s[j] == UInt8(ascii: "+") || s[j] == UInt8(ascii: ".")
                || s[j] == UInt8(ascii: "-") { j += 1 }
            // The scheme's class holds neither ':' nor '/', so "://" can only follow its longest run.
            guard let afterScheme = literal(s, j, "://", ignoringCase: false) else { return nil }
            var k = afterScheme
            while k < s.count, !isOneOf(s[k], ":/@"), !isSpace(s[k]) { k += 1 }
            guard k < s.count, s[k] == UInt8(ascii: ":") else { return nil }
            var p = k + 1
            while p < s.count, s[p] != UInt8(ascii: "@"), !isSpace(s[p]) { p += 1 }
            guard p < s.count, s[p] == UInt8(ascii: "@") else { return nil }
            return (k + 1, p)  // "@" is kept: it follows the mask as the next copied byte
        }
    }

    /// `(?i)(password|passwd|pwd|secret|sslpassword)\s*[=:]\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s,;&]+)`
    /// → the name and separator kept, the value masked.
    private static func namedValues(_ s: [UInt8]) -> [UInt8] {
        replacing(s) { s, i in
            for name in ["password", "passwd", "pwd", "secret", "sslpassword"] {
                guard let afterName = literal(s, i, name, ignoringCase: true) else { continue }
                var j = afterName
                while j < s.count, isSpace(s[j]) { j += 1 }
                guard j < s.count, s[j] == UInt8(ascii: "=") || s[j] == UInt8(ascii: ":") else { continue }
                if let value = value(s, after: j) { return value }
            }
            return nil
        }
    }

    /// After the separator at `separator`: spaces, then a quoted or a bare value; (its start, its end).
    private static func value(_ s: [UInt8], after separator: Int) -> (keep: Int, end: Int)? {
        var v = separator + 1
        while v < s.count, isSpace(s[v]) { v += 1 }
        guard v < s.count else { return nil }
        for quote in [UInt8(ascii: "'"), UInt8(ascii: "\"")] where s[v] == quote {
            // `\\.`: a backslash escapes any character but a line break.
            var q = v + 1
            while q < s.count, s[q] != quote {
                if s[q] == UInt8(ascii: "\\") {
                    guard q + 1 < s.count, !isLineBreak(s[q + 1]) else { q = s.count; break }
                    q += 2
                } else {
                    q += 1
                }
            }
            if q < s.count { return (v, q + 1) }
        }
        var e = v
        while e < s.count, !isSpace(s[e]), !isOneOf(s[e], ",;&") { e += 1 }
        return e > v ? (v, e) : nil
    }

    /// `(?i)(bearer\s+)[A-Za-z0-9._~+\/=\-]+` → `bearer [redacted]`
    private static func bearerTokens(_ s: [UInt8]) -> [UInt8] {
        replacing(s) { s, i in
            guard let afterWord = literal(s, i, "bearer", ignoringCase: true) else { return nil }
            var j = afterWord
            while j < s.count, isSpace(s[j]) { j += 1 }
            guard j > afterWord else { return nil }
            var e = j
            while e < s.count, isTokenByte(s[e]) { e += 1 }
            return e > j ? (j, e) : nil
        }
    }

    /// `eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`
    private static func jwts(_ s: [UInt8]) -> [UInt8] {
        replacing(s) { s, i in
            guard let afterHead = literal(s, i, "eyJ", ignoringCase: false) else { return nil }
            var j = afterHead
            for (index, needsOne) in [true, true, false].enumerated() {
                let start = j
                while j < s.count, isBase64URL(s[j]) { j += 1 }
                if needsOne && j == start { return nil }
                if index < 2 {
                    guard j < s.count, s[j] == UInt8(ascii: ".") else { return nil }
                    j += 1
                }
            }
            return (i, j)
        }
    }

    /// At `i`: the ASCII `word`; the index after it.
    private static func literal(_ s: [UInt8], _ i: Int, _ word: String, ignoringCase: Bool) -> Int? {
        var j = i
        for w in word.utf8 {
            guard j < s.count else { return nil }
            let c = ignoringCase && isUpper(s[j]) ? s[j] + 32 : s[j]
            guard c == w else { return nil }
            j += 1
        }
        return j
    }

    private static func isUpper(_ c: UInt8) -> Bool { c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") }
    private static func isLetter(_ c: UInt8) -> Bool { isUpper(c) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) }
    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    /// `\s` as Swift's Regex reads it on ASCII (tab, line feed, vertical tab, form feed, return, space).
    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }
    /// What Regex's `.` does not match, on ASCII (line feed, vertical tab, form feed, return).
    private static func isLineBreak(_ c: UInt8) -> Bool { c >= 0x0A && c <= 0x0D }
    private static func isBase64URL(_ c: UInt8) -> Bool { isLetter(c) || isDigit(c) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") }
    /// Whether `c` is one of the ASCII characters of `set` (a literal: no array is built per byte).
    private static func isOneOf(_ c: UInt8, _ set: StaticString) -> Bool {
        set.withUTF8Buffer { $0.contains(c) }
    }
    private static func isTokenByte(_ c: UInt8) -> Bool {
        isBase64URL(c) || isOneOf(c, ".~+/=")
    }
}
