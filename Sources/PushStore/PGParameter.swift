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
    /// `{1,2,NULL}` for numbers, booleans and UUIDs; `{"a","b\"c",NULL}` for the rest: quoted,
    /// `"` and `\` escaped. Built on UTF-8 bytes, each element written in place (a write-back
    /// batch encodes eleven arrays of hundreds of elements: the worker's profile showed a String
    /// per element, then a scan of it for quotes). Escaping bytes is exact: in UTF-8, the bytes of
    /// `"` and `\` never occur inside a multi-byte character.
    public var pgText: String {
        var out: [UInt8] = []
        out.reserveCapacity(count * 12 + 2)
        out.append(UInt8(ascii: "{"))
        for (i, element) in enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            element.appendPGArrayElement(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

/// An element of an array parameter: a `PGParameter` or an optional one.
public protocol PGArrayElement: Sendable {
    /// The element's text, or nil for NULL.
    var pgArrayElementText: String? { get }
    /// Appends the element as it stands in an array literal: `NULL`, or its text, quoted and
    /// escaped unless it is one that never needs to be (a number, a boolean, a UUID).
    func appendPGArrayElement(to out: inout [UInt8])
}

extension PGArrayElement {
    public func appendPGArrayElement(to out: inout [UInt8]) {
        guard var text = pgArrayElementText else {
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
}

/// Appends `value` in decimal: what `String(value)` gives, without the String.
func appendDecimal<T: BinaryInteger>(_ value: T, to out: inout [UInt8]) {
    if value < 0 { out.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                 UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var n = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
        repeat {
            buffer[n] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
            n += 1
        } while magnitude != 0
        for i in stride(from: n - 1, through: 0, by: -1) { out.append(buffer[i]) }
    }
}

extension String: PGArrayElement { public var pgArrayElementText: String? { self } }
extension Int: PGArrayElement {
    public var pgArrayElementText: String? { String(self) }
    public func appendPGArrayElement(to out: inout [UInt8]) { appendDecimal(self, to: &out) }
}
extension Int64: PGArrayElement {
    public var pgArrayElementText: String? { String(self) }
    public func appendPGArrayElement(to out: inout [UInt8]) { appendDecimal(self, to: &out) }
}
extension Int32: PGArrayElement {
    public var pgArrayElementText: String? { String(self) }
    public func appendPGArrayElement(to out: inout [UInt8]) { appendDecimal(self, to: &out) }
}
extension Int16: PGArrayElement {
    public var pgArrayElementText: String? { String(self) }
    public func appendPGArrayElement(to out: inout [UInt8]) { appendDecimal(self, to: &out) }
}
extension Double: PGArrayElement { public var pgArrayElementText: String? { "\(self)" } }
extension Bool: PGArrayElement {
    public var pgArrayElementText: String? { self ? "t" : "f" }
    public func appendPGArrayElement(to out: inout [UInt8]) { out.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f")) }
}
extension UUID: PGArrayElement {
    public var pgArrayElementText: String? { pgText }
    public func appendPGArrayElement(to out: inout [UInt8]) { out.append(contentsOf: pgText.utf8) }
}
extension Date: PGArrayElement { public var pgArrayElementText: String? { pgText } }
extension Optional: PGArrayElement where Wrapped: PGArrayElement {
    public var pgArrayElementText: String? { self?.pgArrayElementText }
    public func appendPGArrayElement(to out: inout [UInt8]) {
        if let self { self.appendPGArrayElement(to: &out) } else { out.append(contentsOf: "NULL".utf8) }
    }
}
