import Hummingbird
import NIOHTTP1

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
        } catch let error as HTTPParserError {
            // A request the server cannot parse: Hummingbird answers 400 and closes the connection.
            throw error
        } catch {
            // What Hummingbird answers any other error with (a bare 500 that shows nothing of it),
            // made here so that it carries the header too.
            context.logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
            response = Response(status: .internalServerError, body: .init())
        }
        response.headers[.strictTransportSecurity] = Self.value
        return response
    }
}
