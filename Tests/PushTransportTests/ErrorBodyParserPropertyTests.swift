import PropertyBased
@testable import PushTransport
import Testing

/// The hand-written APNs error-body parser over generated bodies: it never traps on any bytes,
/// and reads back what a JSON body in any spacing and member order says.
@Suite struct ErrorBodyParserPropertyTests {
    static func parse(_ bytes: [UInt8]) -> (reason: String?, timestamp: Int64?) {
        bytes.withUnsafeBytes { APNsErrorBodyParser.parse($0) }
    }

    static let space = Gen<Character?>.element(of: [" ", "\t", "\n", "\r"] as [Character]).map { $0! }.string(of: 0...3)

    @Test func anyBytesParseWithoutTrapping() async {
        await propertyCheck(count: 2000, input: Gen<UInt8>.value(in: 0...255).array(of: 0...300)) { bytes in
            let (_, timestamp) = Self.parse(bytes)
            if let timestamp { #expect(timestamp >= 0 && timestamp < 1_000_000_000_000_000_000) }
        }
    }

    @Test func bodiesNearTheShapeParseWithoutTrapping() async {
        // Prefixes of well-formed bodies, with escapes cut anywhere (a `\u` at the very end...).
        let body = Gen<String?>.element(of: [#"{"reason":"Un\u00e9registered","timestamp":17000"#, #"{"reason":"a\"b\\c","timestamp":1}"#,
                                             #"{"timestamp" : 99999999999999999999999, "reason" : "\"#]).map { Array($0!.utf8) }
        await propertyCheck(count: 500, input: body, Gen.int(in: 0...80)) { bytes, cut in
            _ = Self.parse(Array(bytes.prefix(cut)))
        }
    }

    @Test func wellFormedBodiesRoundTrip() async {
        let reason = Gen.letterOrNumber.string(of: 0...30)
        await propertyCheck(count: 1000, input: reason, Gen.int64(in: 0...999_999_999_999_999_999), Self.space, Gen.bool) { reason, timestamp, space, timestampFirst in
            let members = ["\"reason\"\(space):\(space)\"\(reason)\"", "\"timestamp\"\(space):\(space)\(timestamp)", "\"other\":{\"reason\":1}"]
            let ordered = timestampFirst ? [members[1], members[0]] : [members[0], members[1]]
            let body = "{\(space)" + ordered.joined(separator: "\(space),\(space)") + "\(space)}"
            let parsed = Self.parse(Array(body.utf8))
            #expect(parsed.reason == reason && parsed.timestamp == timestamp, "\(body)")
        }
    }
}
