import Foundation
import PushStore
import PGClient

/// What a search box's text asks for.
enum DashboardSearch: Equatable {
    case id(Int64)
    case token(String)
    case user(String)
    case metadata(key: String, value: String)

    /// Digits are an id; `key=value` a metadata search; a hex string of 64 or more digits, or a
    /// long string with a `:` (FCM's shape), a token; anything else a `user_ref`. A prefix
    /// `id:`, `token:`, `user:` or `meta:` says which explicitly.
    init?(_ text: String) {
        let q = text.trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty else { return nil }
        for (prefix, make) in [("id:", { (s: String) in Int64(s).map(DashboardSearch.id) }), ("token:", { .token($0) }), ("user:", { .user($0) }),
                               ("meta:", { DashboardSearch.metadata($0) })] as [(String, (String) -> DashboardSearch?)] where q.hasPrefix(prefix) {
            guard let s = make(String(q.dropFirst(prefix.count))) else { return nil }
            self = s
            return
        }
        if let id = Int64(q), id > 0 { self = .id(id) }
        else if let m = Self.metadata(q) { self = m }
        else if (q.count >= 64 && q.allSatisfy(\.isHexDigit)) || (q.count >= 100 && q.contains(":")) { self = .token(q) }
        else { self = .user(q) }
    }

    private static func metadata(_ q: String) -> DashboardSearch? {
        guard let eq = q.firstIndex(of: "="), eq != q.startIndex else { return nil }
        return .metadata(key: String(q[..<eq]), value: String(q[q.index(after: eq)...]))
    }
}

extension DashboardPage {
    /// A token's devices and rows.
    func tokenPage(_ token: String, devices: [DeviceRecord], rows: [NotificationSummary]) -> HTML {
        layout.page(title: "Token \(DashboardFormat.shortToken(token))", """
            <section><h2>Devices</h2>\(deviceTable(devices))</section>
            <section><h2>Newest notifications</h2>\(notificationTable(rows))</section>
            """)
    }

    /// A user's devices and their newest rows.
    func userPage(_ userRef: String, devices: [DeviceRecord], rows: [NotificationSummary]) -> HTML {
        layout.page(title: "User \(userRef)", """
            <section><h2>Devices</h2>\(deviceTable(devices))</section>
            <section><h2>Newest notifications</h2>\(notificationTable(rows))</section>
            """)
    }

    /// Rows whose metadata holds `key` with `value`.
    func metadataResults(key: String, value: String, rows: [NotificationSummary]) -> HTML {
        layout.page(title: "metadata \(key) = \(value)", """
            <p>Rows finished or scheduled in the last \(PGConnection.metadataSearchHours) hours, and rows being sent.</p>
            \(notificationTable(rows))
            """)
    }

    /// A search that found nothing, or could not be read.
    func nothingFound(_ text: String) -> HTML {
        layout.page(title: "Not found", "<p class=\"error\">Nothing matches <code>\(text)</code>.</p>")
    }

    private func deviceTable(_ devices: [DeviceRecord]) -> HTML {
        guard !devices.isEmpty else { return "<p>No device.</p>" }
        let rows = devices.map { d -> HTML in
            let user: HTML = d.userRef.map { "<a href=\"\(DashboardFormat.url(DashboardLayout.root + "/users", [("ref", $0)]))\">\($0)</a>" } ?? ""
            let state = d.invalidReason.map { "invalid: " + $0 } ?? "valid"
            return """
                <tr><td><code>\(DashboardFormat.shortToken(d.deviceToken))</code></td><td>\(d.provider)</td><td>\(d.kind)</td><td>\(d.environment)</td>\
                <td>\(user)</td><td>\(d.topic)</td><td>\(d.activity)</td><td>\(DashboardFormat.time(d.registeredAt))</td><td>\(state)</td></tr>
                """
        }
        return """
            <table><tr><th>token</th><th>provider</th><th>kind</th><th>environment</th><th>user</th><th>topic</th><th>activity</th><th>registered</th><th>state</th></tr>\(rows)</table>
            """
    }
}
