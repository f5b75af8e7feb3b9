import CLibPQ

/// An error from PostgreSQL or from libpq, with the server's diagnostic fields.
///
/// `description` is one sentence naming the SQLSTATE and constraint where there is
/// one; it never contains parameter values or the connection password.
public struct PGError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// The connection could not be opened.
        public static let connectionFailed = Code(name: "connectionFailed")
        /// The connection broke during the call; the statement's outcome is unknown.
        /// The next call on the same `PGConnection` reconnects.
        public static let connectionLost = Code(name: "connectionLost")
        /// The server answered the statement with an error (see `sqlState`).
        public static let server = Code(name: "server")
        /// A value could not be sent or decoded.
        public static let invalidValue = Code(name: "invalidValue")
        /// The connection was closed by `close()`.
        public static let closed = Code(name: "closed")
        /// The connection goes through a pooler that does not keep a session (PgBouncer in
        /// transaction or statement mode), and the caller needs one.
        public static let sessionNotKept = Code(name: "sessionNotKept")
        public var description: String { name }
    }

    public var code: Code
    /// The primary message (libpq's or the server's).
    public var message: String
    /// Five-character SQLSTATE, e.g. `23514` for a check violation.
    public var sqlState: String?
    public var detail: String?
    public var hint: String?
    /// The name of the violated constraint, for integrity errors.
    public var constraint: String?
    public var table: String?
    public var column: String?

    public init(code: Code, message: String, sqlState: String? = nil, detail: String? = nil, hint: String? = nil,
                constraint: String? = nil, table: String? = nil, column: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.column = column
    }

    public var description: String {
        var text = "PostgreSQL \(code): \(message)"
        if let sqlState { text += " (SQLSTATE \(sqlState)" + (constraint.map { ", constraint \($0)" } ?? "") + ")" }
        return text
    }

    /// Builds the error of a failed result: the server's fields.
    init(result: OpaquePointer?, connection: OpaquePointer?, lost: Bool) {
        func field(_ code: UInt8) -> String? {
            guard let result, let p = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: p)
        }
        let primary = field(UInt8(ascii: "M"))
        let fallback = result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) }
            ?? connection.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? "unknown error"
        self.init(
            code: lost ? .connectionLost : .server,
            message: (primary ?? fallback).trimmingTrailingNewlines(),
            sqlState: field(UInt8(ascii: "C")),
            detail: field(UInt8(ascii: "D")),
            hint: field(UInt8(ascii: "H")),
            constraint: field(UInt8(ascii: "n")),
            table: field(UInt8(ascii: "t")),
            column: field(UInt8(ascii: "c"))
        )
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = Substring(self)
        while let last = s.last, last.isNewline || last == " " { s = s.dropLast() }
        return String(s)
    }
}
