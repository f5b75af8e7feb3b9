extension PGConnection {
    /// Runs `body` inside `BEGIN` ... `COMMIT` on this connection, rolling back if it throws.
    ///
    /// `body` runs isolated to the connection, so it may call the connection's methods
    /// synchronously; nothing else runs on the connection meanwhile.
    @discardableResult
    public func transaction<T: Sendable>(_ body: @Sendable (isolated PGConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if inTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }
}
