/// Send-time expiry by the database's clock.
///
/// A row's `expires_at` is the database's time. The sender checks it when a stream comes free,
/// on the host; comparing it with the host's clock alone would expire rows early on a host
/// whose clock runs ahead (and send late on one behind). So the worker learns the database
/// clock's offset from the host's (``offset(hostBeforeMilliseconds:databaseMilliseconds:hostAfterMilliseconds:)``)
/// and the sender judges with the host's time corrected by it. Pure: the caller passes the times.
public enum SendTimeExpiry {
    /// Whether `expiration` (UNIX seconds by the database's clock; nil or 0: none) has passed at
    /// `hostNow` (UNIX seconds by the host's clock), the database's clock being `databaseOffset`
    /// seconds ahead of the host's (negative: behind).
    public static func hasPassed(expiration: Int64?, hostNow: Int64, databaseOffset: Int64) -> Bool {
        guard let expiration, expiration > 0 else { return false }
        let (databaseNow, overflow) = hostNow.addingReportingOverflow(databaseOffset)
        if overflow { return databaseOffset > 0 }
        return expiration <= databaseNow
    }

    /// The database clock's offset from the host's, in whole seconds (rounded to the nearest),
    /// from one reading: the host's clock just before and just after a query that read the
    /// database's `clock_timestamp()` (all in milliseconds). The reading is taken as the
    /// midpoint of the round trip, so the error is at most half of it.
    public static func offset(hostBeforeMilliseconds before: Int64, databaseMilliseconds database: Int64,
                              hostAfterMilliseconds after: Int64) -> Int64 {
        let midpoint = before / 2 + after / 2 + (before % 2 + after % 2) / 2
        let (difference, overflow) = database.subtractingReportingOverflow(midpoint)
        if overflow { return database > midpoint ? .max / 1000 : .min / 1000 }
        let rounded = difference >= 0 ? (difference + 500) / 1000 : -((-difference + 500) / 1000)
        return rounded
    }
}
