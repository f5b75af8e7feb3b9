import CLibPQ
import Foundation

extension PGConnection {
    /// Sends a statement with `send` (`PQsendQuery` or `PQsendQueryParams`, which return 1
    /// on success) and collects its results, waiting at most the deadline for them.
    ///
    /// The connection is in libpq's non-blocking mode: sending, reading and waiting all go
    /// through `poll(2)` with the time left, so neither a server that never answers nor a
    /// socket buffer that never drains can hold the call longer. When the time is up, the
    /// session is given up on (`abandon`) and the call throws `.connectionLost`.
    ///
    /// Of several results (several statements in one simple-protocol string), the first
    /// error wins; otherwise the last result is returned, as `PQexec` does. Notifications
    /// that arrive meanwhile stay queued in libpq for `waitForNotifications`.
    func run(_ send: (OpaquePointer) -> Int32) throws(PGError) -> PGResult {
        let c = try liveConnection()
        guard send(c) == 1 else {
            let message = libpqMessage(c)
            if PQstatus(c) != CONNECTION_OK {
                throw PGError(code: .connectionLost, message: "could not send the statement: " + message)
            }
            throw PGError(code: .invalidValue, message: "libpq refused the statement: " + message)
        }
        let deadline = ContinuousClock.now + deadlineInForce
        var firstError: PGError?
        var last: PGResult?
        while true {
            // Parses what has arrived; PQgetResult does not block once PQisBusy says so.
            while PQisBusy(c) == 0 {
                guard let result = PQgetResult(c) else {
                    if var firstError {
                        if PQstatus(c) != CONNECTION_OK { firstError.code = .connectionLost }
                        throw firstError
                    }
                    guard let last else {
                        throw abandon(c, "the server sent no result: " + libpqMessage(c))
                    }
                    return last
                }
                switch PQresultStatus(result) {
                case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                    if firstError == nil { last = PGResult(result) } else { PQclear(result) }
                case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
                    // libpq would wait for COPY data forever; this type has no way to give it.
                    PQclear(result)
                    var error = abandon(c, "COPY is not supported by PGConnection; the session was closed")
                    error.code = .invalidValue
                    throw error
                default:
                    if firstError == nil { firstError = PGError(result: result, connection: c, lost: false) }
                    PQclear(result)
                }
            }
            try awaitInput(c, until: deadline)
        }
    }

    /// Sends what libpq still holds and waits for the socket to have input, until `deadline` at most.
    private func awaitInput(_ c: OpaquePointer, until deadline: ContinuousClock.Instant) throws(PGError) {
        let flushed = PQflush(c) // 0: all sent, 1: more to send, -1: failed
        guard flushed >= 0 else { throw abandon(c, "could not send the statement: " + libpqMessage(c)) }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else {
            throw abandon(c, "the server did not answer within \(deadlineInForce.secondsText); "
                          + "the connection was closed and the next call reconnects (the statement's outcome is unknown)")
        }
        let fd = PQsocket(c)
        guard fd >= 0 else { throw abandon(c, "the connection has no socket: " + libpqMessage(c)) }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN) | (flushed == 1 ? Int16(POLLOUT) : 0), revents: 0)
        let n = poll(&pfd, 1, remaining.pollMilliseconds)
        if n < 0 {
            let code = errno
            if code == EINTR { return }
            throw abandon(c, "poll(2) on the connection failed: " + String(cString: strerror(code)))
        }
        if pfd.revents & Int16(POLLNVAL) != 0 { throw abandon(c, "the connection's socket is no longer open") }
        if pfd.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0, PQconsumeInput(c) == 0, PQstatus(c) == CONNECTION_OK {
            // A failed read that left the connection OK would otherwise be retried until the deadline.
            throw abandon(c, "could not read the server's answer: " + libpqMessage(c))
        }
        // A failed read that broke the connection makes PQisBusy false: PQgetResult then
        // returns libpq's error, which `run` reports as `.connectionLost`.
    }

    /// Gives up on the current session and returns the error to throw: shuts its socket
    /// down, so that nothing more is sent or awaited on it, and makes the next call reconnect.
    ///
    /// The descriptor itself stays libpq's to close (on reset or `close()`); closing it
    /// here would let a new file take its number while libpq still holds it.
    func abandon(_ c: OpaquePointer, _ message: String) -> PGError {
        let fd = PQsocket(c)
        if fd >= 0, shutdown(fd, Int32(SHUT_RDWR)) != 0 {
            // ENOTCONN: the peer already closed it, which is what we want.
            logger.debug("shutdown(2) of an abandoned PostgreSQL socket failed", metadata: ["error": "\(String(cString: strerror(errno)))"])
        }
        mustReconnect = true
        return PGError(code: .connectionLost, message: message)
    }

    /// libpq's last error message for the connection, without its trailing newline.
    func libpqMessage(_ c: OpaquePointer) -> String {
        String(cString: PQerrorMessage(c)).trimmingTrailingNewlines()
    }

    /// Runs `body` with a statement deadline of at least `minimum`, for work that may
    /// legitimately take long (migrations: DDL on big tables, waiting for another
    /// process's migration lock).
    package func withDeadline<T>(atLeast minimum: Duration, _ body: () throws -> T) rethrows -> T {
        let saved = deadlineInForce
        deadlineInForce = max(deadlineInForce, minimum)
        defer { deadlineInForce = saved }
        return try body()
    }
}

extension Duration {
    /// Milliseconds for `poll(2)`, rounded up so that a wait never ends early, at most `Int32.max`.
    var pollMilliseconds: Int32 {
        Int32(clamping: roundedUpMilliseconds)
    }

    /// Whole milliseconds, rounded up (a positive duration is at least 1 ms).
    var roundedUpMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow { return seconds > 0 ? .max : .min }
        let subsecond = attoseconds / 1_000_000_000_000_000
        let partial: Int64 = attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0
        return ms.partialValue &+ subsecond &+ partial
    }

    /// "2 s", "0.5 s": for messages.
    var secondsText: String {
        let ms = roundedUpMilliseconds
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(Double(ms) / 1000) s"
    }
}
