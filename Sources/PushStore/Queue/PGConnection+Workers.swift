import Foundation
import PushCore
import PGClient

/// A credential a worker serves, as registered in `pushq.workers`.
public struct ServedCredential: Sendable, Hashable, Codable {
    public var name: String
    /// The worker's environment for rows whose `environment` is NULL.
    public var environment: String
    /// The credential's default topic, if any.
    public var topic: String?
    /// `fcm` for an FCM credential; nil for APNs (what workers before FCM registered).
    public var provider: String?

    public init(name: String, environment: String, topic: String?, provider: Provider = .apns) {
        self.name = name
        self.environment = environment
        self.topic = topic
        self.provider = provider == .apns ? nil : provider.rawValue
    }
}

/// A live worker, as `pushq status` shows it.
public struct WorkerRecord: Sendable {
    public var id: String
    public var host: String
    public var pid: Int
    public var version: String
    public var startedAt: Date
    /// Seconds since its last heartbeat.
    public var heartbeatAge: Double
    public var credentials: [ServedCredential]
    /// The highest schema version its release knows; nil for workers of 0.3.0, which do not
    /// register one.
    public var schemaKnown: Int? = nil
}

extension PGConnection {
    /// A worker whose heartbeat is older than this, in seconds, counts as gone.
    public static let workerLivenessSeconds = 30

    /// Registers (or re-registers) this worker in `pushq.workers`, heartbeat now, with the
    /// highest schema version this release knows (`schema_known`): a schema that drops
    /// what workers of earlier releases read waits until none of them is live.
    public func registerWorker(id: String, host: String, pid: Int, version: String, credentials: [ServedCredential]) throws {
        let json = String(decoding: try JSONEncoder().encode(credentials), as: UTF8.self)
        try query("""
            INSERT INTO pushq.workers (id, host, pid, version, credentials, schema_known) VALUES ($1, $2, $3, $4, $5::jsonb, $6)
            ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, version = EXCLUDED.version,
                   credentials = EXCLUDED.credentials, schema_known = EXCLUDED.schema_known,
                   started_at = now(), heartbeat_at = now()
            """, [id, host, pid, version, json, Migration.latestVersion])
    }

    /// Marks this worker alive now; re-registers it if its row is gone (pruned while it was cut off).
    ///
    /// - Returns: whether its row was still there.
    @discardableResult
    public func heartbeat(id: String) throws(PGError) -> Bool {
        try query("UPDATE pushq.workers SET heartbeat_at = now() WHERE id = $1", [id]).affectedRows == 1
    }

    /// The database's clock now (`clock_timestamp()`, not the transaction's start), in
    /// milliseconds since the epoch.
    public func clockMilliseconds() throws(PGError) -> Int64 {
        try query("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms").firstRow().decode(Int64?.self, "now_ms") ?? 0
    }

    /// Removes this worker (clean stop), and every worker whose heartbeat is long gone.
    public func unregisterWorker(id: String) throws(PGError) {
        try query("DELETE FROM pushq.workers WHERE id = $1 OR heartbeat_at < now() - interval '1 day'", [id])
    }

    /// Workers whose heartbeat is recent (``workerLivenessSeconds``), oldest first.
    public func liveWorkers() throws -> [WorkerRecord] {
        let r = try query("""
            SELECT id, host, pid, version, started_at, extract(epoch FROM now() - heartbeat_at)::float8 AS heartbeat_age, credentials::text AS credentials,
                   schema_known
              FROM pushq.workers WHERE heartbeat_at > now() - $1 * interval '1 second' ORDER BY started_at, id
            """, [Self.workerLivenessSeconds])
        var out: [WorkerRecord] = []
        for row in r.rows {
            let credentials = (try? JSONDecoder().decode([ServedCredential].self, from: Data((try row.string("credentials") ?? "[]").utf8))) ?? []
            out.append(WorkerRecord(id: try row.string("id") ?? "", host: try row.string("host") ?? "", pid: try row.decode(Int?.self, "pid") ?? 0,
                                    version: try row.string("version") ?? "", startedAt: try row.decode(Date?.self, "started_at") ?? Date(),
                                    heartbeatAge: try row.decode(Double?.self, "heartbeat_age") ?? 0, credentials: credentials,
                                    schemaKnown: try row.decode(Int?.self, "schema_known")))
        }
        return out
    }

    /// Rows waiting (`queued`/`retrying`) for a credential that no live worker serves, by credential:
    /// its name for APNs, its name and ` (fcm)` for FCM (credential names are per provider).
    public func rowsWithoutWorker() throws(PGError) -> [(credential: String, rows: Int)] {
        let r = try query(Self.rowsWithoutWorkerSQL, [Self.workerLivenessSeconds])
        var out: [(credential: String, rows: Int)] = []
        for row in r.rows { out.append((try row.string("credential") ?? "", try row.decode(Int?.self, "rows") ?? 0)) }
        return out
    }

    /// Waiting rows (through pushq.due, by primary key) of credentials no live worker serves;
    /// `$1` is the liveness in seconds.
    static let rowsWithoutWorkerSQL = """
            WITH served AS (
                SELECT DISTINCT c->>'name' AS name, COALESCE(c->>'provider', 'apns') AS provider
                  FROM pushq.workers w, jsonb_array_elements(w.credentials) c
                 WHERE w.heartbeat_at > now() - $1 * interval '1 second'
            )
            SELECT COALESCE(n.credential, 'default') || CASE WHEN n.provider = 'apns' THEN '' ELSE ' (' || n.provider || ')' END
                       AS credential, count(*) AS rows
              FROM pushq.notifications n
             WHERE n.id = ANY (ARRAY(SELECT d.id FROM pushq.due d))
               AND n.status IN ('queued', 'retrying')
               AND (n.provider, COALESCE(n.credential, 'default')) NOT IN (SELECT provider, name FROM served WHERE name IS NOT NULL)
             GROUP BY 1 ORDER BY 2 DESC, 1
            """

    /// Rows ``expireWaiting(limit:)`` ended, by credential, environment and `last_reason`.
    public struct ExpiredRows: Sendable, Equatable {
        /// `credential`, or `"default"`.
        public var credential: String
        /// `environment`, nil when the row has none (the worker's default); `fcm` for FCM rows (their channel).
        public var environment: String?
        /// `last_reason` (kept from an earlier attempt), nil when none.
        public var lastReason: String?
        public var rows: Int
    }

    /// Ends `expired` up to `limit` waiting rows whose `expires_at` has passed, whatever their
    /// credential or endpoint: rows no worker claims (a held endpoint, a credential no live
    /// worker has) still expire on time. Walks pushq.due's `due_expiry` index (schemas 36–39: each
    /// waiting row's entry carries its expiry), each row locked `SKIP LOCKED` and checked again.
    ///
    /// - Returns: the rows expired, grouped (for the metrics).
    @discardableResult
    public func expireWaiting(limit: Int) throws(PGError) -> [ExpiredRows] {
        let r = try query(Self.expireWaitingSQL, [limit])
        var out: [ExpiredRows] = []
        for row in r.rows {
            out.append(ExpiredRows(credential: try row.string("credential") ?? "default", environment: try row.string("environment"),
                                   lastReason: try row.string("last_reason"), rows: try row.decode(Int?.self, "rows") ?? 0))
        }
        return out
    }

    static let expireWaitingSQL = """
            WITH gone AS MATERIALIZED (
                -- Each entry's row checked and locked SKIP LOCKED in the walk (a sub-select with a
                -- lock is never made a join): entries whose row cannot expire now (gone, in flight,
                -- expiry moved) are passed over, not counted against the limit. A lapsed lease
                -- (`sending`, its lease over: the claim's own rule) expires too: a quiet lane's
                -- claim may have moved its entry to the window's end, with the row's expiry.
                SELECT d.id FROM pushq.due d
                 WHERE d.expires_at <= now()
                   AND EXISTS (SELECT 1 FROM pushq.notifications n
                                WHERE n.id = d.id AND n.expires_at <= now()
                                  AND (n.status IN ('queued', 'retrying') OR (n.status = 'sending' AND n.locked_until < now()))
                                  FOR UPDATE SKIP LOCKED)
                 ORDER BY d.expires_at
                 LIMIT $1
            ), dropped AS (
                -- A lapsed lease's entry: notifications_due_ended deletes only a waiting row's.
                DELETE FROM pushq.due d WHERE d.id = ANY (ARRAY(SELECT g.id FROM gone g))
            ), ended AS (
                -- As the claim ends an expired lapsed lease: lease cleared, a first lapse's attempt refunded.
                UPDATE pushq.notifications n SET status = 'expired', finished_at = now(), locked_by = NULL, locked_until = NULL,
                       attempts = n.attempts - CASE WHEN n.status = 'sending' AND n.last_reason IS DISTINCT FROM 'LeaseExpired' THEN 1 ELSE 0 END
                 WHERE n.id = ANY (ARRAY(SELECT g.id FROM gone g))
                RETURNING COALESCE(n.credential, 'default') AS credential,
                          CASE WHEN n.provider = 'fcm' THEN 'fcm' ELSE n.environment END AS environment, n.last_reason
            )
            SELECT credential, environment, last_reason, count(*) AS rows FROM ended GROUP BY 1, 2, 3
            """

    /// Deletes token throttles that have ended.
    public func deleteEndedThrottles() throws(PGError) {
        try query("DELETE FROM pushq.token_throttles WHERE until < now()")
    }
}
