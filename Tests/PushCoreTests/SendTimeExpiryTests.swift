import PushCore
import Testing

@Suite struct SendTimeExpiryTests {
    typealias Expiry = (expiration: Int64?, host: Int64, offset: Int64, passed: Bool)
    static let expiries: [Expiry] = [
        (expiration: nil, host: 1000, offset: 0, passed: false),
        (expiration: 0, host: 1000, offset: 0, passed: false),                     // APNs' "do not store"
        (expiration: 1000, host: 1000, offset: 0, passed: true),
        (expiration: 1001, host: 1000, offset: 0, passed: false),
        (expiration: 940, host: 1000, offset: -3600, passed: false),               // host 1 h ahead: not yet expired
        (expiration: 10_000 - 3600, host: 10_000, offset: -3600, passed: true),
        (expiration: 1060, host: 1000, offset: 3600, passed: true),                // host 1 h behind: expired
        (expiration: Int64.max, host: Int64.max, offset: 1, passed: true),         // overflow forward
        (expiration: 5, host: Int64.min, offset: -1, passed: false),               // overflow back
    ]

    @Test("expired at send time by the database's clock: host time plus the database's offset", arguments: expiries)
    func hasPassed(_ c: Expiry) {
        #expect(SendTimeExpiry.hasPassed(expiration: c.expiration, hostNow: c.host, databaseOffset: c.offset) == c.passed)
    }

    typealias Reading = (before: Int64, database: Int64, after: Int64, offset: Int64)
    static let readings: [Reading] = [
        (before: 1_000_000, database: 1_000_010, after: 1_000_020, offset: 0),
        (before: 1_000_000, database: 1_000_000 - 3_600_000, after: 1_000_100, offset: -3600),
        (before: 1_000_000, database: 1_002_551, after: 1_000_100, offset: 3),
        (before: 1_000_000, database: 1_002_549, after: 1_000_100, offset: 2),
        (before: 1_000_000, database: 998_449, after: 1_000_100, offset: -2),
        (before: 1_000_001, database: 1_000_001, after: 1_000_002, offset: 0),
    ]

    @Test("the offset: database minus the round trip's midpoint, rounded to whole seconds", arguments: readings)
    func offset(_ c: Reading) {
        #expect(SendTimeExpiry.offset(hostBeforeMilliseconds: c.before, databaseMilliseconds: c.database,
                                      hostAfterMilliseconds: c.after) == c.offset)
    }
}
