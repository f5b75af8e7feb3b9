import PGClient

/// pushq.recipient_sends (migration 112): the reservations of frequency caps per recipient. The
/// claim inserts one per row of a capped lane that goes out (``ClaimStatement``'s `reserved`);
/// the write-back and the give-back delete those of rows that end other than sent
/// (``unreserveSQL(from:)``); the upkeep prunes those no window reaches any more.
extension PGConnection {
    /// Deletes up to `limit` reservations older than the longest `recipient_window` of any lane
    /// and ``pruneMargin`` (with no cap on any lane, all older than the margin); returns how many.
    ///
    /// The margin: a claim counts from its own `now()`, its transaction's start, which it takes
    /// before it waits for the claim lock (claimBegin); a prune that commits during that wait, by
    /// a later `now()`, must not delete a reservation that the claim's window still reaches.
    /// Claims hold the lock for milliseconds; five minutes is far beyond any wait for it.
    ///
    /// Through BRIN `recipient_sends_sent_at` (reservations arrive nearly in `sent_at` order: claims
    /// take turns), the rows' ctids collected first and deleted by a Tid Scan. A lane's
    /// reservations older than its own window but within a longer one stay until then: the claim's
    /// probe starts at `now() - window` and never reads them.
    public func pruneRecipientSends(limit: Int) throws(PGError) -> Int {
        try query(Self.pruneRecipientSendsSQL, [limit]).affectedRows
    }

    /// How much longer than the longest window the prune keeps reservations (``pruneRecipientSends(limit:)``).
    static let pruneMargin = "5 minutes"

    static let pruneRecipientSendsSQL = """
        DELETE FROM pushq.recipient_sends s
         WHERE s.ctid = ANY (ARRAY(
               SELECT e.ctid FROM pushq.recipient_sends e
                WHERE e.sent_at < now() - interval '\(pruneMargin)'
                                        - COALESCE((SELECT max(k.recipient_window) FROM pushq.lanes l
                                                     CROSS JOIN LATERAL pushq.lane_caps(l.name) k), interval '0')
                LIMIT $1))
        """

    /// The step of a fenced write-back that frees the reservation of each row in `rows` (a CTE
    /// with `id`, `lane`, `user_ref`, `provider`, `device_token` and `status`) that did not end
    /// `sent`: a row never delivered does not count against its recipient's cap.
    ///
    /// Only the row's newest reservation, its last claim's: a lapsed lease claimed again has its
    /// first claim's too, which stays (its first worker may have sent it), also when the re-send
    /// fails or is given back.
    ///
    /// One probe of the primary key per row collects the ctid (the lateral's LIMIT keeps it a
    /// probe: the write-back runs with nested loops off, under which a join of recipient_sends
    /// became a hash join that read it whole), deleted by a Tid Scan. A row that never had a
    /// reservation (an uncapped lane, a broadcast) costs its probe alone.
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
                       ORDER BY e.sent_at DESC LIMIT 1) e
                WHERE d.status <> 'sent'))
        """
    }
}
