import Foundation

/// The JSON the mock reads and writes (FCM bodies, OAuth assertions, error bodies), with
/// Foundation: the mock carries no JSON code of pushq's.
enum MockJSON {
    /// `bytes` as a JSON object, or nil when it is not valid JSON or not an object.
    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    /// A JSON number that is an integer (`iat`, `exp`), else nil (`true` and `false` too).
    static func int64(_ value: Any?) -> Int64? {
        // `value is Bool` holds for the numbers 0 and 1 on Linux: a JSON boolean is told by its type code.
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        guard double == double.rounded(), let exact = Int64(exactly: double) else { return nil }
        return exact
    }

    /// The size of `value` written as compact JSON (no spaces, `/` unescaped), bytes.
    static func compactSize(_ value: Any) -> Int {
        (try? JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes, .fragmentsAllowed]))?.count ?? 0
    }

    /// `s` as a JSON string literal, quotes included.
    static func quoted(_ s: String) -> String {
        "\"" + escaped(s) + "\""
    }

    /// `s` escaped for the inside of a JSON string literal.
    static func escaped(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
