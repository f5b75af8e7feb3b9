import PushStore
import PGClient

extension PGConnection {
    /// Gives a row of pushq.leases to each row a test left `sending` without one (an UPDATE or
    /// INSERT standing for a worker that claimed it and died), one per worker and lease end:
    /// what a claim writes, and what the release's gated part 4 does for the rows of 0.3.0 workers.
    /// Runs that part's own statement.
    public func giveLeaseRows() throws {
        guard let migration = Migration.all.first(where: { $0.version == SchemaHistory.releaseVersions[3] }),
              let start = migration.sql.range(of: "INSERT INTO pushq.leases"),
              let end = migration.sql[start.lowerBound...].firstIndex(of: ";") else { return }
        try execute(String(migration.sql[start.lowerBound...end]))
    }
}
