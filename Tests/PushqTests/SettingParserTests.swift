@testable import pushq
import Testing

/// The pure parsers of ``SettingKey/Kind``: what each kind of value accepts and refuses.
@Suite("Setting parsers")
struct SettingParserTests {
    typealias Kind = SettingKey.Kind

    @Test("whole numbers: decimal digits within the range; no fraction, exponent, sign, space or hexadecimal", arguments: [
        ("1", 1), ("1000", 1000), ("007", 7), ("500", 500),
        ("0", nil), ("1001", nil), ("1.5", nil), ("1.0", nil), ("1e3", nil), (" 4", nil), ("4 ", nil), ("+4", nil), ("-1", nil),
        ("0x10", nil), ("1_000", nil), ("1,000", nil), ("99999999999999999999999", nil), ("\u{FF14}", nil), ("four", nil),
    ] as [(String, Int?)])
    func wholeNumbers(text: String, expected: Int?) {
        #expect(Kind.wholeNumber(1...1000).parse(text) == expected.map { .wholeNumber($0) })
    }

    @Test("a whole number range may start at 0")
    func wholeNumberFromZero() {
        #expect(Kind.wholeNumber(0...100_000).parse("0") == .wholeNumber(0))
        #expect(Kind.wholeNumber(0...100_000).parse("100001") == nil)
    }

    @Test("seconds: digits with an optional decimal fraction, within the range", arguments: [
        ("1", 1), ("0.25", 0.25), ("0.01", 0.01), ("3600", 3600), ("12.500", 12.5), ("3600.0", 3600),
        ("0.001", nil), ("0", nil), ("3600.5", nil), ("1e3", nil), (".5", nil), ("5.", nil), (" 1", nil), ("1 ", nil), ("-1", nil),
        ("+1", nil), ("inf", nil), ("nan", nil), ("1,5", nil), ("1.2.3", nil), ("0x1p3", nil), ("1s", nil),
    ] as [(String, Double?)])
    func seconds(text: String, expected: Double?) {
        #expect(Kind.seconds(0.01...3600).parse(text) == expected.map { .seconds($0) })
    }

    @Test("choices: one of the words, case aside; the value is the word as listed", arguments: [
        ("production", "production"), ("Development", "development"), ("PRODUCTION", "production"),
        ("prod", nil), ("production ", nil), ("sandbox", nil),
    ] as [(String, String?)])
    func choices(text: String, expected: String?) {
        #expect(Kind.choice(["production", "development"]).parse(text) == expected.map { .text($0) })
    }

    @Test("URLs: https:// and something after it", arguments: [
        ("https://127.0.0.1:8443", true), ("HTTPS://api.example", true), ("https://a/", true),
        ("http://127.0.0.1:8443", false), ("https://", false), ("127.0.0.1:8443", false), ("ftp://x", false),
    ])
    func urls(text: String, accepted: Bool) {
        #expect((Kind.httpsURL.parse(text) == .text(text)) == accepted)
        #expect((Kind.httpsURL.parse(text) == nil) == !accepted)
    }

    @Test("addresses: host:port, IPv6 in brackets, port 0 to 65535", arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464), ("[::1]:9464", "::1", 9464), ("0.0.0.0:0", "0.0.0.0", 0), ("localhost:65535", "localhost", 65535),
        ("9464", nil, nil), (":9464", nil, nil), ("::1:9464", nil, nil), ("host:65536", nil, nil), ("host:+1", nil, nil),
        ("host:", nil, nil), ("a b:1", nil, nil), ("host: 1", nil, nil),
    ] as [(String, String?, Int?)])
    func addresses(text: String, host: String?, port: Int?) {
        let parsed = Kind.address.parse(text)
        if let host, let port {
            #expect(parsed == .address(HTTPAddress(host: host, port: port)))
        } else {
            #expect(parsed == nil)
        }
    }

    @Test("text and file paths take any text as it is")
    func text() {
        #expect(Kind.text.parse(" a b ") == .text(" a b "))
        #expect(Kind.file.parse("/etc/pushq/key.p8") == .text("/etc/pushq/key.p8"))
    }

    @Test("what each kind accepts, as errors, --help and the docs say it")
    func accepts() {
        #expect(Kind.wholeNumber(1...1000).accepts == "a whole number from 1 to 1000")
        #expect(Kind.seconds(0.01...3600).accepts == "seconds from 0.01 to 3600, decimals allowed")
        #expect(Kind.choice(["text", "json"]).accepts == "text or json")
        #expect(Kind.choice(["a", "b", "c"]).accepts == "one of a, b, c")
        #expect(Kind.httpsURL.accepts == "an https:// URL")
    }
}
