/// Reads `reason` and `timestamp` from an APNs error body such as
/// `{"reason":"Unregistered","timestamp":1700000000000}`.
///
/// A tiny hand parser for the one shape APNs sends: top-level string and integer
/// members, whitespace anywhere, other members skipped. No Foundation on the hot path.
enum APNsErrorBodyParser {
    static func parse(_ body: UnsafeRawBufferPointer) -> (reason: String?, timestamp: Int64?) {
        (stringValue(of: "reason", in: body), integerValue(of: "timestamp", in: body))
    }

    /// The index just after `"key"` followed by optional whitespace and a colon.
    private static func valueStart(of key: StaticString, in body: UnsafeRawBufferPointer) -> Int? {
        let k = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var i = 0
        while i + k.count + 2 <= body.count {
            if body[i] == UInt8(ascii: "\""), body[i + k.count + 1] == UInt8(ascii: "\""),
               memcmpEqual(body, i + 1, k) {
                var j = i + k.count + 2
                while j < body.count, isSpace(body[j]) { j += 1 }
                if j < body.count, body[j] == UInt8(ascii: ":") {
                    j += 1
                    while j < body.count, isSpace(body[j]) { j += 1 }
                    return j
                }
            }
            i += 1
        }
        return nil
    }

    static func stringValue(of key: StaticString, in body: UnsafeRawBufferPointer) -> String? {
        guard let start = valueStart(of: key, in: body), start < body.count, body[start] == UInt8(ascii: "\"") else { return nil }
        var bytes: [UInt8] = []
        var i = start + 1
        while i < body.count {
            let c = body[i]
            if c == UInt8(ascii: "\"") { return String(decoding: bytes, as: UTF8.self) }
            if c == UInt8(ascii: "\\"), i + 1 < body.count {
                i += 1
                let e = body[i]
                switch e {
                case UInt8(ascii: "n"): bytes.append(10)
                case UInt8(ascii: "t"): bytes.append(9)
                case UInt8(ascii: "r"): bytes.append(13)
                case UInt8(ascii: "u"): bytes.append(UInt8(ascii: "?")); i += 4  // not expected from APNs
                default: bytes.append(e)
                }
            } else {
                bytes.append(c)
            }
            i += 1
        }
        return nil
    }

    static func integerValue(of key: StaticString, in body: UnsafeRawBufferPointer) -> Int64? {
        guard let start = valueStart(of: key, in: body) else { return nil }
        var value: Int64 = 0
        var digits = 0
        var i = start
        while i < body.count, body[i] >= UInt8(ascii: "0"), body[i] <= UInt8(ascii: "9"), digits < 18 {
            value = value * 10 + Int64(body[i] - UInt8(ascii: "0"))
            digits += 1
            i += 1
        }
        return digits > 0 ? value : nil
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d }

    private static func memcmpEqual(_ body: UnsafeRawBufferPointer, _ at: Int, _ key: UnsafeRawBufferPointer) -> Bool {
        for n in 0..<key.count where body[at + n] != key[n] { return false }
        return true
    }
}
