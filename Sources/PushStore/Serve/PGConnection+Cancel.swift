import PGClient
/// What cancelling one notification did.
public enum CancelOutcome: Sendable, Equatable {
    /// The row was `queued` or `retrying` and is `cancelled` now.
    case cancelled
    /// The row is in this status, which cannot be cancelled (`sending`: on the wire; or final).
    case notCancellable(status: String)
    /// No row has this id.
    case notFound
}

extension PGConnection {
    /// How long serve's writes wait for a row lock before giving up (SQLSTATE 55P03): a row a
    /// worker is claiming at that instant is the worker's, and nothing of serve's queues behind it.
    static let serveLockTimeout = "2s"

    /// Cancels notification `id` if it is `queued` or `retrying` (the producer's cancel,
    /// docs/producers.md), recording `audit` (its `rows` set to 1) in the same transaction.
    public func cancelNotification(id: Int64, audit: AuditEntry) throws -> CancelOutcome {
        try transaction { c in
            try c.query("SELECT set_config('lock_timeout', $1, true)", [Self.serveLockTimeout])
            let r = try c.query(Self.cancelSQL, [id])
            if r.count == 1 {
                var entry = audit
                entry.rows = 1
                try c.recordAudit(entry)
                return .cancelled
            }
            let status = try c.query(Self.statusByIDSQL, [id])
            guard status.count == 1 else { return .notFound }
            return .notCancellable(status: try status.firstRow().decode(String.self, "status"))
        }
    }

    /// Every column of notification `id` as one JSON object (`row_to_json`: the payload and
    /// metadata as JSON, times in ISO 8601; `webpush_keys` without its auth secret,
    /// ``rowJSONWithoutAuthSecret(_:)``), nil when there is no such row.
    public func notificationJSON(id: Int64) throws(PGError) -> String? {
        let r = try query(Self.notificationJSONSQL, [id])
        return r.count == 1 ? try r.firstRow().string("notification") : nil
    }

    /// Ends `cancelled` rows this worker claimed but never started, whose lane was cancelled
    /// from the dashboard while they waited in its sender (``cancelLane(_:audit:)`` notifies the
    /// workers): fenced on each row's claim like ``release(_:workerID:)``, attempt refunded (the
    /// row was never sent), lease dropped, and its claim's frequency-cap reservation freed
    /// (``unreserveSQL(from:)``). A row no longer held under that claim is left alone.
    ///
    /// The other ends of a claimed row: the write-back and the give-back free the reservation of
    /// a row not sent too; the producer's cancel (``cancelNotification(id:audit:)``) and a lane's
    /// (``cancelLane(_:audit:)``) take only waiting rows, which hold none (a retrying row's went
    /// with its write-back, a deferred row never had one); a lapsed lease ended by the claim or
    /// the expiry sweep (expired, attempts used up) keeps its reservations: its worker may have
    /// sent it before it lost its lease; so does a row ended by ``endWriteBackError(_:workerID:)``
    /// (its request was made and answered: it may have been delivered).
    ///
    /// - Returns: the rows it ended.
    @discardableResult
    public func endCancelled(_ rows: [RowClaim], workerID: String) throws(PGError) -> Int {
        guard !rows.isEmpty else { return 0 }
        return try typedTransaction(begin: Self.fencedUpdateBegin) { c throws(PGError) in try c.query("""
            WITH ended AS (
            UPDATE pushq.notifications n
               SET status = 'cancelled', finished_at = now(),
                   attempts = n.attempts - 1, locked_by = NULL, locked_until = NULL
              FROM unnest($1::bigint[], $2::integer[], $4::bigint[]) AS u(id, attempt, lease)
             WHERE n.id = u.id AND n.id = ANY ($1::bigint[]) AND n.status = 'sending' AND n.locked_by = $3 AND n.attempts = u.attempt
               AND (extract(epoch FROM n.locked_until) * 1000000)::bigint = u.lease
            RETURNING n.id, n.status, n.lane, n.user_ref, n.provider, n.device_token
            ), unreserved AS (
            \(Self.unreserveSQL(from: "ended"))
            )
            SELECT count(*)::int AS ended FROM ended
            """, [rows.map(\.id), rows.map(\.attempt), workerID, rows.map(\.lease)]).firstRow().decode(Int?.self, "ended") ?? 0 }
    }

    /// The producer's cancel, through the primary key.
    static let cancelSQL = """
        UPDATE pushq.notifications SET status = 'cancelled', finished_at = now()
         WHERE id = $1 AND status IN ('queued', 'retrying') RETURNING id
        """
    static let statusByIDSQL = "SELECT status FROM pushq.notifications WHERE id = $1"
    static let notificationJSONSQL = "SELECT \(rowJSONWithoutAuthSecret("n"))::text AS notification FROM pushq.notifications n WHERE n.id = $1"
}
