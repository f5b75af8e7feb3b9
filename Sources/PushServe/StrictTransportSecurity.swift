import Hummingbird

/// `Strict-Transport-Security: max-age=31536000` on every answer of a serve that speaks TLS
/// itself, errors included: a browser that reached the dashboard over HTTPS once never falls back
/// to plain HTTP for a year. Not added behind a proxy that terminates TLS (serve speaks plain
/// HTTP there; the proxy's answers are the HTTPS ones).
struct StrictTransportSecurity: RouterMiddleware {
    typealias Context = ServeContext
    static let value = "max-age=31536000"

    func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.strictTransportSecurity] = Self.value
        return response
    }
}
