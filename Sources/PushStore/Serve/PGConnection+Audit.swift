import PGClient
/// One row for `pushq.audit_log`: who changed what, on which rows.
public struct AuditEntry: Sendable, Equatable {
    /// The key's name (API, dashboard), or the operating-system user (`pushq api-key`).
    public var actor: String
    /// The key's id, nil for the command line.
    public var keyID: Int64?
    /// `notification.cancel`, `lane.pause`...: `noun.verb`, lower case.
    public var action: String
    /// Which rows: `notification 1042`, `lane marketing`.
    public var target: String
    /// How many rows it changed.
    public var rows: Int
    /// `api`, `dashboard` or `cli`.
    public var via: String
    /// Anything else worth keeping, as a JSON object's text; nil for none.
    public var detailJSON: String?
    /// The client's address as `pushq serve` saw it (through its trusted proxies); nil for the
    /// command line.
    public var client: String?

    public init(actor: String, keyID: Int64?, action: String, target: String, rows: Int, via: String, detailJSON: String? = nil,
                client: String? = nil) {
        self.actor = actor
        self.keyID = keyID
        self.action = action
        self.target = target
        self.rows = rows
        self.via = via
        self.detailJSON = detailJSON
        self.client = client
    }
}

extension PGConnection {
    /// Appends `entry` to `pushq.audit_log`. Call it in the transaction of the change it records,
    /// so that the change and its record commit together.
    public func recordAudit(_ entry: AuditEntry) throws(PGError) {
        try query("""
            INSERT INTO pushq.audit_log (actor, key_id, action, target, rows, via, detail, client)
            VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
            """, [entry.actor, entry.keyID, entry.action, entry.target, entry.rows, entry.via, entry.detailJSON, entry.client])
    }
}
