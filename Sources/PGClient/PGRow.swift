import CLibPQ

/// The rows of a ``PGResult``, read by column name: `for row in result.rows { try row.decode(Int64.self, "id") }`.
///
/// The columns' names are looked up once, when the result's ``PGResult/rows`` is made (one
/// `PQfname` per column), not at every read; a read by name is then one dictionary lookup. Where
/// rows are many and columns too (the claim: hundreds of rows of 20 columns), find each
/// ``PGColumn`` once with ``column(_:)`` and read the rows with it: no lookup per row at all.
public struct PGRows: RandomAccessCollection, Sendable {
    let columns: PGColumns

    init(_ result: PGResult) { columns = PGColumns(result) }

    /// The column named `name`, to read every row with.
    ///
    /// - Throws: `PGError` (`.invalidValue`) naming the column when the result has none of that name.
    public func column(_ name: String) throws(PGError) -> PGColumn {
        PGColumn(index: try columns.index(of: name), name: name)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.result.count }
    public subscript(position: Int) -> PGRow { PGRow(columns: columns, pointer: columns.result.pointer, row: Int32(position)) }
}

/// A column of a result, found by name once (``PGRows/column(_:)``).
public struct PGColumn: Sendable {
    let index: Int32
    /// The column's name, for errors.
    public let name: String
}

/// One row of a result, its values read by column name.
///
/// A column is named as the server names it: the column's name, or its alias (`AS name`). A
/// name the result does not have, or NULL where a value is required, throws a ``PGError`` naming
/// the column; so does text that is not a value of the type asked for (the value itself is never
/// in the message: it may be a token or a payload).
public struct PGRow: @unchecked Sendable {
    /// Keeps the result (and its `PGresult`) alive while the row is.
    let columns: PGColumns
    /// The result's `PGresult`, read at every value without going through ``columns``.
    ///
    /// `@unchecked Sendable`: a read-only `PGresult` that ``columns`` keeps alive (see ``PGResult``).
    let pointer: OpaquePointer
    /// The row's index in its result.
    let row: Int32

    /// Decodes the value of `column`, which must not be NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the result has no such column, the value is
    ///   NULL, or its text is not a `T`.
    public func decode<T: PGDecodable>(_ type: T.Type, _ column: String) throws(PGError) -> T {
        try decode(type, try columns.column(column))
    }

    /// Decodes the value of `column`; nil for SQL NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the result has no such column or the text is not a `T`.
    public func decode<T: PGDecodable>(_ type: T?.Type, _ column: String) throws(PGError) -> T? {
        try decode(type, try columns.column(column))
    }

    /// The text of `column`'s value, or nil for NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the result has no such column.
    public func string(_ column: String) throws(PGError) -> String? {
        string(try columns.column(column))
    }

    /// The text of `column`'s value as raw bytes, exactly as the server sent it, or nil for NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the result has no such column.
    public func bytes(_ column: String) throws(PGError) -> [UInt8]? {
        bytes(try columns.column(column))
    }

    /// Whether `column`'s value is SQL NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the result has no such column.
    public func isNull(_ column: String) throws(PGError) -> Bool {
        isNull(try columns.column(column))
    }

    /// Decodes the value of `column` (of this row's result), which must not be NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the value is NULL or its text is not a `T`.
    public func decode<T: PGDecodable>(_ type: T.Type, _ column: PGColumn) throws(PGError) -> T {
        guard let value = try decode(T?.self, column) else {
            throw PGError(code: .invalidValue, message: "column \(column.name) of row \(row) is NULL where a \(T.self) is required",
                          column: column.name)
        }
        return value
    }

    /// Decodes the value of `column` (of this row's result); nil for SQL NULL.
    ///
    /// - Throws: `PGError` (`.invalidValue`) when the text is not a `T`.
    public func decode<T: PGDecodable>(_ type: T?.Type, _ column: PGColumn) throws(PGError) -> T? {
        guard let text = string(column) else { return nil }
        guard let value = T(pgText: text) else {
            throw PGError(code: .invalidValue, message: "column \(column.name) of row \(row) is not a \(T.self)", column: column.name)
        }
        return value
    }

    /// The text of `column`'s value (of this row's result), or nil for NULL.
    public func string(_ column: PGColumn) -> String? {
        isNull(column) ? nil : String(cString: PQgetvalue(pointer, row, column.index))
    }

    /// The text of `column`'s value (of this row's result) as raw bytes, exactly as the server
    /// sent it, or nil for NULL.
    public func bytes(_ column: PGColumn) -> [UInt8]? {
        if isNull(column) { return nil }
        let length = Int(PQgetlength(pointer, row, column.index))
        guard let p = PQgetvalue(pointer, row, column.index) else { return [] }
        return p.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// Whether `column`'s value (of this row's result) is SQL NULL.
    public func isNull(_ column: PGColumn) -> Bool { PQgetisnull(pointer, row, column.index) == 1 }
}

/// A result and the index of each of its columns by name, made once per ``PGResult/rows``.
final class PGColumns: Sendable {
    let result: PGResult
    /// Column name → index. The first of two columns of one name wins, as with `PQfnumber`.
    let indexes: [String: Int32]

    init(_ result: PGResult) {
        self.result = result
        var indexes: [String: Int32] = [:]
        indexes.reserveCapacity(result.columnCount)
        for i in 0..<Int32(result.columnCount) where indexes[String(cString: PQfname(result.pointer, i))] == nil {
            indexes[String(cString: PQfname(result.pointer, i))] = i
        }
        self.indexes = indexes
    }

    func column(_ name: String) throws(PGError) -> PGColumn { PGColumn(index: try index(of: name), name: name) }

    func index(of column: String) throws(PGError) -> Int32 {
        guard let index = indexes[column] else {
            let names = (0..<Int32(result.columnCount)).map { String(cString: PQfname(result.pointer, $0)) }
            throw PGError(code: .invalidValue,
                          message: "the result has no column \(column) (its columns: \(names.isEmpty ? "none" : names.joined(separator: ", ")))",
                          column: column)
        }
        return index
    }
}
