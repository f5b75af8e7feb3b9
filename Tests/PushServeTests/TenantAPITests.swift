import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// Fair shares between tenants over the API (issue 48, item 5): `POST /api/v1/notifications` takes
/// `tenant`; a malformed one is a 400 naming the field.
@Suite("API: tenants")
struct TenantAPITests {
    static func token(_ i: Int) -> String { String(repeating: "0", count: 64 - String(i, radix: 16).count) + String(i, radix: 16) }

    @Test("POST /notifications takes tenant (or null); a malformed one is 400 naming tenant and its rule")
    func notificationTenant() async throws {
        try await ServeHarness.with { serve, db in
            let answer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue",
                                              json: #"[{"device_token":"\#(Self.token(1))","payload":{},"tenant":"acme:eu-1"},{"device_token":"\#(Self.token(2))","payload":{},"tenant":null}]"#)
            #expect(answer.status == 201, "\(answer.body)")
            let rows = try await db.query("SELECT string_agg(COALESCE(n.tenant, '-') || '/' || COALESCE(d.tenant, '-'), ',' ORDER BY n.id) FROM pushq.notifications n JOIN pushq.due d ON d.id = n.id")
            #expect(rows.string(0, 0) == "acme:eu-1/acme:eu-1,-/-", "the rows and their due entries")
            for bad in [#""acme corp""#, #""""#, "\"" + String(repeating: "t", count: 65) + "\""] {
                let refused = try await serve.call("POST", "/api/v1/notifications", key: "enqueue",
                                                   json: #"{"device_token":"\#(Self.token(3))","payload":{},"tenant":\#(bad)}"#)
                #expect(try refused.status == 400 && refused.error("field") == "tenant" && refused.error("constraint") == "notifications_tenant_shape",
                        "\(refused.body)")
                #expect(refused.body.contains("1 to 64"), "\(refused.body)")
            }
            let notText = try await serve.call("POST", "/api/v1/notifications", key: "enqueue",
                                               json: #"{"device_token":"\#(Self.token(3))","payload":{},"tenant":7}"#)
            #expect(try notText.status == 400 && notText.error("field") == "tenant", "\(notText.body)")
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications").string(0, 0) == "2")
        }
    }

    @Test("the per-user fan-out takes tenant: each device's row carries it; a malformed one is 400 naming tenant")
    func fanOutTenant() async throws {
        try await ServeHarness.with { serve, db in
            for i in 1...2 {
                #expect(try await serve.call("PUT", "/api/v1/devices", key: "devices",
                                             json: #"{"device_token":"\#(Self.token(i))","user_ref":"ann"}"#).status == 201)
            }
            let answer = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue", json: #"{"payload":{},"tenant":"acme"}"#)
            #expect(answer.status == 201, "\(answer.body)")
            #expect(try await db.query("SELECT string_agg(n.tenant || '/' || d.tenant, ',') FROM pushq.notifications n JOIN pushq.due d USING (id)").string(0, 0)
                    == "acme/acme,acme/acme")
            let refused = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue", json: #"{"payload":{},"tenant":"a b"}"#)
            #expect(try refused.status == 400 && refused.error("field") == "tenant", "\(refused.body)")
        }
    }
}
