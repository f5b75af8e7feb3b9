import Foundation
import Hummingbird
import PushCore
import PushStore
import PGClient

/// An answer of the API that is not a success, as JSON:
/// `{"error": {"code": "invalid_field", "message": "...", "field": "device_token", "rule": "...", "index": 3}}`.
///
/// Messages name fields, rules and constraints, never a value the client sent (a token, a key,
/// a payload), so that they can be logged.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// A stable word for programs: `invalid_field`, `unauthorized`, `forbidden`, `not_found`...
    public var code: String
    public var message: String
    /// The request field at fault, when one is.
    public var field: String?
    /// The rule it breaks, in words (``ConstraintExplanation`` for the table's rules).
    public var rule: String?
    /// The table's constraint that refused it, when the database did.
    public var constraint: String?
    /// The notification's index in a batch.
    public var index: Int?
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil, rule: String? = nil,
                constraint: String? = nil, index: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.rule = rule
        self.constraint = constraint
        self.index = index
    }

    public static var unauthorized: APIError {
        var error = APIError(.unauthorized, code: "unauthorized",
                             message: "a valid API key is needed: Authorization: Bearer <key> (pushq api-key create), or a dashboard login")
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }

    /// 400 for a field that breaks a rule checked before the database (its JSON type, a time's form).
    public static func invalidField(_ field: String, _ rule: String, index: Int? = nil) -> APIError {
        APIError(.badRequest, code: "invalid_field", message: "\(index.map { "notification \($0): " } ?? "")\(field): \(rule)",
                 field: field, rule: rule, index: index)
    }

    public static func notFound(_ what: String) -> APIError {
        APIError(.notFound, code: "not_found", message: "no \(what)")
    }

    /// What the database's refusal means for the client: a named constraint → 400 with its
    /// field and rule; a NULL in a NOT NULL column → 400; a lock or timeout → 503 (try again);
    /// anything else → 500 without the server's words.
    public static func from(_ error: PGError, index: Int? = nil) -> APIError {
        let prefix = index.map { "notification \($0): " } ?? ""
        if let name = error.constraint, let explained = ConstraintExplanation.of(name) {
            var e = APIError(.badRequest, code: "invalid_field", message: "\(prefix)\(explained.field): \(explained.rule) (\(name))",
                             field: explained.field, rule: explained.rule, constraint: name, index: index)
            if error.sqlState == "23505" { e.status = .conflict; e.code = "conflict" }
            return e
        }
        switch error.sqlState {
        case "23502"?:
            let column = error.column ?? "a column"
            return APIError(.badRequest, code: "invalid_field", message: "\(prefix)\(column): may not be null", field: error.column,
                            rule: "may not be null", index: index)
        case "22P05"?:
            return APIError(.badRequest, code: "invalid_field", message: "\(prefix)payload: the escape \\u0000 cannot be stored",
                            field: "payload", rule: "the escape \\u0000 cannot be stored", index: index)
        case let state? where state.hasPrefix("22"):
            return APIError(.badRequest, code: "invalid_value", message: "\(prefix)a value is out of range or malformed (SQLSTATE \(state))",
                            index: index)
        case "55P03"?, "57014"?, "40001"?, "40P01"?:
            return APIError(.serviceUnavailable, code: "busy", message: "the database was busy with these rows: try again")
        default:
            break
        }
        if error.code == .connectionLost || error.code == .connectionFailed {
            return APIError(.serviceUnavailable, code: "database_unavailable", message: "the database cannot be reached: try again")
        }
        return APIError(.internalServerError, code: "database_error", message: "the database refused the request (SQLSTATE \(error.sqlState ?? "none"))")
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Body(error: .init(code: code, message: message, field: field, rule: rule, constraint: constraint, index: index))
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try JSONCoding.encoder.encode(body))))
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            var code: String; var message: String; var field: String?; var rule: String?; var constraint: String?; var index: Int?
        }
        var error: Detail
    }
}

/// The API's JSON encoder: sorted keys, no escaped slashes.
enum JSONCoding {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
