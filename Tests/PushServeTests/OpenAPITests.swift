import ChildProcess
import Foundation
import Hummingbird
@testable import PushServe
import PushTestSupport
import Testing

/// The OpenAPI 3.1 document at `/api/v1/openapi.json`: valid (openapi-spec-validator, PyPI) and
/// in step with the routes.
@Suite("API: OpenAPI document")
struct OpenAPITests {
    @Test("the document served validates as OpenAPI 3.1 with openapi-spec-validator")
    func validates() async throws {
        try await ServeHarness.with { serve, _ in
            let answer = try await serve.call("GET", "/api/v1/openapi.json", key: "read")
            #expect(answer.status == 200 && answer.headers["content-type"]?.hasPrefix("application/json") == true)
            let file = NSTemporaryDirectory() + "pushq-openapi-\(UUID().uuidString).json"
            try answer.body.write(toFile: file, atomically: true, encoding: .utf8)
            defer { unlink(file) }
            let validator = try OpenAPIValidator.path()
            let result = try await ChildProcess.run(validator, [file])
            #expect(result.termination == .exit(0), "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("OK"))
            // A broken document fails it: the check could fail.
            try answer.body.replacingOccurrences(of: "\"3.1.0\"", with: "\"9.9\"").write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try await ChildProcess.run(validator, [file]).termination != .exit(0))
        }
    }

    @Test("its paths and methods are exactly the routes registered under /api/v1, and each path parameter is the route's")
    func matchesRoutes() async throws {
        let application = try ServeApplication(configuration: ServeConfiguration(databaseURL: "postgresql://unused"), logger: ServeHarness.logger)
        let routes = Set(application.router().routes.compactMap { route -> String? in
            let path = route.path.description
            guard path.hasPrefix("/api/v1/") else { return nil }
            let templated = path.dropFirst("/api/v1".count).split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            return route.method.rawValue.lowercased() + " /" + templated.joined(separator: "/")
        })
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.text.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0) \(path)" } })
        #expect(routes == documented, "routes only: \(routes.subtracting(documented)); documented only: \(documented.subtracting(routes))")
        #expect(routes.count >= 9)
    }
}
