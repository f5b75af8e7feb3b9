import Foundation
import Hummingbird

/// The dashboard's login session: a random token in a cookie (`Secure`, `HttpOnly`,
/// `SameSite=Strict`), its SHA-256 in `pushq.api_sessions`; and the CSRF token every form and
/// every state-changing request of a session carries, derived from the session's token (an
/// attacker's page can neither read the cookie nor compute it).
public enum SessionCookie {
    /// The cookie's name.
    public static let name = "pushq-session"
    /// The form field that carries the CSRF token (a hidden input in every dashboard form).
    public static let csrfFieldName = "csrf_token"
    /// The header that carries it instead, for scripts (`fetch` with the session).
    public static let csrfHeaderName = "X-CSRF-Token"

    /// The CSRF token of the session whose cookie holds `token`.
    public static func csrfToken(forSession token: String) -> String {
        APIKeySecret.hash("pushq-csrf:" + token)
    }

    /// The cookie that starts a session.
    static func cookie(token: String, seconds: Int) -> Cookie {
        Cookie(name: name, value: token, maxAge: seconds, path: "/", secure: true, httpOnly: true, sameSite: .strict)
    }

    /// The cookie that ends it in the browser.
    static var cleared: Cookie {
        Cookie(name: name, value: "", maxAge: 0, path: "/", secure: true, httpOnly: true, sameSite: .strict)
    }

    /// Whether `given` is the CSRF token of the session `token` (compared in constant time).
    static func csrfMatches(_ given: String?, session token: String) -> Bool {
        guard let given else { return false }
        let expected = Array(csrfToken(forSession: token).utf8)
        let bytes = Array(given.utf8)
        guard bytes.count == expected.count else { return false }
        return zip(bytes, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// The fields of an `application/x-www-form-urlencoded` body: `+` is a space, `%XX` a byte.
public func formFields(_ body: String) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in body.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let decode = { (s: Substring) in String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
        let key = decode(parts[0])
        if fields[key] == nil { fields[key] = parts.count > 1 ? decode(parts[1]) : "" }
    }
    return fields
}

/// `text` with `&`, `<`, `>`, `"` and `'` as character references: safe inside HTML text and
/// attribute values (quoted). Every value a page shows goes through it.
public func htmlEscaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for c in text.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}
