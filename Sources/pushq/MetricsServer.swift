import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle
import PushWorker

/// The worker's HTTP listener (`--http-addr`, `PUSHQ_HTTP_ADDR`): `/metrics` in Prometheus'
/// text format, `/healthz` (the loops are alive) and `/readyz` (connected, not draining, a
/// credential usable). HTTP/1.1 on Hummingbird; answers are 200 or 503 with the problems as text.
struct MetricsServer: Sendable {
    let address: HTTPAddress
    let registry: PrometheusCollectorRegistry
    let worker: PushWorker
    let logger: Logger

    /// The listener as a service: it serves from `run()` until a graceful shutdown of its
    /// `ServiceGroup`; `run()` throws when the address cannot be bound (in use, not local).
    func service() -> some Service {
        let router = Router()
        let registry = registry, worker = worker
        router.get("metrics") { _, _ -> Response in
            let bytes = registry.emitToBuffer()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.get("healthz") { _, _ -> Response in
            Self.answer(worker.health().livenessProblems)
        }
        router.get("readyz") { _, _ -> Response in
            Self.answer(worker.health().readinessProblems)
        }
        let logger = logger, address = address
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                var bound = address
                bound.port = channel.localAddress?.port ?? address.port
                logger.info("HTTP listener up: /metrics, /healthz, /readyz", metadata: ["http.address": "\(bound)"])
            },
            logger: logger)
        return app
    }

    /// 200 "ok" without problems, else 503 with one problem a line.
    static func answer(_ problems: [String]) -> Response {
        let text = problems.isEmpty ? "ok\n" : problems.joined(separator: "\n") + "\n"
        return Response(status: problems.isEmpty ? .ok : .serviceUnavailable,
                        headers: [.contentType: "text/plain; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
