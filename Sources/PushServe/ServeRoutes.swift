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

/// `GET /healthz` and `GET /readyz`, without a key: 200 `ok` when the database answers within
/// 2 s, else 503 `database unavailable` (what went wrong is logged, never answered). For load
/// balancers and Kubernetes probes. The check has a connection of its own (``HealthProbe``): it
/// never waits behind requests that hold the pools' connections.
struct HealthRoutes: ServeRoutes {
    /// The paths served without a key.
    static let paths: Set<String> = ["/healthz", "/readyz"]

    func register(on router: Router<ServeContext>, services: ServeServices) {
        for path in Self.paths {
            router.get(RouterPath(path)) { _, _ -> Response in
                let good = await services.health.check()
                return Response(status: good ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                                body: .init(byteBuffer: ByteBuffer(string: good ? "ok\n" : "database unavailable\n")))
            }
        }
    }
}
