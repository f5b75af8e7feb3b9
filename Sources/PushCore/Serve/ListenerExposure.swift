/// Whether `pushq serve` may listen where it is told: on a loopback address anything goes; on
/// any other address only with TLS, or when the operator says a proxy in front terminates TLS.
/// Keys and session cookies would otherwise cross the network in clear.
public enum ListenerExposure: Sendable, Equatable {
    /// Loopback only: plain HTTP is fine.
    case loopback
    /// Reachable from other hosts, over TLS (its own, or a proxy's).
    case network
    /// Reachable from other hosts in clear: refused.
    case refused(String)

    /// Decides for `host` (as given in `host:port`, IPv6 without brackets).
    ///
    /// - Parameters:
    ///   - tls: whether serve has a certificate and key of its own.
    ///   - proxyTerminatesTLS: whether the operator said a proxy in front terminates TLS.
    public static func decide(host: String, tls: Bool, proxyTerminatesTLS: Bool) -> ListenerExposure {
        if isLoopback(host) { return .loopback }
        if tls || proxyTerminatesTLS { return .network }
        return .refused("\(host) is not a loopback address: serve it over TLS (PUSHQ_HTTP_TLS_CERT and PUSHQ_HTTP_TLS_KEY), "
                        + "or say that a proxy in front terminates TLS (PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY=true)")
    }

    /// `localhost`, `127.0.0.0/8` in dotted decimal, and `::1` (any spelling of it).
    public static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        if lower == "localhost" { return true }
        let parts = lower.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts[0] == "127",
           parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCIIDigitCharacter) && Int($0)! <= 255 }) {
            return true
        }
        guard lower.contains(":") else { return false }
        // ::1, 0:0:0:0:0:0:0:1, 0::1 ... : every group zero but a last 1.
        let groups = lower.split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count >= 3, groups.count <= 8, let last = groups.last, last.count <= 4,
              last.allSatisfy(\.isHexDigit), Int(last, radix: 16) == 1 else { return false }
        let head = groups.dropLast()
        guard head.allSatisfy({ $0.count <= 4 && $0.allSatisfy(\.isHexDigit) && ($0.isEmpty || Int($0, radix: 16) == 0) }) else { return false }
        let empties = head.filter(\.isEmpty).count
        return groups.count == 8 ? empties == 0 : empties >= 1
    }
}

extension Character {
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
