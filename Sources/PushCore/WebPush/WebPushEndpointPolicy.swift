/// Whether the worker may connect for a Web Push endpoint, and to which addresses (issue 47).
///
/// The worker resolves the endpoint's host itself, hands every address it got to ``check(_:resolved:)``
/// and, when allowed, connects to exactly those addresses (pinned: CURLOPT_RESOLVE), so that a
/// second resolution by libcurl cannot swap in another (DNS rebinding). Every address must be
/// public unicast (``WebPushAddressPolicy``) — one private address among public ones refuses the
/// endpoint, since a pinned list is tried in order and a later attempt could reach it — unless the
/// endpoint's origin is listed in ``allowedOrigins`` (`PUSHQ_WEBPUSH_ALLOWED_ORIGINS`), whose
/// addresses are not checked. An IP-literal host is checked as its own only address.
public struct WebPushEndpointPolicy: Sendable, Hashable {
    /// Origins whose addresses are not checked. Defaults to none.
    public var allowedOrigins: Set<WebPushOrigin>

    public init(allowedOrigins: Set<WebPushOrigin> = []) {
        self.allowedOrigins = allowedOrigins
    }

    /// What to connect to.
    public enum Decision: Sendable, Hashable {
        /// Connect, pinned to these addresses (4 or 16 bytes each, in the resolver's order).
        case connect([[UInt8]])
        /// Do not connect: the row ends `failed` / `EndpointNotAllowed`.
        case refuse(WebPushEndpointRefusal)
    }

    /// Decides for `endpoint`, whose host resolved to `resolved` (ignored for an IP-literal host).
    public func check(_ endpoint: WebPushEndpoint, resolved: [[UInt8]]) -> Decision {
        let origin = endpoint.origin
        let addresses = origin.host.literalAddress.map { [$0] } ?? resolved
        guard !addresses.isEmpty else {
            return .refuse(.init(.noAddress, "the host of \(origin) resolved to no address"))
        }
        if allowedOrigins.contains(origin) { return .connect(addresses) }
        for address in addresses {
            if let refusal = WebPushAddressPolicy.refusal(address) {
                return .refuse(.init(.address, "\(origin) resolves to an address in \(refusal), not a public unicast address; "
                    + "list the origin in PUSHQ_WEBPUSH_ALLOWED_ORIGINS to send to it anyway"))
            }
        }
        return .connect(addresses)
    }

    /// Parses `PUSHQ_WEBPUSH_ALLOWED_ORIGINS`: comma-separated `https://host[:port]`, spaces
    /// around entries ignored, empty (or only spaces) for none. Port 443 and no port are one origin.
    ///
    /// - Throws: ``WebPushEndpointRefusal`` naming the variable, the entry and the expected form.
    public static func parseAllowedOrigins(_ text: String) throws(WebPushEndpointRefusal) -> Set<WebPushOrigin> {
        var origins: Set<WebPushOrigin> = []
        let entries = text.split(separator: ",", omittingEmptySubsequences: false).map { HTTPDate.trimmed(String($0)) }
        if entries.allSatisfy(\.isEmpty), entries.count == 1 { return [] }
        for entry in entries {
            guard !entry.isEmpty else {
                throw WebPushEndpointRefusal(.malformed, "PUSHQ_WEBPUSH_ALLOWED_ORIGINS has an empty entry; write https://host[:port] entries separated by commas")
            }
            switch WebPushOrigin.parse(entry) {
            case .success(let origin): origins.insert(origin)
            case .failure(let refusal):
                throw WebPushEndpointRefusal(refusal.code, "PUSHQ_WEBPUSH_ALLOWED_ORIGINS: \(refusal.message); expected comma-separated https://host[:port]")
            }
        }
        return origins
    }
}
