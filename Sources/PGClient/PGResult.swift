import CLibPQ
import Foundation

/// The rows of a completed statement. Owns its `PGresult` and frees it in `deinit`.
///
/// `@unchecked Sendable`: a `PGresult` is read-only once libpq has built it, and libpq
/// documents that such results may be read from any thread; this type never mutates it.
public final class PGResult: @unchecked Sendable {
    /// The `PGresult`; read by ``PGRow`` too.
    let pointer: OpaquePointer
    /// Number of rows.
    public let count: Int
    /// Number of columns.
    public let columnCount: Int

    init(_ result: OpaquePointer) {
        self.pointer = result
        self.count = Int(PQntuples(result))
        self.columnCount = Int(PQnfields(result))
    }

    deinit { PQclear(pointer) }

    /// Rows affected by an INSERT, UPDATE or DELETE (`PQcmdTuples`), 0 otherwise.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(pointer))) ?? 0 }

    /// The rows, their values read by column name (``PGRow``); each column's name is looked up
    /// once here, not at every read.
    public var rows: PGRows { PGRows(self) }

    /// The first row: the one row of an aggregate or of a `RETURNING` of one row.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the statement returned no row.
    public func firstRow() throws(PGError) -> PGRow {
        guard count > 0 else { throw PGError(code: .invalidValue, message: "the statement returned no row where one was expected") }
        return rows[0]
    }

    /// The index of the column named `name`, if there is one.
    public func column(named name: String) -> Int? {
        let i = Int(PQfnumber(pointer, name))
        return i >= 0 ? i : nil
    }

    /// Whether the value at (`row`, `column`) is SQL NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(pointer, Int32(row), Int32(column)) == 1
    }

    /// The value's text as raw bytes (exactly as the server sent it), or nil for NULL.
    public func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        if isNull(row, column) { return nil }
        let length = Int(PQgetlength(pointer, Int32(row), Int32(column)))
        guard let p = PQgetvalue(pointer, Int32(row), Int32(column)) else { return [] }
        return p.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// The value's text, or nil for NULL.
    public func string(_ row: Int, _ column: Int) -> String? {
        if isNull(row, column) { return nil }
        return String(cString: PQgetvalue(pointer, Int32(row), Int32(column)))
    }

    /// Decodes the value at (`row`, `column`) as `T`; nil for SQL NULL.
    ///
    /// - Throws: `PGError` with code `.invalidValue` naming the column when the text is not a `T`.
    public func decode<T: PGDecodable>(_ type: T.Type, _ row: Int, _ column: Int) throws(PGError) -> T? {
        guard let text = string(row, column) else { return nil }
        guard let value = T(pgText: text) else {
            let name = String(cString: PQfname(pointer, Int32(column)))
            throw PGError(code: .invalidValue, message: "column \(name) row \(row) is not a \(T.self)")
        }
        return value
    }

    /// Decodes a column that must not be NULL.
    public func decode<T: PGDecodable>(_ type: T.Type, _ row: Int, _ column: String) throws(PGError) -> T {
        guard let index = self.column(named: column) else {
            throw PGError(code: .invalidValue, message: "the result has no column \(column)")
        }
        guard let value = try decode(type, row, index) else {
            throw PGError(code: .invalidValue, message: "column \(column) row \(row) is NULL")
        }
        return value
    }

    /// Decodes a column that may be NULL.
    public func decodeOptional<T: PGDecodable>(_ type: T.Type, _ row: Int, _ column: String) throws(PGError) -> T? {
        guard let index = self.column(named: column) else {
            throw PGError(code: .invalidValue, message: "the result has no column \(column)")
        }
        return try decode(type, row, index)
    }
}

/// A type that can be read from PostgreSQL's text output format.
public protocol PGDecodable {
    init?(pgText: String)
}

extension String: PGDecodable { public init?(pgText: String) { self = pgText } }
extension Int: PGDecodable { public init?(pgText: String) { self.init(pgText) } }
extension Int64: PGDecodable { public init?(pgText: String) { self.init(pgText) } }
extension Int32: PGDecodable { public init?(pgText: String) { self.init(pgText) } }
extension Int16: PGDecodable { public init?(pgText: String) { self.init(pgText) } }
extension Double: PGDecodable { public init?(pgText: String) { self.init(pgText) } }
extension Bool: PGDecodable {
    public init?(pgText: String) {
        switch pgText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}
extension UUID: PGDecodable { public init?(pgText: String) { self.init(uuidString: pgText) } }
extension Date: PGDecodable {
    public init?(pgText: String) {
        guard let date = PGTimestamp.parse(pgText) else { return nil }
        self = date
    }
}
