import PushCore
import Testing

@Suite struct FCMMessageBodyTests {
    static let token = "dGVzdA-_:APA91bH" + String(repeating: "x", count: 140)

    func build(_ payload: String, token: String = token) -> Result<String, FCMMessageBody.Problem> {
        FCMMessageBody.build(payload: Array(payload.utf8), token: token).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func splicesTheTokenKeepingTheProducersBytes() {
        let payload = #"{ "data" : {"k":"v","n":"1"},"notification":{"title":"Hé \u00e9"} }"#
        #expect(build(payload) == .success(#"{"message":{"token":""# + Self.token + #"", "data" : {"k":"v","n":"1"},"notification":{"title":"Hé \u00e9"} }}"#))
    }

    @Test func emptyObjectAndWhitespace() throws {
        #expect(build("{}") == .success(#"{"message":{"token":""# + Self.token + #""}}"#))
        // Whitespace is the producer's and stays, byte for byte.
        #expect(build(" \n{ \n } \n") == .success(#"{"message":{"token":""# + Self.token + "\" \n }}"))
        let body = try build("\n {\"data\":{}}\n").get()
        #expect(JSONValue.parse(Array(body.utf8))?["message"]?["token"]?.stringValue == Self.token)
        #expect(JSONValue.parse(Array(body.utf8))?["message"]?["data"] == .object([]))
    }

    /// (payload, token) → problem.
    static let problems: [(String, String, FCMMessageBody.Problem)] = [
        (#"{"data":{}}"#, "", .invalidToken),
        (#"{"data":{}}"#, "abc\"def", .invalidToken),
        (#"{"data":{}}"#, "abc def", .invalidToken),
        (#"{"data":{}}"#, "abc/def", .invalidToken),
        (#"{"data":{}}"#, String(repeating: "a", count: 4097), .invalidToken),
        (#"{"data":{}"#, token, .payloadNotJSON),
        (#"{"data":{}},"#, token, .payloadNotJSON),
        ("", token, .payloadNotJSON),
        (#"["data"]"#, token, .payloadNotObject),
        (#""x""#, token, .payloadNotObject),
        (#"{"token":"other","data":{}}"#, token, .payloadHasTarget("token")),
        (#"{"topic":"news"}"#, token, .payloadHasTarget("topic")),
        (#"{"condition":"'a' in topics"}"#, token, .payloadHasTarget("condition")),
    ]

    @Test(arguments: problems.indices)
    func refuses(_ i: Int) {
        let (payload, token, problem) = Self.problems[i]
        #expect(build(payload, token: token) == .failure(problem))
        #expect(!problem.description.isEmpty)
    }
}

@Suite struct JSONValueTests {
    /// scanObject (no tree) must judge every document exactly as parse does.
    static let corpus: [String] = [
        "{}", " { } ", #"{"a":1}"#, #"{"a":[1,2,{"b":null}],"c":"x\"y"}"#, #"{"token":"t"}"#, #"{"x":1,"topic":"n"}"#,
        #"{"\u0074oken":"t"}"#, #"{"condition":1,"token":2}"#, #"{"data":{"token":"nested"}}"#,
        "[]", "1", "-0.5e+3", #""s""#, "true", "null",
        "", "{", "}", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{a:1}"#, "{} {}", #"{"a":01}"#, #"{"a":1.}"#,
        #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud83d\ude00"}"#, "{\"a\":\"\u{01}\"}",
        #"{"a":tru}"#, #"{"a":[1,]}"#, #"{"a":[}"#,
    ]

    @Test func scanAgreesWithParse() {
        let keys = ["token", "topic", "condition"]
        for text in Self.corpus {
            let bytes = Array(text.utf8)
            let expected: JSONValue.ObjectScan
            switch JSONValue.parse(bytes) {
            case nil: expected = .notJSON
            case .object(let members)?: expected = .object(firstKey: members.first { keys.contains($0.key) }?.key)
            case _?: expected = .notObject
            }
            #expect(JSONValue.scanObject(bytes, forKeys: keys) == expected, "\(text)")
        }
        #expect(JSONValue.scanObject([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d], forKeys: keys) == .notJSON)
        #expect(JSONValue.scanObject(Array(String(repeating: "[", count: 100).utf8), forKeys: keys) == .notJSON)
        #expect(JSONValue.scanObject(Array(#"{"\u0074oken":"t"}"#.utf8), forKeys: keys) == .object(firstKey: "token"))
    }

    @Test func parsesAndRejects() {
        #expect(JSONValue.parse(Array(#"{"a":[1,-2.5e3,true,false,null,"x\ny\u00e9\ud83d\ude00"]}"#.utf8))
            == .object([("a", .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null, .string("x\nyé😀")]))]))
        for bad in ["", "{", "{\"a\":1,}", "[1,]", "01", "1.", "\"\\x\"", "\"a\u{01}\"", "{} {}", "nul", "\"\\ud800\""] {
            #expect(JSONValue.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(JSONValue.parse(Array(String(repeating: "[", count: 100).utf8) + Array(String(repeating: "]", count: 100).utf8)) == nil)
        #expect(JSONValue.parse([0x22, 0xff, 0x22]) == nil)
        #expect(JSONValue.quoted("a\"b\\c\n\u{01}") == #""a\"b\\c\n\u0001""#)
        #expect(JSONValue.quoted("x\u{7f}é") == #""x\u007fé""#)
    }
}
