import Foundation
import PushServe
import Testing

/// api.md: "Every error is JSON". A path under `/api/` that no route serves (a typo, a `user_ref`
/// whose `/` was not percent-encoded) answers `404 not_found` in the API's error shape, naming the
/// OpenAPI document instead of the path (messages never repeat what the client sent).
@Suite("Unknown API routes")
struct UnknownRouteTests {
    @Test("a path under /api/ that no route serves answers 404 with the API's JSON error")
    func unknownRouteIsJSON() async throws {
        try await ServeHarness.with { serve, _ in
            for (method, path) in [("GET", "/api/v1/users/team/42/devices"), ("GET", "/api/v1/notification/1"),
                                   ("POST", "/api/v1/users/team/42/notifications"), ("GET", "/api/v2/status")] {
                let answer = try await serve.call(method, path, key: "admin", json: method == "POST" ? "{}" : nil)
                #expect(answer.status == 404, "\(method) \(path): \(answer.status) \(answer.body)")
                #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true, "\(method) \(path): \(answer.headers)")
                let error = try #require(try? answer.json["error"] as? [String: Any], "\(method) \(path): \(answer.body)")
                #expect(error["code"] as? String == "not_found")
                #expect((error["message"] as? String)?.contains("/api/v1/openapi.json") == true, "\(error)")
                #expect((error["message"] as? String)?.contains("team") != true, "the message repeats the path: \(error)")
            }
            // A known route is unchanged.
            #expect(try await serve.call("GET", "/api/v1/status", key: "read").status == 200)
        }
    }
}
