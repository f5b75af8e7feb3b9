import Foundation
import Hummingbird
import PushCore
import PushStore

/// Every request but `/healthz` and the login form needs a key: `Authorization: Bearer <key>`,
/// or the dashboard's session cookie. A session's requests that change something (any method
/// but GET and HEAD) must carry its CSRF token (form field or header) and, when the browser
/// sends one, an `Origin` of this host. A bearer key is looked up first and, when found, always
/// accepted; a wrong one counts against the process's ``FailedKeyBudget`` (401, or 429 with
/// `Retry-After` beyond it).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let services: ServeServices

    /// Paths served without a key.
    static let publicPaths: Set<String> = HealthRoutes.paths.union([LoginRoutes.loginPath])

    func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        if Self.publicPaths.contains(request.uri.path) { return try await next(request, context) }
        var context = context
        var request = request
        if let key = Self.bearer(request) {
            let identity = try await services.pool.withConnection { try await $0.authenticateAPIKey(keyHash: APIKeySecret.hash(key)) }
            guard let identity, let scope = APIScope(rawValue: identity.scope) else {
                if let seconds = services.refusedKey("an API key", request, context) { throw Self.throttled(seconds) }
                throw APIError.unauthorized
            }
            context.caller = Caller(keyID: identity.id, name: identity.name, scope: scope, csrfToken: nil,
                                    client: services.clientAddress(request, context))
            return try await next(request, context)
        }
        if let token = request.cookies[SessionCookie.name]?.value, !token.isEmpty,
           let identity = try await services.pool.withConnection({ try await $0.sessionIdentity(tokenHash: APIKeySecret.hash(token)) }),
           let scope = APIScope(rawValue: identity.scope) {
            context.caller = Caller(keyID: identity.id, name: identity.name, scope: scope, csrfToken: SessionCookie.csrfToken(forSession: token),
                                    client: services.clientAddress(request, context))
            if request.method != .get && request.method != .head {
                try await Self.checkCSRF(&request, context: context, session: token)
            }
            return try await next(request, context)
        }
        if request.method == .get, request.headers[.accept]?.contains("text/html") == true {
            return LoginRoutes.redirectToLogin(next: request.uri.path)
        }
        throw APIError.unauthorized
    }

    /// The key of `Authorization: Bearer <key>`, if the header is there.
    static func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization], value.lowercased().hasPrefix("bearer ") else { return nil }
        let key = value.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        return key.isEmpty ? nil : key
    }

    static func throttled(_ seconds: Int) -> APIError {
        var error = APIError(.tooManyRequests, code: "too_many_failed_logins",
                             message: "too many wrong keys were sent to this server lately: try again in \(seconds) s (a valid key is never refused)")
        error.headers[.retryAfter] = String(seconds)
        return error
    }

    /// A session's state-changing request: the `Origin` (when sent) is this host, and the CSRF
    /// token is in the `X-CSRF-Token` header or the form's `csrf_token` field (the body is read
    /// and put back for the handler).
    static func checkCSRF(_ request: inout Request, context: ServeContext, session token: String) async throws {
        if let origin = request.headers[.origin], let host = request.head.authority,
           URL(string: origin)?.hostAndPort != host.lowercased() {
            throw APIError(.forbidden, code: "cross_origin", message: "a request from another origin may not act with this session")
        }
        var given = request.headers[.xCSRFToken]
        if given == nil, request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
            let body = try await request.collectBody(upTo: context.maxUploadSize)
            given = formFields(String(buffer: body))[SessionCookie.csrfFieldName]
        }
        guard SessionCookie.csrfMatches(given, session: token) else {
            throw APIError(.forbidden, code: "csrf", message: "the form's CSRF token is missing or not this session's: reload the page")
        }
    }
}

extension URL {
    /// `host` or `host:port` as a `Host` header gives it, lower case.
    var hostAndPort: String? {
        guard let host = host?.lowercased() else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(bracketed):\($0)" } ?? bracketed
    }
}
