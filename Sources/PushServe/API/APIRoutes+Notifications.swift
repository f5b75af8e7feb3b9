import Foundation
import Hummingbird
import PushCore
import PushStore

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
            do {
                ids = try await services.pool.withConnection { try await $0.enqueueForUser(user, arguments: arguments) }
            } catch let error as PGError {
                throw APIError.from(error)
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

    /// The path parameter `user_ref` (percent-decoded by the router).
    static func userRef(_ context: ServeContext) throws -> String {
        guard let user = context.parameters.get("user_ref"), !user.isEmpty, !user.unicodeScalars.contains("\u{0}") else {
            throw APIError.invalidField("user_ref", "a user_ref, not empty")
        }
        return user
    }
}
