import PGClient

/// pushq.recipient_sends (migration 112): the reservations of frequency caps per recipient. The
/// claim inserts one per row of a capped lane that goes out (``ClaimStatement``'s `reserved`);
/// the write-back and the give-back delete those of rows that end other than sent
/// (``unreserveSQL(from:)``); the upkeep prunes those no window reaches any more.
extension PGConnection {
    /// Deletes up to `limit` reservations older than the longest `recipient_window` of any lane
    /// (all of them when no lane has a cap); returns how many.
    ///
    /// Through BRIN `recipient_sends_sent_at` (reservations arrive nearly in `sent_at` order: claims
    /// take turns), the rows' ctids collected first and deleted by a Tid Scan. A lane's
    /// reservations older than its own window but within a longer one stay until then: the claim's
    /// probe starts at `now() - window` and never reads them.
    public func pruneRecipientSends(limit: Int) throws(PGError) -> Int {
        try query(Self.pruneRecipientSendsSQL, [limit]).affectedRows
    }

    static let pruneRecipientSendsSQL = """
        DELETE FROM pushq.recipient_sends s
         WHERE s.ctid = ANY (ARRAY(
               SELECT e.ctid FROM pushq.recipient_sends e
                WHERE e.sent_at < now() - COALESCE((SELECT max(k.recipient_window) FROM pushq.lanes l
                                                     CROSS JOIN LATERAL pushq.lane_caps(l.name) k), interval '0')
                LIMIT $1))
        """

    /// The step of a fenced write-back that frees the reservations of the rows in `rows` (a CTE
    /// with `id`, `lane`, `user_ref`, `provider`, `device_token` and `status`) that did not end
    /// `sent`: a row never delivered does not count against its recipient's cap.
    ///
    /// One probe of the primary key per row collects the ctids (OFFSET 0 keeps the lateral a probe:
    /// the write-back runs with nested loops off, under which a join of recipient_sends became a
    /// hash join that read it whole), deleted by a Tid Scan. A row that never had a reservation (an
    /// uncapped lane, a broadcast) costs its probe alone.
    static func unreserveSQL(from rows: String) -> String {
        """
        DELETE FROM pushq.recipient_sends s
         WHERE s.ctid = ANY (ARRAY(
               SELECT e.ctid
                 FROM \(rows) d
                CROSS JOIN LATERAL (
                      SELECT e.ctid FROM pushq.recipient_sends e
                       WHERE e.lane = d.lane AND e.recipient = pushq.recipient_key(d.user_ref, d.provider, d.device_token)
                         AND e.id = d.id
                      OFFSET 0) e
                WHERE d.status <> 'sent'))
        """
    }
}
