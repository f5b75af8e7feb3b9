import Foundation
import Hummingbird
import PushCore
import PushStore
import PGClient

extension APIRoutes {
    /// `PUT /devices`, `DELETE /devices`, `GET /users/{user_ref}/devices`.
    func registerDevices(_ api: RouterGroup<ServeContext>, _ services: ServeServices) {
        api.put("devices") { request, context -> Response in
            _ = try context.require(.registerDevices)
            let bytes = try await Self.body(request, context)
            let registration = DeviceRegistration(values: try RequestFields.device.values(bytes, 0..<bytes.count))
            do {
                let (created, row) = try await services.pool.withConnection { try await $0.registerDevice(registration) }
                return Self.json(created ? .created : .ok, row)
            } catch let error as PGError {
                throw APIError.from(error)
            }
        }
        api.delete("devices") { request, context -> Response in
            let caller = try context.require(.registerDevices)
            let bytes = try await Self.body(request, context)
            let key = try RequestFields.deviceKey.values(bytes, 0..<bytes.count)
            let token = (key["device_token"] ?? nil) ?? ""
            let entry = caller.audit("device.unregister", target: "device \(Self.shortened(token))")
            let deleted = try await services.audited(entry) {
                try await $0.unregisterDevice(token: token, provider: key["provider"] ?? nil, environment: key["environment"] ?? nil, audit: entry)
            }
            guard deleted > 0 else { throw APIError.notFound("registration of this device_token") }
            return Response(status: .noContent)
        }
        api.get("users/:user_ref/devices") { request, context -> Response in
            _ = try context.require(.readQueue, .registerDevices)
            let user = try Self.userRef(context)
            let limit = try Self.integer(request, "limit", default: 100, 1...PGConnection.userDevicesLimit)
            let devices = try await services.pool.withConnection { try await $0.devices(userRef: user, limit: limit) }
            return Self.json(.ok, #"{"devices":"# + devices + "}")
        }
    }

    /// The first 8 characters of a token and an ellipsis: enough to tell tokens apart in the audit
    /// log, never the token.
    static func shortened(_ token: String) -> String {
        token.count <= 8 ? token : String(token.prefix(8)) + "…"
    }
}
