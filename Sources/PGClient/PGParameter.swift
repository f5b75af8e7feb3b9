import Foundation

/// A value that can be bound to a statement parameter (`$1`), in PostgreSQL's text format.
///
/// Values are always sent as bound parameters, never spliced into SQL. Swift `nil`
/// is sent as SQL NULL. Arrays are sent as array literals, for `unnest($1::bigint[])`.
public protocol PGParameter: Sendable {
    /// The value in PostgreSQL's text input format.
    var pgText: String { get }
}

extension String: PGParameter { public var pgText: String { self } }
extension Substring: PGParameter { public var pgText: String { String(self) } }
extension Int: PGParameter { public var pgText: String { String(self) } }
extension Int64: PGParameter { public var pgText: String { String(self) } }
extension Int32: PGParameter { public var pgText: String { String(self) } }
extension Int16: PGParameter { public var pgText: String { String(self) } }
extension Double: PGParameter { public var pgText: String { "\(self)" } }
extension Bool: PGParameter { public var pgText: String { self ? "t" : "f" } }
extension UUID: PGParameter { public var pgText: String { uuidString.lowercased() } }
extension Date: PGParameter { public var pgText: String { PGTimestamp.format(self) } }

/// Arrays (and arrays of optionals, whose nil elements become NULL) as array literals.
extension Array: PGParameter where Element: PGArrayElement {
    /// `{1,2,NULL}` for integers, booleans and UUIDs; `{"a","b\"c",NULL}` for the rest: quoted,
    /// `"` and `\` escaped. Built on UTF-8 bytes by the element type itself
    /// (``PGArrayElement/appendPGArray(_:to:)``), so that the loop runs on concrete types: this
    /// conformance is generic and reached through `any PGParameter`, and its generic loop took
    /// more than half of the encoding's time in the worker's profile (a write-back batch encodes
    /// eleven arrays of hundreds of elements; docs/performance.md, "The worker's own share").
    /// Escaping bytes is exact: in UTF-8, the bytes of `"` and `\` never occur inside a
    /// multi-byte character.
    public var pgText: String {
        var out: [UInt8] = []
        out.reserveCapacity(count * 12 + 2)
        out.append(UInt8(ascii: "{"))
        Element.appendPGArray(self, to: &out)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

/// An element of an array parameter: a `PGParameter` or an optional one. Each type writes a
/// whole array, so that the loop runs on the concrete type.
public protocol PGArrayElement: Sendable {
    /// Appends `elements`, comma-separated, as they stand in an array literal.
    static func appendPGArray(_ elements: [Self], to out: inout [UInt8])
    /// Appends `elements`, comma-separated, nil as `NULL` (for arrays of optionals).
    static func appendPGArray(optionals elements: [Self?], to out: inout [UInt8])
}

/// Array elements written quoted and escaped: their `pgText`.
protocol PGQuotedArrayElement: PGArrayElement, PGParameter {}

extension PGQuotedArrayElement {
    public static func appendPGArray(_ elements: [Self], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { appendQuoted($0.pgText, to: &$1) }
    }

    public static func appendPGArray(optionals elements: [Self?], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { appendQuoted($0?.pgText, to: &$1) }
    }
}

/// Appends each of `elements` with `write`, comma-separated.
@inline(__always)
func appendElements<E>(_ elements: [E], to out: inout [UInt8], _ write: (E, inout [UInt8]) -> Void) {
    var first = true
    for element in elements {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        write(element, &out)
    }
}

/// Appends `text` quoted, `"` and `\` escaped, or `NULL` for nil.
func appendQuoted(_ text: String?, to out: inout [UInt8]) {
    guard var text else {
        out.append(contentsOf: "NULL".utf8)
        return
    }
    out.append(UInt8(ascii: "\""))
    text.withUTF8 { bytes in
        for b in bytes {
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
            out.append(b)
        }
    }
    out.append(UInt8(ascii: "\""))
}

/// Appends `value` in decimal: what `String(value)` gives, without the String.
@inline(__always)
func appendDecimal<T: BinaryInteger>(_ value: T, to out: inout [UInt8]) {
    if value < 0 { out.append(UInt8(ascii: "-")) }
    var magnitude = UInt64(value.magnitude)
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64's 20 digits
    withUnsafeMutableBytes(of: &digits) { buffer in
        var n = 0
        repeat {
            buffer[n] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
            n += 1
        } while magnitude != 0
        while n > 0 {
            n -= 1
            out.append(buffer[n])
        }
    }
}

/// Array elements written unquoted: integers in decimal.
protocol PGDecimalArrayElement: PGArrayElement, BinaryInteger {}

extension PGDecimalArrayElement {
    public static func appendPGArray(_ elements: [Self], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { appendDecimal($0, to: &$1) }
    }

    public static func appendPGArray(optionals elements: [Self?], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { element, out in
            if let element { appendDecimal(element, to: &out) } else { out.append(contentsOf: "NULL".utf8) }
        }
    }
}

extension String: PGArrayElement {
    public static func appendPGArray(_ elements: [String], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { appendQuoted($0, to: &$1) }
    }
    public static func appendPGArray(optionals elements: [String?], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { appendQuoted($0, to: &$1) }
    }
}
extension Int: PGDecimalArrayElement {}
extension Int64: PGDecimalArrayElement {}
extension Int32: PGDecimalArrayElement {}
extension Int16: PGDecimalArrayElement {}
extension Double: PGQuotedArrayElement {}
extension Bool: PGArrayElement {
    public static func appendPGArray(_ elements: [Bool], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { $1.append($0 ? UInt8(ascii: "t") : UInt8(ascii: "f")) }
    }
    public static func appendPGArray(optionals elements: [Bool?], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { element, out in
            if let element { out.append(element ? UInt8(ascii: "t") : UInt8(ascii: "f")) } else { out.append(contentsOf: "NULL".utf8) }
        }
    }
}
extension UUID: PGArrayElement {
    public static func appendPGArray(_ elements: [UUID], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { $1.append(contentsOf: $0.pgText.utf8) }
    }
    public static func appendPGArray(optionals elements: [UUID?], to out: inout [UInt8]) {
        appendElements(elements, to: &out) { element, out in out.append(contentsOf: (element?.pgText ?? "NULL").utf8) }
    }
}
extension Date: PGQuotedArrayElement {}
extension Optional: PGArrayElement where Wrapped: PGArrayElement {
    public static func appendPGArray(_ elements: [Wrapped?], to out: inout [UInt8]) {
        Wrapped.appendPGArray(optionals: elements, to: &out)
    }
    /// An optional of an optional: either nil is `NULL`.
    public static func appendPGArray(optionals elements: [Wrapped??], to out: inout [UInt8]) {
        Wrapped.appendPGArray(optionals: elements.map { $0 ?? nil }, to: &out)
    }
}
