import Foundation
import Hummingbird
import PushCore
import PushStore

/// The HTTP API, JSON over `/api/v1` (docs/api.md; the OpenAPI 3.1 document `openapi.json` is
/// served at `/api/v1/openapi.json`, and a test holds it and these routes together).
struct APIRoutes: ServeRoutes {
    static let prefix = "/api/v1"

    func register(on router: Router<ServeContext>, services: ServeServices) {
        let api = router.group("api/v1")
        api.get("openapi.json") { _, context -> Response in
            _ = try context.caller.orThrow()
            return Self.json(.ok, OpenAPIDocument.text)
        }
        api.get("status") { request, context -> Response in
            _ = try context.require(.readQueue)
            let minutes = try Self.integer(request, "minutes", default: 60, 1...10_080)
            let status = try await services.pool.withConnection { try await $0.queueStatus(failureMinutes: minutes) }
            return Self.json(.ok, String(decoding: try JSONCoding.encoder.encode(StatusJSON(status, minutes: minutes)), as: UTF8.self))
        }
        registerNotifications(api, services)
        registerDevices(api, services)
    }

    /// A JSON response with `text` as its body.
    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The request's body, at most `context.maxUploadSize` bytes.
    static func body(_ request: Request, _ context: ServeContext) async throws -> [UInt8] {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let bytes = Array(buffer: buffer)
        guard JSONValue.split(bytes) != nil else { throw APIError(.badRequest, code: "invalid_body", message: "the body is not one JSON value in UTF-8") }
        return bytes
    }

    /// The query parameter `name` as a whole number in `range`, `default` when absent.
    static func integer(_ request: Request, _ name: String, default value: Int, _ range: ClosedRange<Int>) throws -> Int {
        guard let text = request.uri.queryParameters[Substring(name)] else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw APIError.invalidField(name, "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    /// The path parameter `id` as a notification id.
    static func id(_ context: ServeContext) throws -> Int64 {
        guard let text = context.parameters.get("id"), let id = Int64(text), id > 0 else {
            throw APIError.invalidField("id", "a notification id, a whole number from 1")
        }
        return id
    }
}

extension Optional where Wrapped == Caller {
    /// The caller, whatever its scope.
    func orThrow() throws -> Caller {
        guard let self else { throw APIError.unauthorized }
        return self
    }
}
