import CLibPQ

extension PGConnection {
    /// The process id of the server backend that runs this session's statements now
    /// (`pg_backend_pid()`). Behind a pooler it differs from ``backendPID``, the id the
    /// pooler reported at connect time.
    public func serverBackendPID() throws(PGError) -> Int32 {
        Int32(try query("SELECT pg_backend_pid() AS pid").firstRow().decode(Int?.self, "pid") ?? 0)
    }

    /// Checks that two connections to the same URL each keep a server session of their own,
    /// as a worker needs: its session settings (`statement_timeout`), session advisory locks
    /// and `LISTEN` belong to the session. A pooler in transaction or statement mode (PgBouncer
    /// `pool_mode=transaction`) hands each transaction to any server connection, so those
    /// settings reach other clients and the locks and `LISTEN`s mean nothing.
    ///
    /// Straight to PostgreSQL, `pg_backend_pid()` is the process id libpq got at connect time,
    /// and nothing more is asked. Otherwise (a pooler or proxy) `other` holds a transaction
    /// open while `connection` asks `pg_backend_pid()` again: with a session each, `other`
    /// cannot be on `connection`'s backend, and `connection` stays on its own; a pooler that
    /// shares backends between transactions gives `other` the backend `connection` just
    /// released, or moves `connection` to another, or refuses the transaction block
    /// (statement mode).
    ///
    /// - Throws: ``PGError`` `.sessionNotKept` naming the problem and the fix; any other
    ///   error of the statements.
    public static func checkSessionsKept(_ connection: PGConnection, _ other: PGConnection) async throws(PGError) {
        let first = try await connection.serverBackendPID()
        if first == (await connection.backendPID) { return }
        do {
            try await other.execute("BEGIN")
        } catch {
            guard error.code == .server else { throw error }
            throw PGError(code: .sessionNotKept, message: sessionNotKeptMessage + " (the pooler refused a transaction block: \(error.message))")
        }
        let held = try await other.serverBackendPID()
        let again = try await connection.serverBackendPID()
        try await other.execute("ROLLBACK")
        if held == first || again != first {
            throw PGError(code: .sessionNotKept, message: sessionNotKeptMessage)
        }
    }

    static let sessionNotKeptMessage = "PUSHQ_DATABASE_URL leads to a connection pooler that does not keep a session per client "
        + "(PgBouncer pool_mode=transaction or statement, or a proxy like it): a worker's statement_timeout, advisory locks and "
        + "LISTEN need a session of their own; point workers at PostgreSQL directly or at a session-mode pool (PgBouncer "
        + "pool_mode=session); producers may keep inserting through the transaction pool"
}
