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
    /// `{"a","b\"c",NULL}`: every element quoted, `"` and `\` escaped. Built on UTF-8 bytes
    /// (a write-back batch encodes eight arrays of hundreds of elements; the worker profile showed
    /// per-scalar String appends). Escaping bytes is exact: in UTF-8, the bytes of `"` and `\`
    /// never occur inside a multi-byte character.
    public var pgText: String {
        var out: [UInt8] = []
        out.reserveCapacity(count * 12 + 2)
        out.append(UInt8(ascii: "{"))
        for (i, element) in enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            if var text = element.pgArrayElementText {
                out.append(UInt8(ascii: "\""))
                text.withUTF8 { bytes in
                    for b in bytes {
                        if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                        out.append(b)
                    }
                }
                out.append(UInt8(ascii: "\""))
            } else {
                out.append(contentsOf: "NULL".utf8)
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

/// An element of an array parameter: a `PGParameter` or an optional one.
public protocol PGArrayElement: Sendable {
    var pgArrayElementText: String? { get }
}

extension String: PGArrayElement { public var pgArrayElementText: String? { self } }
extension Int: PGArrayElement { public var pgArrayElementText: String? { String(self) } }
extension Int64: PGArrayElement { public var pgArrayElementText: String? { String(self) } }
extension Int32: PGArrayElement { public var pgArrayElementText: String? { String(self) } }
extension Int16: PGArrayElement { public var pgArrayElementText: String? { String(self) } }
extension Double: PGArrayElement { public var pgArrayElementText: String? { "\(self)" } }
extension Bool: PGArrayElement { public var pgArrayElementText: String? { self ? "t" : "f" } }
extension UUID: PGArrayElement { public var pgArrayElementText: String? { pgText } }
extension Date: PGArrayElement { public var pgArrayElementText: String? { pgText } }
extension Optional: PGArrayElement where Wrapped: PGArrayElement {
    public var pgArrayElementText: String? { self?.pgArrayElementText }
}
