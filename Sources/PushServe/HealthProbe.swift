import Logging
import PushStore

/// Whether the database answers, for `/healthz` and `/readyz`, on a connection of its own: a
/// probe never waits for a pool's slot, so requests that hold every slot (slow dashboard
/// searches, a burst of producers) do not make serve look dead.
///
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
    private var running: Task<Bool, Never>?
    private var lastGood = true

    public init(url: String, timeout: Duration = .seconds(2), logger: Logger) {
        self.url = url
        self.timeout = timeout
        self.logger = logger
    }

    /// True when the database answered `SELECT 1` within ``timeout``.
    public func check() async -> Bool {
        let task: Task<Bool, Never>
        if let running {
            task = running
        } else {
            task = Task { await self.run() }
            running = task
        }
        let limit = timeout
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask { await task.value }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? false
        }
    }

    private func run() async -> Bool {
        defer { running = nil }
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
