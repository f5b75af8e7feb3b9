extension JSONValue {
    /// A JSON document's top level, split without building it: for a request body whose parts
    /// are kept byte for byte (a notification's `payload` is stored as the producer wrote it).
    public enum Split: Sendable, Equatable {
        /// An object: each member's name and the byte range of its value, in document order.
        case object([(key: String, value: Range<Int>)])
        /// An array: the byte range of each item.
        case array([Range<Int>])
        /// A string, number, `true`, `false` or `null`.
        case scalar

        public static func == (a: Split, b: Split) -> Bool {
            switch (a, b) {
            case (.object(let x), .object(let y)): return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            case (.array(let x), .array(let y)): return x == y
            case (.scalar, .scalar): return true
            default: return false
            }
        }
    }

    /// Splits the one JSON value in `bytes[range]` (surrounding whitespace allowed) into its
    /// top-level parts, checking it as strictly as ``parse(_:)``; nil when it is not exactly one
    /// JSON value. Ranges are of `bytes`, trimmed of whitespace.
    ///
    /// - Parameter validateUTF8: check that the bytes are UTF-8 (once per document is enough:
    ///   pass false for a part of a document already checked).
    public static func split(_ bytes: [UInt8], in range: Range<Int>? = nil, validateUTF8: Bool = true) -> Split? {
        let range = range ?? 0..<bytes.count
        if validateUTF8, !isUTF8(bytes[range]) { return nil }
        var p = JSONParser(bytes)
        p.i = range.lowerBound
        p.skipSpace()
        guard p.i < range.upperBound else { return nil }
        let split: Split
        switch bytes[p.i] {
        case UInt8(ascii: "{"):
            guard let members = p.members(end: range.upperBound) else { return nil }
            split = .object(members)
        case UInt8(ascii: "["):
            guard let items = p.items(end: range.upperBound) else { return nil }
            split = .array(items)
        default:
            guard p.skipValue(depth: 0) else { return nil }
            split = .scalar
        }
        p.skipSpace()
        return p.i == range.upperBound ? split : nil
    }

    /// Parses the value at `bytes[range]` (a part ``split(_:in:validateUTF8:)`` found).
    public static func parse(_ bytes: [UInt8], in range: Range<Int>) -> JSONValue? {
        var p = JSONParser(bytes)
        p.i = range.lowerBound
        guard let value = p.value(depth: 0) else { return nil }
        p.skipSpace()
        return p.i == range.upperBound ? value : nil
    }

    static func isUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
        var utf8 = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch utf8.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

extension JSONParser {
    /// The members of the object at `i` (its `{`), each value's range trimmed; moves past it.
    mutating func members(end: Int) -> [(key: String, value: Range<Int>)]? {
        i += 1
        var members: [(key: String, value: Range<Int>)] = []
        skipSpace()
        if i < end, bytes[i] == UInt8(ascii: "}") { i += 1; return members }
        while true {
            skipSpace()
            guard i < end, bytes[i] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard i < end, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            let start = i
            guard skipValue(depth: 1), i <= end else { return nil }
            members.append((key, start..<i))
            skipSpace()
            guard i < end else { return nil }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return members }
            return nil
        }
    }

    /// The items of the array at `i` (its `[`), each range trimmed; moves past it.
    mutating func items(end: Int) -> [Range<Int>]? {
        i += 1
        var items: [Range<Int>] = []
        skipSpace()
        if i < end, bytes[i] == UInt8(ascii: "]") { i += 1; return items }
        while true {
            skipSpace()
            let start = i
            guard skipValue(depth: 1), i <= end else { return nil }
            items.append(start..<i)
            skipSpace()
            guard i < end else { return nil }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return items }
            return nil
        }
    }
}
