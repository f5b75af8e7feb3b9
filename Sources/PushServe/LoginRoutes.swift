import Foundation
import Hummingbird
import PushCore
import PushStore

/// The dashboard's login: `GET /login` shows a form asking for an API key; `POST /login` checks
/// it (a wrong key counts against the process's ``FailedKeyBudget``; a right one is always
/// accepted), starts a session (cookie
/// ``SessionCookie``) and goes on to `next`; `POST /logout` ends it.
struct LoginRoutes: ServeRoutes {
    static let loginPath = "/login"

    func register(on router: Router<ServeContext>, services: ServeServices) {
        router.get("login") { request, _ -> Response in
            Self.page(next: request.uri.queryParameters["next"].map(String.init), problem: nil, status: .ok)
        }
        router.post("login") { request, context -> Response in
            try await Self.login(request, context: context, services: services)
        }
        router.post("logout") { request, _ -> Response in
            if let token = request.cookies[SessionCookie.name]?.value {
                try await services.pool.withConnection { try await $0.endSession(tokenHash: APIKeySecret.hash(token)) }
            }
            var response = Response(status: .seeOther, headers: [.location: Self.loginPath])
            response.setCookie(SessionCookie.cleared)
            return response
        }
    }

    private static func login(_ request: Request, context: ServeContext, services: ServeServices) async throws -> Response {
        var request = request
        let client = services.clientAddress(request, context)
        let fields = formFields(String(buffer: try await request.collectBody(upTo: 64 * 1024)))
        let next = fields["next"]
        if let origin = request.headers[.origin], let host = request.head.authority,
           URL(string: origin)?.hostAndPort != host.lowercased() {
            return page(next: next, problem: "A login from another site is refused.", status: .forbidden)
        }
        let key = (fields["key"] ?? "").trimmingCharacters(in: .whitespaces)
        let identity = key.isEmpty ? nil : try await services.pool.withConnection { try await $0.authenticateAPIKey(keyHash: APIKeySecret.hash(key)) }
        guard let identity else {
            if let seconds = services.refusedKey("a dashboard login", request, context) {
                var response = page(next: next, problem: "Too many wrong keys were sent to this server lately: try again in \(seconds) s.",
                                    status: .tooManyRequests)
                response.headers[.retryAfter] = String(seconds)
                return response
            }
            return page(next: next, problem: "That key is not valid (or it was revoked).", status: .unauthorized)
        }
        let token = APIKeySecret.randomToken()
        let seconds = services.configuration.sessionSeconds
        try await services.pool.withConnection {
            try await $0.createSession(tokenHash: APIKeySecret.hash(token), keyID: identity.id, seconds: seconds)
        }
        services.logger.info("dashboard login", metadata: ["serve.actor": "\(identity.name)", "serve.client": "\(client)"])
        var response = Response(status: .seeOther, headers: [.location: safeNext(next)])
        response.setCookie(SessionCookie.cookie(token: token, seconds: seconds))
        return response
    }

    /// `next` when it is a path of this site (`/…` but not `//…`), else `/`: never a redirect elsewhere.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
              !next.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return "/" }
        return next
    }

    /// 303 to the login form, coming back to `next` after.
    static func redirectToLogin(next: String) -> Response {
        let query = next == "/" ? "" : "?next=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        return Response(status: .seeOther, headers: [.location: loginPath + query])
    }

    /// The login form. No script, no asset from elsewhere.
    static func page(next: String?, problem: String?, status: HTTPResponse.Status) -> Response {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>pushq: log in</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>body{font:16px system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}
            input{font:inherit;width:100%;box-sizing:border-box;padding:.4rem;margin:.3rem 0 1rem}
            button{font:inherit;padding:.4rem 1.2rem}.problem{color:#a40000}</style></head>
            <body><h1>pushq</h1>
            \(problem.map { "<p class=\"problem\" role=\"alert\">\(htmlEscaped($0))</p>" } ?? "")
            <form method="post" action="\(loginPath)">
            <label for="key">API key</label>
            <input id="key" name="key" type="password" autocomplete="off" required autofocus>
            <input type="hidden" name="next" value="\(htmlEscaped(safeNext(next)))">
            <button type="submit">Log in</button>
            </form>
            <p>A key is made with <code>pushq api-key create NAME --scope read</code>.</p>
            </body></html>
            """
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
