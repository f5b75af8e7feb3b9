import CLibPQ
import Foundation
import Logging

/// One PostgreSQL connection through libpq. Owns its `PGconn` and frees it on `close()` or in `deinit`.
///
/// An actor whose executor is a thread of its own: every libpq call runs on that thread
/// and never on Swift's cooperative pool. Callers simply `await` its methods.
///
/// Statements take bound parameters only (`$1`, `$2`...). When the server has gone
/// away (restart, network), the connection notices before the next statement and
/// reconnects once, re-issuing its `LISTEN`s; a statement interrupted by a lost
/// connection throws `.connectionLost` (its outcome is unknown) and the call after it
/// reconnects.
///
/// Every call is bounded in time: connecting and reconnecting by libpq's
/// `connect_timeout` (10 s unless the URL sets it, see `PGConnectDefaults`), a statement
/// by `statementDeadline`, after which the connection is given up as lost.
public actor PGConnection {
    private let executor: ThreadExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    var conn: OpaquePointer?
    private let url: String
    let logger: Logger
    /// How long a statement may take, from sending it to its last result, before the
    /// connection is declared lost. Defaults to 60 s.
    public nonisolated let statementDeadline: Duration
    /// The server-side `statement_timeout` set on every session, or nil for the server's own.
    public nonisolated let statementTimeout: Duration?
    /// The deadline in force: `statementDeadline`, or a longer one while migrating.
    var deadlineInForce: Duration
    /// Set when a statement was given up on: its session must not be used again.
    var mustReconnect = false
    var listening: [String] = []
    /// Statements prepared in this session, by text: their names (``preparedQuery(_:_:)``).
    var prepared: [String: String] = [:]
    /// Names given so far, so that a name is never reused in a session.
    var preparedSerial = 0
    /// A pipe whose read end `waitForNotifications` also polls, so that `interrupt()` can wake it.
    let wakePipe: (read: Int32, write: Int32)

    private init(url: String, logger: Logger, statementDeadline: Duration, statementTimeout: Duration?) {
        self.url = url
        self.logger = logger
        self.statementDeadline = statementDeadline
        self.statementTimeout = statementTimeout
        self.deadlineInForce = statementDeadline
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
    /// Unless `url` or libpq's environment sets them, the connection uses
    /// `connect_timeout=10`, TCP keepalives after 30 s idle and `tcp_user_timeout=30000`
    /// (see `PGConnectDefaults`).
    ///
    /// - Parameters:
    ///   - url: a libpq connection URI (`postgresql://user@host:port/db`) or a
    ///     `key=value` conninfo string.
    ///   - logger: where reconnects are reported.
    ///   - statementTimeout: the server-side `statement_timeout` of every session (set
    ///     again after each reconnect): the server cancels a statement that runs longer,
    ///     with SQLSTATE 57014, and the session stays usable. Nil keeps the server's
    ///     setting; zero turns it off. Keep it below `statementDeadline`.
    ///   - statementDeadline: how long the client waits for a statement's answer before
    ///     it gives the connection up as lost (`.connectionLost`; the next call
    ///     reconnects). Defaults to 60 s.
    /// - Throws: `PGError` with code `.connectionFailed` and libpq's message, or
    ///   `.invalidValue` for a negative timeout or a deadline that is not positive.
    public static func connect(
        _ url: String,
        logger: Logger = Logger(label: "pushq.pg"),
        statementTimeout: Duration? = nil,
        statementDeadline: Duration = .seconds(60)
    ) async throws(PGError) -> PGConnection {
        guard statementDeadline > .zero else {
            throw PGError(code: .invalidValue, message: "the statement deadline must be positive, not \(statementDeadline)")
        }
        if let statementTimeout, statementTimeout < .zero {
            throw PGError(code: .invalidValue, message: "the statement timeout must not be negative, not \(statementTimeout)")
        }
        let connection = PGConnection(url: url, logger: logger, statementDeadline: statementDeadline, statementTimeout: statementTimeout)
        try await connection.open()
        return connection
    }

    private func open() throws(PGError) {
        let parameters = PGConnectDefaults.parameters(url: url, environment: ProcessInfo.processInfo.environment)
        let keywords: [String?] = parameters.map(\.keyword) + [nil]
        let values: [String?] = parameters.map(\.value) + [nil]
        let c = Self.withCStrings(keywords) { k in
            Self.withCStrings(values) { v in PQconnectdbParams(k.baseAddress, v.baseAddress, 1) }
        }
        guard let c, PQstatus(c) == CONNECTION_OK else {
            let message = c.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let c { PQfinish(c) }
            throw PGError(code: .connectionFailed, message: "could not connect: " + message.trimmingTrailingNewlines())
        }
        conn = c
        do {
            try prepareSession()
        } catch var error {
            error.code = .connectionFailed
            error.message = "could not prepare the session: " + error.message
            throw error
        }
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
        guard let conn, !mustReconnect else { return false }
        let status = PQtransactionStatus(conn)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs one statement with bound parameters and returns its rows.
    ///
    /// - Parameters:
    ///   - sql: one SQL statement with `$1`... placeholders.
    ///   - parameters: one value per placeholder; nil is SQL NULL.
    /// - Throws: `PGError`: `.server` with SQLSTATE, constraint and detail; `.connectionLost`,
    ///   also when no answer came within `statementDeadline`.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PGParameter)?] = []) throws(PGError) -> PGResult {
        let texts = try Self.texts(parameters)
        return try run { conn in
            Self.withCStrings(texts) { pointers in
                PQsendQueryParams(conn, sql, Int32(pointers.count), nil, pointers.baseAddress, nil, nil, 0)
            }
        }
    }

    /// The parameters as PostgreSQL text (nil: NULL).
    package static func texts(_ parameters: [(any PGParameter)?]) throws(PGError) -> [String?] {
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
        return texts
    }

    /// Runs one or more statements without parameters (simple query protocol), e.g. a migration file.
    ///
    /// - Throws: `PGError` for the first statement that fails; `.connectionLost`, also when
    ///   no answer came within `statementDeadline`.
    public func execute(_ sql: String) throws(PGError) {
        _ = try run { conn in PQsendQuery(conn, sql) }
    }

    /// Quotes an identifier (a channel or table name) with libpq's rules.
    func quoteIdentifier(_ name: String) throws(PGError) -> String {
        guard let conn, let p = PQescapeIdentifier(conn, name, name.utf8.count) else {
            throw PGError(code: .invalidValue, message: "cannot quote identifier")
        }
        defer { PQfreemem(p) }
        return String(cString: p)
    }

    /// Calls `body` with C strings for `strings` (nil stays a null pointer), all kept alive for the call.
    static func withCStrings<R>(_ strings: [String?], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
        var offsets: [Int?] = []
        offsets.reserveCapacity(strings.count)
        var storage: [CChar] = []
        storage.reserveCapacity(strings.reduce(0) { $0 + ($1?.utf8.count ?? 0) + 1 })
        for string in strings {
            guard var s = string else { offsets.append(nil); continue }
            offsets.append(storage.count)
            s.withUTF8 { bytes in bytes.withMemoryRebound(to: CChar.self) { storage.append(contentsOf: $0) } }
            storage.append(0)
        }
        return storage.withUnsafeBufferPointer { base in
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { base.baseAddress! + $0 } }
            return pointers.withUnsafeBufferPointer { body($0) }
        }
    }
}
