import Foundation
import Hummingbird
import PushCore
import PushStore
import PGClient

extension APIRoutes {
    /// `POST /notifications` (one or up to 1 000), `GET /notifications/{id}`,
    /// `POST /notifications/{id}/cancel`, `POST /users/{user_ref}/notifications`.
    func registerNotifications(_ api: RouterGroup<ServeContext>, _ services: ServeServices) {
        api.post("notifications") { request, context -> Response in
            _ = try context.require(.enqueue)
            let bytes = try await Self.body(request, context)
            let (rows, single) = try Self.notifications(bytes)
            let outcomes: [EnqueueOutcome]
            do {
                outcomes = try await services.pool.withConnection { try await $0.enqueue(rows) }
            } catch let refusal as EnqueueRefusal {
                throw APIError.from(refusal.error, index: single ? nil : refusal.index)
            } catch let error as PGError {
                throw APIError.from(error)
            }
            let status: HTTPResponse.Status = outcomes.contains(where: \.created) ? .created : .ok
            let results = outcomes.map { EnqueueResult(id: $0.id, created: $0.created) }
            let body = single ? try JSONCoding.encoder.encode(results[0]) : try JSONCoding.encoder.encode(["notifications": results])
            return Self.json(status, String(decoding: body, as: UTF8.self))
        }
        api.get("notifications/:id") { _, context -> Response in
            _ = try context.require(.readQueue)
            let id = try Self.id(context)
            guard let row = try await services.pool.withConnection({ try await $0.notificationJSON(id: id) }) else {
                throw APIError.notFound("notification \(id)")
            }
            return Self.json(.ok, row)
        }
        api.post("notifications/:id/cancel") { _, context -> Response in
            let caller = try context.require(.enqueue)
            let id = try Self.id(context)
            let entry = caller.audit("notification.cancel", target: "notification \(id)")
            let outcome = try await services.audited(entry) { try await $0.cancelNotification(id: id, audit: entry) }
            switch outcome {
            case .cancelled:
                return Self.json(.ok, #"{"id":\#(id),"status":"cancelled"}"#)
            case .notCancellable(let status):
                throw APIError(.conflict, code: "not_cancellable",
                               message: "notification \(id) is \(status): only queued and retrying rows can be cancelled")
            case .notFound:
                throw APIError.notFound("notification \(id)")
            }
        }
        api.post("users/:user_ref/notifications") { request, context -> Response in
            _ = try context.require(.enqueue)
            let user = try Self.userRef(context)
            let bytes = try await Self.body(request, context)
            let arguments = try RequestFields.fanOut.values(bytes, 0..<bytes.count)
            let ids: [Int64]
            let known: Bool
            do {
                (ids, known) = try await services.pool.withConnection { db in
                    let ids = try await db.enqueueForUser(user, arguments: arguments)
                    if !ids.isEmpty { return (ids, true) }
                    return (ids, try await db.devices(userRef: user, limit: 1) != "[]")
                }
            } catch let error as PGError {
                throw APIError.from(error)
            }
            // Nothing enqueued for a user who has no device registered at all: say so, rather than
            // a 200 a producer would take for "sent" (an id of the producer's own, no secret).
            guard known else {
                throw APIError(.notFound, code: "no_devices", message: "user_ref \(user) has no device registered: nothing was enqueued")
            }
            return Self.json(ids.isEmpty ? .ok : .created, String(decoding: try JSONCoding.encoder.encode(["ids": ids]), as: UTF8.self))
        }
    }

    struct EnqueueResult: Encodable {
        var id: Int64
        var created: Bool
    }

    /// The notifications of a body: one object, or an array of 1 to 1 000 objects.
    static func notifications(_ bytes: [UInt8]) throws -> (rows: [NotificationInsert], single: Bool) {
        switch JSONValue.split(bytes, validateUTF8: false) {
        case .object?:
            return ([NotificationInsert(values: try RequestFields.notification.values(bytes, 0..<bytes.count))], true)
        case .array(let items)?:
            guard (1...PGConnection.enqueueLimit).contains(items.count) else {
                throw APIError(.badRequest, code: "invalid_body",
                               message: "a batch has 1 to \(PGConnection.enqueueLimit) notifications, not \(items.count)")
            }
            var rows: [NotificationInsert] = []
            rows.reserveCapacity(items.count)
            for (i, item) in items.enumerated() { rows.append(NotificationInsert(values: try RequestFields.notification.values(bytes, item, index: i))) }
            return (rows, false)
        default:
            throw APIError(.badRequest, code: "invalid_body", message: "expected a notification object or an array of them")
        }
    }

    /// The path parameter `user_ref`, percent-decoded: the router hands it over as the client
    /// wrote it, and clients encode `@`, `/`, `+`, `%`, spaces and non-ASCII (`ann%40example.com`).
    /// A `+` stays a plus (it means a space only in a form's query).
    ///
    /// - Throws: ``APIError`` 400 when it is empty, not valid percent-encoded UTF-8, or holds U+0000.
    static func userRef(_ context: ServeContext) throws -> String {
        guard let raw = context.parameters.get("user_ref"), let user = raw.removingPercentEncoding,
              !user.isEmpty, !user.unicodeScalars.contains("\u{0}") else {
            throw APIError.invalidField("user_ref", "a user_ref, not empty, percent-encoded UTF-8 in the path")
        }
        return user
    }
}
