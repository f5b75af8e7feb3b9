import Foundation
import PushCore

/// How the dashboard writes values: tokens shortened, times and ages, URLs of its pages.
enum DashboardFormat {
    /// A device token cut to its first 8 and last 6 characters (`0123abcd…89abcdef`): enough to
    /// tell tokens apart on a page and to search them, never a whole token on screen.
    static func shortToken(_ token: String?) -> String {
        guard let token else { return "" }
        guard token.count > 16 else { return token }
        return token.prefix(8) + "…" + token.suffix(6)
    }

    /// `2026-03-01 12:04:05 UTC`.
    static func time(_ date: Date?) -> String {
        guard let date else { return "" }
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (y, m, d) = CivilCalendar.date(days: days)
        let t = seconds - days * 86_400
        return "\(y)-\(two(m))-\(two(d)) \(two(t / 3_600)):\(two(t % 3_600 / 60)):\(two(t % 60)) UTC"
    }

    /// `12:04` (UTC), for the chart's axis.
    static func clock(_ date: Date) -> String {
        String(time(date).dropFirst(11).prefix(5))
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// `42 s`, `3 min`, `2 h 5 min`, `3 d`.
    static func age(seconds: Double) -> String {
        let s = Int(seconds.rounded())
        switch s {
        case ..<120: return "\(s) s"
        case ..<7_200: return "\(s / 60) min"
        case ..<172_800: return "\(s / 3_600) h \(s % 3_600 / 60) min"
        default: return "\(s / 86_400) d"
        }
    }

    /// `value` encoded for a URL's query (everything but unreserved characters percent-encoded).
    static func query(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// A dashboard URL: `path` with its query items encoded, in order.
    static func url(_ path: String, _ items: [(String, String)] = []) -> String {
        items.isEmpty ? path : path + "?" + items.map { query($0.0) + "=" + query($0.1) }.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
