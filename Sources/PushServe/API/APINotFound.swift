import Hummingbird

/// A path under `/api/` that no route serves answers `404 not_found` as JSON, like every other
/// error of the API, instead of the router's empty 404 (a typo, or a `user_ref` with a `/` that
/// was not percent-encoded). The message names the OpenAPI document, never the path the client sent.
struct APINotFound: RouterMiddleware {
    typealias Context = ServeContext

    func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && request.uri.path.hasPrefix("/api/") {
            throw APIError(.notFound, code: "not_found",
                           message: "no such endpoint: the API's routes are in /api/v1/openapi.json (percent-encode a / in a path segment)")
        }
    }
}
