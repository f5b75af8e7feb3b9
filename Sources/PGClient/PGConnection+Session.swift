import CLibPQ
import Foundation

extension PGConnection {
    /// Session settings every connection needs, after each (re)connect: non-blocking
    /// mode, time zone and date styles, JIT compilation off, `statementTimeout` (also as the
    /// idle-in-transaction timeout), and the `LISTEN`s.
    ///
    /// JIT: pushq's statements take milliseconds, and PostgreSQL compiles a statement whose
    /// estimated cost passes `jit_above_cost`, whatever it then takes to run: a claim planned
    /// for a large table spent 0.1–2.6 s compiling to claim 250 rows in 10 ms
    /// (docs/performance.md, "A capped credential read the whole table").
    func prepareSession() throws(PGError) {
        guard let conn else { throw PGError(code: .closed, message: "the connection is closed") }
        prepared.removeAll()  // a new session has none
        // Notices (e.g. "already exists, skipping") would go to stderr otherwise.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        // Sending must not block either, or a full socket buffer would outlast the deadline.
        // A reset puts libpq back in blocking mode, so this is done after each connect.
        guard PQsetnonblocking(conn, 1) == 0 else {
            throw PGError(code: .connectionLost, message: "could not make the connection non-blocking: " + libpqMessage(conn))
        }
        try execute("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'iso_8601'; SET jit = off")
        if let statementTimeout {
            // The same bound on a transaction left idle: a client cut off between a statement and
            // its COMMIT must not leave rows locked (SKIP LOCKED would pass them over) until the
            // server's TCP keepalive notices, hours later by default.
            try query("SELECT set_config('statement_timeout', $1, false), set_config('idle_in_transaction_session_timeout', $1, false)",
                      ["\(statementTimeout.roundedUpMilliseconds)ms"])
        }
        for channel in listening { try execute("LISTEN " + quoteIdentifier(channel)) }
    }

    /// Gives up this session: the next call reconnects (with libpq's `PQreset`, which tries
    /// the URL's hosts in order again). For a session that cannot do its work, e.g. one on a
    /// read-only server (SQLSTATE 25006) when the URL lists the primary too.
    public func dropSession() {
        mustReconnect = true
    }

    /// The connection, reconnected first if the server went away since the last call or
    /// a statement was given up on.
    ///
    /// A server that restarted or closed the session leaves a message or EOF on the
    /// socket; reading it here, before sending, tells a dead session from a live one
    /// without risking a statement being run twice.
    func liveConnection() throws(PGError) -> OpaquePointer {
        guard let c = conn else { throw PGError(code: .closed, message: "the connection is closed") }
        if !mustReconnect, PQstatus(c) == CONNECTION_OK, PQtransactionStatus(c) == PQTRANS_IDLE {
            // A server that went away left its FATAL message and then EOF: read until the
            // socket has nothing more (one read may take the message but not yet see the EOF).
            var pfd = pollfd(fd: PQsocket(c), events: Int16(POLLIN), revents: 0)
            var reads = 0
            while reads < 8, PQstatus(c) == CONNECTION_OK, poll(&pfd, 1, 0) > 0 {
                if PQconsumeInput(c) == 0 { break }
                reads += 1
            }
        }
        if mustReconnect || PQstatus(c) != CONNECTION_OK {
            logger.warning("PostgreSQL connection lost; reconnecting")
            mustReconnect = false
            // Bounded by connect_timeout, which the PGconn keeps from the first connect.
            PQreset(c)
            guard PQstatus(c) == CONNECTION_OK else {
                throw PGError(code: .connectionLost, message: "reconnect failed: " + libpqMessage(c))
            }
            do {
                try prepareSession()
            } catch {
                // A session without its settings or LISTENs must not be used: try again next call.
                mustReconnect = true
                throw error
            }
            logger.info("PostgreSQL connection re-established")
        }
        return c
    }
}
