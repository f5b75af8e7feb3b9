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
            let registration = DeviceRegistration(values: try Self.webPushSubscription(try RequestFields.device.values(bytes, 0..<bytes.count)))
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

    /// A registration's columns from `PUT /devices`' fields: a browser's `PushSubscription`
    /// (`{"endpoint": …, "expirationTime": …, "keys": {"p256dh": …, "auth": …}}`, with `user_ref`
    /// and the other columns beside it) becomes a Web Push registration, the endpoint as its
    /// `device_token` exactly as given and `keys` as `webpush_keys`; `expirationTime` is read and
    /// not kept (a browser renews a subscription by subscribing again). Other registrations pass as
    /// they are.
    ///
    /// - Throws: `400 invalid_field` naming the field: `device_token` or `endpoint` missing (or
    ///   both given), an endpoint that is not `https://host[:port]/path` (the refusal never repeats
    ///   the endpoint), `keys` that are not an object, `keys.p256dh` / `keys.auth` malformed, a
    ///   `provider` other than `webpush` with an endpoint or keys.
    static func webPushSubscription(_ fields: [String: String?]) throws(APIError) -> [String: String?] {
        var values = fields
        let expiration = values.removeValue(forKey: "expirationTime") ?? nil
        let endpoint = values.removeValue(forKey: "endpoint") ?? nil
        let keys = values.removeValue(forKey: "keys") ?? nil
        guard endpoint != nil || keys != nil || expiration != nil else {
            guard (values["device_token"] ?? nil) != nil else { throw APIError.invalidField("device_token", "required") }
            return values
        }
        guard let endpoint else { throw APIError.invalidField("endpoint", "required with keys (a PushSubscription's toJSON())") }
        guard (values["device_token"] ?? nil) == nil else {
            throw APIError.invalidField("device_token", "give the endpoint or the device_token of a Web Push subscription, not both")
        }
        if let provider = values["provider"] ?? nil, provider != Provider.webpush.rawValue {
            throw APIError.invalidField("provider", "webpush for a PushSubscription (endpoint and keys), not \(provider)")
        }
        if case .failure(let refusal) = WebPushEndpoint.parse(endpoint) { throw APIError.invalidField("endpoint", refusal.message) }
        if let expiration {
            let value = JSONValue.parse(Array(expiration.utf8), in: 0..<expiration.utf8.count)
            guard value == .null || value?.int64Value != nil else {
                throw APIError.invalidField("expirationTime", "null or milliseconds since the epoch, as PushSubscription.toJSON() gives it")
            }
        }
        guard let keys, case .object(let members)? = JSONValue.parse(Array(keys.utf8), in: 0..<keys.utf8.count) else {
            throw APIError.invalidField("keys", "an object {\"p256dh\": …, \"auth\": …} (PushSubscription.toJSON().keys)")
        }
        func key(_ name: String) throws(APIError) -> String {
            guard let value = members.first(where: { $0.key == name })?.value.stringValue else {
                throw APIError.invalidField("keys.\(name)", "required, a base64url string")
            }
            return value
        }
        let p256dh = try key("p256dh"), auth = try key("auth")
        do {
            _ = try WebPushKeys(p256dh: p256dh, auth: auth)
        } catch {
            let field = error.message.hasPrefix("keys.auth") ? "keys.auth" : "keys.p256dh"
            throw APIError.invalidField(field, String(error.message.dropFirst(field.count + 1)))
        }
        values["device_token"] = endpoint
        values["provider"] = Provider.webpush.rawValue
        values["webpush_keys"] = keys
        return values
    }

    /// The first 8 characters of a token and an ellipsis: enough to tell tokens apart in the audit
    /// log, never the token.
    static func shortened(_ token: String) -> String {
        token.count <= 8 ? token : String(token.prefix(8)) + "…"
    }
}
