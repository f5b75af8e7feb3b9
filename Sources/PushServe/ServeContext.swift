import Hummingbird
import NIOCore
import PushCore
import PushStore

/// Who made a request: the key, and how it came (a bearer header, or a dashboard session).
public struct Caller: Sendable, Equatable {
    /// The key's id in `pushq.api_keys`.
    public var keyID: Int64
    /// The key's name: what the audit log records as the actor.
    public var name: String
    public var scope: APIScope
    /// The session's CSRF token when the request came with the dashboard's session cookie (every
    /// form of the dashboard carries it: ``SessionCookie/csrfFieldName``), nil for a bearer key.
    public var csrfToken: String?
    /// The client's address (``ServeServices/clientAddress(_:_:)``): the audit log's `client`.
    public var client: String?

    /// `api` for a bearer key, `dashboard` for a session: the audit log's `via`.
    public var via: String { csrfToken == nil ? "api" : "dashboard" }

    /// An audit entry of this caller's.
    public func audit(_ action: String, target: String, rows: Int = 0, detailJSON: String? = nil) -> AuditEntry {
        AuditEntry(actor: name, keyID: keyID, action: action, target: target, rows: rows, via: via, detailJSON: detailJSON, client: client)
    }
}

/// The request context of `pushq serve`: Hummingbird's, the client's address, and the
/// ``Caller`` that ``AuthMiddleware`` found (nil only on the routes that need no key:
/// `/healthz` and the login form).
public struct ServeContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer's IP address (the proxy's, behind one: the client's is
    /// ``ServeServices/clientAddress(_:_:)``, through the trusted proxies).
    public let peerAddress: String
    public var caller: Caller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        caller = nil
    }

    /// Bodies up to 8 MiB: 1 000 notifications of a few kilobytes each.
    public var maxUploadSize: Int { 8 * 1024 * 1024 }

    /// The caller, if it may do one of `permissions`.
    ///
    /// - Throws: ``APIError`` 401 without a caller, 403 naming the scopes that would allow it.
    public func require(_ permissions: APIPermission...) throws -> Caller {
        guard let caller else { throw APIError.unauthorized }
        guard permissions.contains(where: caller.scope.allows) else {
            let scopes = APIScope.allCases.filter { scope in permissions.contains(where: scope.allows) }
            throw APIError(.forbidden, code: "forbidden",
                           message: "a key of scope \(caller.scope.rawValue) may not \(permissions.map(\.rawValue).joined(separator: " or ")): "
                               + "that needs " + scopes.map(\.rawValue).joined(separator: " or "))
        }
        return caller
    }
}
