import PushCore
import PGClient

extension PGConnection {
    /// Retires up to `limit` valid `live_activity` tokens registered more than `seconds` ago
    /// (`invalid_reason` `AgeLimit`), oldest index entries first, in one statement (one short
    /// transaction). Tokens locked by another session are skipped.
    ///
    /// Walks the `live_activity` part of `devices_activity_key`, which holds valid
    /// tokens only, reading `registered_at` in the index: the tokens of the last
    /// ``LiveActivityLimits/tokenLifetimeSeconds`` and those past it, no retired one.
    ///
    /// - Returns: the tokens retired.
    public func retireAgedActivityTokens(olderThan seconds: Double, limit: Int) throws(PGError) -> Int {
        try query("""
            UPDATE pushq.devices d
               SET invalidated_at = clock_timestamp(), invalid_reason = 'AgeLimit'
              FROM (SELECT device_token, environment, provider FROM pushq.devices
                     WHERE kind = 'live_activity'
                       AND invalidated_at IS NULL
                       AND registered_at < now() - $1 * interval '1 second'
                     LIMIT $2
                       FOR UPDATE SKIP LOCKED) o
             WHERE d.device_token = o.device_token AND d.environment = o.environment AND d.provider = o.provider
            """, [seconds, limit]).affectedRows
    }
}
