/// Reads of pushq.due along due_order, built on ``ClaimStatement/dueLanes`` by statements other
/// than the claim: the oldest due entry (`pushq status`, the lane gauges), the entries due
/// since a time (`pushq status`) and the next entry to come due (a drained worker's wait).
extension ClaimStatement {
    /// The due time of the oldest due entry of pushq.due (NULL when none is due): the least of
    /// each lane's first entry along due_order. Needs ``dueLanes``' `waiting` in the statement.
    static let oldestDueAtSQL = """
        (SELECT min((SELECT d.due_at FROM pushq.due d WHERE d.lane = w.lane AND d.due_at <= now() ORDER BY d.due_at LIMIT 1))
           FROM waiting w WHERE w.lane IS NOT NULL)
        """

    /// The due time of the earliest entry of pushq.due due strictly after now() (NULL when none
    /// is): the least of each lane's first entry after now() along due_order, one index descent
    /// per lane. Entries already due are left out: one this worker cannot claim (another
    /// credential's) must not make a drained worker wake at once, again and again. Needs
    /// ``dueLanes``' `waiting` in the statement.
    static let nextDueAtSQL = """
        (SELECT min((SELECT d.due_at FROM pushq.due d WHERE d.lane = w.lane AND d.due_at > now() ORDER BY d.due_at LIMIT 1))
           FROM waiting w
          WHERE w.lane IS NOT NULL
            -- A paused lane's entries wake nobody (the claim skips its rows).
            AND NOT \(lanePausedSQL("w.lane")))
        """

    /// The ids of the entries of pushq.due due after `since` (an SQL expression), lane by lane
    /// (a range of due_order each), as an array for a probe by primary key. Needs ``dueLanes``'
    /// `waiting` in the statement.
    static func dueSinceSQL(_ since: String) -> String {
        """
        ARRAY(SELECT e.id FROM waiting w
               CROSS JOIN LATERAL (SELECT d.id FROM pushq.due d WHERE d.lane = w.lane AND d.due_at > \(since)) e
               WHERE w.lane IS NOT NULL)
        """
    }
}
