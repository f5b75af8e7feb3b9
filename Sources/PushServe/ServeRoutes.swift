import Hummingbird

/// A group of routes of `pushq serve`. ``ServeApplication/routeGroups`` lists them all: the API,
/// the login form, the dashboard (`Dashboard/`) each register theirs on the one router, behind
/// ``AuthMiddleware`` (so every handler but the public ones has `context.caller`).
///
/// A handler checks what the caller may do with `try context.require(.readQueue)` (403
/// otherwise), works through `services.pool`, and writes what it changes for someone with an
/// ``AuditEntry`` from `caller.audit(...)` in the same transaction.
public protocol ServeRoutes: Sendable {
    func register(on router: Router<ServeContext>, services: ServeServices)
}

/// `GET /healthz`, without a key: 200 `ok` when the database answers, else 503 saying so. For
/// load balancers and Kubernetes probes.
struct HealthRoutes: ServeRoutes {
    func register(on router: Router<ServeContext>, services: ServeServices) {
        router.get("healthz") { _, _ -> Response in
            let problem: String?
            do {
                try await services.pool.withConnection { _ = try await $0.query("SELECT 1") }
                problem = nil
            } catch {
                problem = "database: \(error)"
            }
            let text = problem.map { $0 + "\n" } ?? "ok\n"
            return Response(status: problem == nil ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }
}
