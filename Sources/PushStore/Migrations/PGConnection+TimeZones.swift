import Logging
import PGClient

extension PGConnection {
    /// The migration that made `pushq.time_zones` and `pushq.refresh_time_zones()`.
    static let timeZonesMigration = 106

    /// Copies the server's zone names into `pushq.time_zones` again (`pushq.refresh_time_zones()`):
    /// after a PostgreSQL or tzdata upgrade the server may list names it did not, or no longer list
    /// some. `pushq migrate` calls it on every run once migration 106 is in; nothing when it is not.
    ///
    /// Names removed are logged as a warning: rows and devices that carry one keep it, and
    /// `AT TIME ZONE` would refuse it.
    /// - Returns: how many names were added, and the names removed.
    @discardableResult
    public func refreshTimeZones(logger: Logger) throws(PGError) -> (added: Int, removed: [String]) {
        guard try query("SELECT to_regproc('pushq.refresh_time_zones') IS NOT NULL AS present").firstRow().decode(Bool.self, "present") else {
            return (0, [])
        }
        let row = try query("""
            SELECT (r->>'added')::int AS added, array_to_string(ARRAY(SELECT jsonb_array_elements_text(r->'removed')), ' ') AS removed
              FROM pushq.refresh_time_zones() r
            """).firstRow()
        let added = try row.decode(Int.self, "added")
        let removed = (try row.string("removed") ?? "").split(separator: " ").map(String.init)
        if added > 0 {
            logger.notice("time zone names added to pushq.time_zones", metadata: ["time_zones.added": "\(added)"])
        }
        if !removed.isEmpty {
            logger.warning("time zone names the server no longer knows were removed from pushq.time_zones; rows and devices that carry one keep it", metadata: [
                "time_zones.removed": "\(removed.joined(separator: ", "))",
            ])
        }
        return (added, removed)
    }
}
