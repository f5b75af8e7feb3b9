extension PGConnection {
    /// Runs `body` inside `BEGIN` ... `COMMIT` on this connection, rolling back if it throws.
    ///
    /// `body` runs isolated to the connection, so it may call the connection's methods
    /// synchronously; nothing else runs on the connection meanwhile.
    ///
    /// - Parameters:
    ///   - begin: what opens the transaction: `BEGIN`, and any statements without parameters
    ///     that must run first in it (a lock).
    ///   - commit: what ends it: `COMMIT`, perhaps with a comment that names the transaction
    ///     in `pg_stat_activity`.
    @discardableResult
    public func transaction<T: Sendable>(begin: String = "BEGIN", commit: String = "COMMIT",
                                         _ body: @Sendable (isolated PGConnection) throws -> T) throws -> T {
        try execute(begin)
        do {
            let value = try body(self)
            try execute(commit)
            return value
        } catch {
            if inTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// ``transaction(begin:commit:_:)`` for a body that throws only ``PGError`` (as `execute`,
    /// `BEGIN` and `COMMIT` do), with the error typed: the claim and the release of rows.
    package func typedTransaction<T: Sendable>(begin: String, commit: String = "COMMIT",
                                       _ body: @Sendable (isolated PGConnection) throws(PGError) -> T) throws(PGError) -> T {
        do {
            return try transaction(begin: begin, commit: commit) { c in try body(c) }
        } catch let error as PGError {
            throw error
        } catch {
            throw PGError(code: .invalidValue, message: "transaction: \(error)")  // the body and execute throw PGError only
        }
    }
}
