extension JSONValue {
    /// What ``scanObject(_:forKeys:)`` found.
    public enum ObjectScan: Sendable, Hashable {
        /// The bytes are not exactly one JSON value in valid UTF-8.
        case notJSON
        /// One JSON value, but not an object.
        case notObject
        /// One JSON object; `firstKey` is its first top-level member named in `keys`, if any.
        case object(firstKey: String?)
    }

    /// Checks that `bytes` are exactly one JSON object, as strictly as ``parse(_:)``, without
    /// building it (no allocation for ordinary payloads), and reports the first of its
    /// top-level member names that is in `keys`.
    ///
    /// For the per-notification path: ``parse(_:)`` builds a tree, ~15 µs for a 300-byte payload.
    public static func scanObject(_ bytes: [UInt8], forKeys keys: [String]) -> ObjectScan {
        var utf8 = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        scalars: while true {
            switch utf8.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: break scalars
            case .error: return .notJSON
            }
        }
        var p = JSONParser(bytes)
        p.skipSpace()
        guard p.i < bytes.count else { return .notJSON }
        guard bytes[p.i] == UInt8(ascii: "{") else {
            guard p.skipValue(depth: 0) else { return .notJSON }
            p.skipSpace()
            return p.atEnd ? .notObject : .notJSON
        }
        p.i += 1
        var found: String? = nil
        p.skipSpace()
        if p.i < bytes.count, bytes[p.i] == UInt8(ascii: "}") {
            p.i += 1
        } else {
            members: while true {
                p.skipSpace()
                guard p.i < bytes.count, bytes[p.i] == UInt8(ascii: "\"") else { return .notJSON }
                let keyStart = p.i
                guard p.skipString() else { return .notJSON }
                if found == nil { found = Self.match(bytes[(keyStart + 1)..<(p.i - 1)], keys) }
                p.skipSpace()
                guard p.i < bytes.count, bytes[p.i] == UInt8(ascii: ":") else { return .notJSON }
                p.i += 1
                guard p.skipValue(depth: 1) else { return .notJSON }
                p.skipSpace()
                guard p.i < bytes.count else { return .notJSON }
                if bytes[p.i] == UInt8(ascii: ",") { p.i += 1; continue }
                if bytes[p.i] == UInt8(ascii: "}") { p.i += 1; break members }
                return .notJSON
            }
        }
        p.skipSpace()
        return p.atEnd ? .object(firstKey: found) : .notJSON
    }

    /// The key in `keys` that the raw (still escaped) member name `raw` spells, if any.
    private static func match(_ raw: ArraySlice<UInt8>, _ keys: [String]) -> String? {
        if !raw.contains(UInt8(ascii: "\\")) {
            return keys.first { $0.utf8.elementsEqual(raw) }
        }
        // An escaped name (rare): decode it to compare.
        var q = JSONParser([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")])
        guard let name = q.string() else { return nil }
        return keys.first { $0 == name }
    }
}

extension JSONParser {
    /// Moves past one value, checking it as ``value(depth:)`` does, without building it.
    mutating func skipValue(depth: Int) -> Bool {
        guard depth < Self.maxDepth else { return false }
        skipSpace()
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return true }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), skipString() else { return false }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
                i += 1
                guard skipValue(depth: depth + 1) else { return false }
                skipSpace()
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return true }
                return false
            }
        case UInt8(ascii: "["):
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return true }
            while true {
                guard skipValue(depth: depth + 1) else { return false }
                skipSpace()
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return true }
                return false
            }
        case UInt8(ascii: "\""): return skipString()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return scanNumber()
        }
    }

    /// Moves past a string starting at its opening quote, checking escapes, surrogate pairs
    /// and control characters (UTF-8 itself is checked by the caller).
    mutating func skipString() -> Bool {
        i += 1
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; return true }
            if c < 0x20 { return false }
            i += 1
            guard c == UInt8(ascii: "\\") else { continue }
            guard i < bytes.count else { return false }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                 UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                continue
            case UInt8(ascii: "u"):
                guard let scalar = hex4() else { return false }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard literal("\\u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return false
                }
            default:
                return false
            }
        }
        return false
    }
}
