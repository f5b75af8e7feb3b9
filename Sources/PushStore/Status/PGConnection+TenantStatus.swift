import PGClient

/// A tenant of a lane with due rows (issue 48, item 5): what the dashboard's "Tenants" shows.
public struct TenantDue: Sendable, Equatable {
    public var lane: String
    /// `pushq.notifications.tenant`; nil: rows without one (one tenant of its own).
    public var tenant: String?
    /// Its due rows, counted up to ``PGConnection/tenantCountLimit`` (``atLeast``: that many or more).
    public var dueRows: Int
    public var atLeast: Bool

    /// Tenants shown per lane, those with the most due rows.
    public static let shownPerLane = 5

    public init(lane: String, tenant: String?, dueRows: Int, atLeast: Bool) {
        self.lane = lane
        self.tenant = tenant
        self.dueRows = dueRows
        self.atLeast = atLeast
    }
}

extension PGConnection {
    /// Due rows counted per tenant, at most (more shows as "10000+").
    public static let tenantCountLimit = 10_000
    /// Tenants of a lane looked at, at most (in name order, and the rows without one).
    public static let tenantScanLimit = 200

    /// For each lane whose due entries have a tenant, the ``TenantDue/shownPerLane`` tenants with the most
    /// due rows, most first. Bounded and index-backed: one probe of `due_tenant` per lane, then a
    /// loose scan of its tenants (at most ``tenantScanLimit``), each tenant's due entries counted
    /// in `due_tenant` up to ``tenantCountLimit``.
    public func topTenants() throws(PGError) -> [TenantDue] {
        let r = try query(Self.topTenantsSQL, [Self.tenantScanLimit, Self.tenantCountLimit, TenantDue.shownPerLane])
        return try r.rows.map { row throws(PGError) in
            let n = try row.decode(Int?.self, "due_rows") ?? 0
            return TenantDue(lane: try row.string("lane") ?? "", tenant: try row.string("tenant"), dueRows: min(n, Self.tenantCountLimit),
                             atLeast: n > Self.tenantCountLimit)
        }
    }

    static let topTenantsSQL = ClaimStatement.dueLanes + """
        , counted AS (
            SELECT w.lane, t.tenant,
                   (SELECT count(*) FROM (SELECT 1 FROM pushq.due d
                                           WHERE d.lane = w.lane AND d.tenant IS NOT DISTINCT FROM t.tenant AND t.tenant IS NOT NULL
                                             AND d.due_at <= now() LIMIT $2::int + 1) x)
                   + (SELECT count(*) FROM (SELECT 1 FROM pushq.due d
                                           WHERE d.lane = w.lane AND d.tenant IS NULL AND t.tenant IS NULL
                                             AND d.due_at <= now() LIMIT $2::int + 1) x) AS due_rows
              FROM waiting w
             CROSS JOIN LATERAL (
                   WITH RECURSIVE tenants(tenant) AS (
                       (SELECT d.tenant FROM pushq.due d WHERE d.lane = w.lane AND d.tenant IS NOT NULL ORDER BY d.tenant LIMIT 1)
                       UNION ALL
                       SELECT (SELECT d.tenant FROM pushq.due d WHERE d.lane = w.lane AND d.tenant > u.tenant ORDER BY d.tenant LIMIT 1)
                         FROM tenants u
                        WHERE u.tenant IS NOT NULL
                   )
                   (SELECT u.tenant FROM tenants u WHERE u.tenant IS NOT NULL LIMIT $1::int)
                   UNION ALL
                   SELECT NULL::text) t
             WHERE w.lane IS NOT NULL
               AND EXISTS (SELECT 1 FROM pushq.due d WHERE d.lane = w.lane AND d.tenant IS NOT NULL ORDER BY d.lane, d.tenant OFFSET 0 LIMIT 1)
        )
        SELECT lane, tenant, due_rows FROM (
            SELECT c.*, row_number() OVER (PARTITION BY c.lane ORDER BY c.due_rows DESC, c.tenant NULLS LAST) AS place
              FROM counted c WHERE c.due_rows > 0) p
         WHERE p.place <= $3::int
         ORDER BY lane, place
        """
}
