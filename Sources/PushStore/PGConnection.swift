import CLibPQ
import Foundation
import Logging

/// One PostgreSQL connection through libpq. Owns its `PGconn` and frees it on `close()` or in `deinit`.
///
/// An actor whose executor is a thread of its own: every libpq call, all of which
/// block, runs on that thread and never on Swift's cooperative pool. Callers simply
/// `await` its methods.
///
/// Statements take bound parameters only (`$1`, `$2`...). When the server has gone
/// away (restart, network), the connection notices before the next statement and
/// reconnects once, re-issuing its `LISTEN`s; a statement interrupted by a lost
/// connection throws `.connectionLost` (its outcome is unknown) and the call after it
/// reconnects.
public actor PGConnection {
    private let executor: ThreadExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var conn: OpaquePointer?
    private let conninfo: String
    private let logger: Logger
    var listening: [String] = []
    /// A pipe whose read end `waitForNotifications` also polls, so that `interrupt()` can wake it.
    let wakePipe: (read: Int32, write: Int32)

    private init(conninfo: String, logger: Logger) {
        self.conninfo = conninfo
        self.logger = logger
        self.executor = ThreadExecutor(name: "pushq.pg")
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        }
        self.wakePipe = (fds[0], fds[1])
    }

    isolated deinit {
        if let conn { PQfinish(conn) }
        if wakePipe.read >= 0 { Foundation.close(wakePipe.read); Foundation.close(wakePipe.write) }
        executor.shutdown()
    }

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - url: a libpq connection URI (`postgresql://user@host:port/db`) or a
    ///     `key=value` conninfo string.
    ///   - logger: where reconnects are reported.
    /// - Throws: `PGError` with code `.connectionFailed` and libpq's message.
    public static func connect(_ url: String, logger: Logger = Logger(label: "pushq.pg")) async throws(PGError) -> PGConnection {
        let connection = PGConnection(conninfo: url, logger: logger)
        try await connection.open()
        return connection
    }

    private func open() throws(PGError) {
        let c = PQconnectdb(conninfo)
        guard let c, PQstatus(c) == CONNECTION_OK else {
            let message = c.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let c { PQfinish(c) }
            throw PGError(code: .connectionFailed, message: "could not connect: " + message.trimmingTrailingNewlines())
        }
        conn = c
        try prepareSession()
    }

    /// Session settings every connection needs, after each (re)connect.
    private func prepareSession() throws(PGError) {
        guard let conn else { throw PGError(code: .closed, message: "the connection is closed") }
        // Notices (e.g. "already exists, skipping") would go to stderr otherwise.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        try execute("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'iso_8601'")
        for channel in listening { try execute("LISTEN " + quoteIdentifier(channel)) }
    }

    /// Closes the connection. Later calls throw `.closed`.
    public func close() {
        if let conn { PQfinish(conn) }
        conn = nil
    }

    /// The server's process id for this session (`pg_backend_pid()`), 0 when closed.
    public var backendPID: Int32 { conn.map { PQbackendPID($0) } ?? 0 }

    /// Whether a transaction is open on this connection.
    public var inTransaction: Bool {
        guard let conn else { return false }
        let status = PQtransactionStatus(conn)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs one statement with bound parameters and returns its rows.
    ///
    /// - Parameters:
    ///   - sql: one SQL statement with `$1`... placeholders.
    ///   - parameters: one value per placeholder; nil is SQL NULL.
    /// - Throws: `PGError`: `.server` with SQLSTATE, constraint and detail; `.connectionLost`.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PGParameter)?] = []) throws(PGError) -> PGResult {
        let conn = try liveConnection()
        var texts: [String?] = []
        texts.reserveCapacity(parameters.count)
        for (i, parameter) in parameters.enumerated() {
            guard let parameter else { texts.append(nil); continue }
            let text = parameter.pgText
            if text.utf8.contains(0) {
                throw PGError(code: .invalidValue, message: "parameter $\(i + 1) contains a NUL character, which PostgreSQL text cannot hold")
            }
            texts.append(text)
        }
        let result = Self.withCStrings(texts) { pointers in
            PQexecParams(conn, sql, Int32(pointers.count), nil, pointers.baseAddress, nil, nil, 0)
        }
        return try check(result)
    }

    /// Runs one or more statements without parameters (simple query protocol), e.g. a migration file.
    ///
    /// - Throws: `PGError` for the first statement that fails.
    public func execute(_ sql: String) throws(PGError) {
        let conn = try liveConnection()
        _ = try check(PQexec(conn, sql))
    }

    /// Quotes an identifier (a channel or table name) with libpq's rules.
    func quoteIdentifier(_ name: String) throws(PGError) -> String {
        guard let conn, let p = PQescapeIdentifier(conn, name, name.utf8.count) else {
            throw PGError(code: .invalidValue, message: "cannot quote identifier")
        }
        defer { PQfreemem(p) }
        return String(cString: p)
    }

    private func check(_ result: OpaquePointer?) throws(PGError) -> PGResult {
        guard let result else {
            throw PGError(result: nil, connection: conn, lost: conn.map { PQstatus($0) } != CONNECTION_OK)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PGResult(result)
        default:
            let lost = conn.map { PQstatus($0) } != CONNECTION_OK
            let error = PGError(result: result, connection: conn, lost: lost)
            PQclear(result)
            throw error
        }
    }

    /// The connection, reconnected first if the server went away since the last call.
    ///
    /// A server that restarted or closed the session leaves a message or EOF on the
    /// socket; reading it here, before sending, tells a dead session from a live one
    /// without risking a statement being run twice.
    func liveConnection() throws(PGError) -> OpaquePointer {
        guard let c = conn else { throw PGError(code: .closed, message: "the connection is closed") }
        if PQstatus(c) == CONNECTION_OK, PQtransactionStatus(c) == PQTRANS_IDLE {
            // A server that went away left its FATAL message and then EOF: read until the
            // socket has nothing more (one read may take the message but not yet see the EOF).
            var pfd = pollfd(fd: PQsocket(c), events: Int16(POLLIN), revents: 0)
            var reads = 0
            while reads < 8, PQstatus(c) == CONNECTION_OK, poll(&pfd, 1, 0) > 0 {
                if PQconsumeInput(c) == 0 { break }
                reads += 1
            }
        }
        if PQstatus(c) != CONNECTION_OK {
            logger.warning("PostgreSQL connection lost; reconnecting")
            PQreset(c)
            guard PQstatus(c) == CONNECTION_OK else {
                throw PGError(code: .connectionLost,
                              message: "reconnect failed: " + String(cString: PQerrorMessage(c)).trimmingTrailingNewlines())
            }
            try prepareSession()
            logger.info("PostgreSQL connection re-established")
        }
        return c
    }

    /// Calls `body` with C strings for `strings` (nil stays a null pointer), all kept alive for the call.
    private static func withCStrings<R>(_ strings: [String?], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
        var offsets: [Int?] = []
        offsets.reserveCapacity(strings.count)
        var storage: [CChar] = []
        storage.reserveCapacity(strings.reduce(0) { $0 + ($1?.utf8.count ?? 0) + 1 })
        for s in strings {
            guard let s else { offsets.append(nil); continue }
            offsets.append(storage.count)
            for byte in s.utf8 { storage.append(CChar(bitPattern: byte)) }
            storage.append(0)
        }
        return storage.withUnsafeBufferPointer { base in
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { base.baseAddress! + $0 } }
            return pointers.withUnsafeBufferPointer { body($0) }
        }
    }
}
