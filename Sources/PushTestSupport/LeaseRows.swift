import PushStore
import PGClient

extension PGConnection {
    /// Gives a row of pushq.leases to each row a test left `sending` without one (an UPDATE or
    /// INSERT standing for a worker that claimed it and died), one per worker and lease end:
    /// what a claim writes, and what schema 40 does for the rows of workers before schema 35.
    /// Runs schema 40's own statement.
    public func giveLeaseRows() throws {
        guard let migration = Migration.all.first(where: { $0.version == 40 }) else { return }
        try execute(migration.sql)
    }
}
