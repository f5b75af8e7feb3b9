import Logging
import PushStore
import PGClient

/// Whether the database answers, for `/healthz` and `/readyz`, on a connection of its own: a
/// probe never waits for a pool's slot, so requests that hold every slot (slow dashboard
/// searches, a burst of producers) do not make serve look dead.
///
/// Its connection is opened when serve starts (``open()``), not at the first probe: a database
/// whose connections were all taken meanwhile (serve's pools, other clients) still answers it.
/// One check runs at a time; probes that arrive meanwhile share its result. A probe waits at
/// most ``timeout`` for it (the check itself goes on, and the next probe joins it). What went
/// wrong (libpq's message, with host, user and reason) is logged, never answered: a probe needs
/// no key.
public actor HealthProbe {
    private let url: String
    private let logger: Logger
    /// How long a probe waits for the database's answer. Defaults to 2 s.
    public nonisolated let timeout: Duration
    private var connection: PGConnection?
    private var running: Task<Void, Never>?
    /// Probes waiting for the check in progress, by number.
    private var waiting: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    private var nextProbe: UInt64 = 0
    private var lastGood = true

    public init(url: String, timeout: Duration = .seconds(2), logger: Logger) {
        self.url = url
        self.timeout = timeout
        self.logger = logger
    }

    /// Opens the probe's connection now (serve's start). A failure is logged; the first probe
    /// then tries again.
    public func open() async {
        guard connection == nil else { return }
        do {
            let c = try await PGConnection.connect(url, logger: logger, statementTimeout: timeout)
            // A probe may have opened one meanwhile (the actor lets it run during the connect).
            if connection == nil { connection = c } else { await c.close() }
        } catch {
            logger.error("the database does not answer the health check", metadata: ["error": "\(error)"])
            lastGood = false
        }
    }

    /// True when the database answered `SELECT 1` within ``timeout``.
    public func check() async -> Bool {
        nextProbe += 1
        let id = nextProbe
        if running == nil {
            running = Task { self.finish(await self.run()) }
        }
        let limit = timeout
        return await withCheckedContinuation { continuation in
            waiting[id] = continuation
            Task {
                try? await Task.sleep(for: limit)
                self.expire(id)
            }
        }
    }

    /// The check ended: every probe waiting gets its result.
    private func finish(_ good: Bool) {
        running = nil
        for continuation in waiting.values { continuation.resume(returning: good) }
        waiting.removeAll()
    }

    /// A probe's wait ran out: it answers no; the check goes on for the next probes.
    private func expire(_ id: UInt64) {
        waiting.removeValue(forKey: id)?.resume(returning: false)
    }

    private func run() async -> Bool {
        do {
            let c: PGConnection
            if let connection {
                c = connection
            } else {
                c = try await PGConnection.connect(url, logger: logger, statementTimeout: timeout)
                connection = c
            }
            _ = try await c.query("SELECT 1")
            if !lastGood { logger.notice("the database answers the health check again") }
            lastGood = true
            return true
        } catch {
            if let connection { await connection.close() }
            connection = nil
            // The detail goes to the log only: libpq's words name hosts, users and reasons.
            logger.log(level: lastGood ? .error : .debug, "the database does not answer the health check",
                       metadata: ["error": "\(error)"])
            lastGood = false
            return false
        }
    }

    /// Closes the probe's connection (at shutdown).
    public func close() async {
        await connection?.close()
        connection = nil
    }
}
