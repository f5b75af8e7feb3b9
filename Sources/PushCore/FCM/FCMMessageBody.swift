/// Builds the body of `POST /v1/projects/{project_id}/messages:send` from a producer's
/// payload and a registration token, without re-serializing the producer's bytes.
///
/// The producer's payload is the FCM `message` object without its target, e.g.
/// `{"notification":{"title":"Hi"},"data":{"k":"v"}}`. The body is
/// `{"message":{"token":"<token>",<the payload's members, byte for byte>}}`: the token
/// member is spliced in after the payload's opening brace.
public enum FCMMessageBody {
    /// Why a payload or token cannot be sent.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The token is empty, too long, or has a character outside base64url and `:`.
        case invalidToken
        /// The payload is not one JSON value.
        case payloadNotJSON
        /// The payload is JSON but not an object.
        case payloadNotObject
        /// The payload already names a target (`token`, `topic` or `condition`); pushq sets it.
        case payloadHasTarget(String)

        public var description: String {
            switch self {
            case .invalidToken:
                return "the FCM registration token must be 1 to 4096 characters of A-Z a-z 0-9 - _ :"
            case .payloadNotJSON:
                return "the FCM payload is not valid JSON"
            case .payloadNotObject:
                return "the FCM payload must be a JSON object (FCM's message without token)"
            case .payloadHasTarget(let key):
                return "the FCM payload must not contain \"\(key)\": pushq adds the device's registration token"
            }
        }
    }

    /// Whether `token` is a plausible registration token: 1 to 4096 characters of
    /// base64url (`A-Z a-z 0-9 - _`) and `:`, which need no JSON or URL escaping.
    public static func isValidToken(_ token: some StringProtocol) -> Bool {
        // On the hot path of the worker (one call per FCM row) and of the mock: read the bytes
        // in place when they are contiguous (a native String's are) instead of through the
        // generic UTF8View iterator, which profiled at ~13 % of the mock's time.
        if let valid = token.utf8.withContiguousStorageIfAvailable({ isValidToken(bytes: $0) }) { return valid }
        return isValidToken(bytes: Array(token.utf8))
    }

    private static func isValidToken(bytes: some Collection<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 4096 else { return false }
        for c in bytes {
            let valid = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
                || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ":")
            if !valid { return false }
        }
        return true
    }

    /// Checks `payload` (a JSON object naming no target) and `token`.
    public static func check(payload: [UInt8], token: some StringProtocol) -> Problem? {
        guard isValidToken(token) else { return .invalidToken }
        switch JSONValue.scanObject(payload, forKeys: targetKeys) {
        case .notJSON: return .payloadNotJSON
        case .notObject: return .payloadNotObject
        case .object(let target?): return .payloadHasTarget(target)
        case .object(nil): return nil
        }
    }

    private static let targetKeys = ["token", "topic", "condition"]

    /// The request body for `payload` sent to `token`.
    ///
    /// - Returns: the body, or the ``Problem`` that prevents sending.
    public static func build(payload: [UInt8], token: String) -> Result<[UInt8], Problem> {
        if let problem = check(payload: payload, token: token) { return .failure(problem) }
        // check() proved the payload is an object: its first non-space byte is `{`.
        var open = 0
        while payload[open] != UInt8(ascii: "{") { open += 1 }
        var close = payload.count - 1
        while payload[close] != UInt8(ascii: "}") { close -= 1 }
        var inner = open + 1
        while inner < close, payload[inner] == 0x20 || payload[inner] == 0x09 || payload[inner] == 0x0a || payload[inner] == 0x0d {
            inner += 1
        }
        let empty = inner == close
        var body: [UInt8] = []
        body.reserveCapacity(payload.count + token.utf8.count + 32)
        body.append(contentsOf: #"{"message":{"token":""#.utf8)
        body.append(contentsOf: token.utf8)
        body.append(UInt8(ascii: "\""))
        if !empty { body.append(UInt8(ascii: ",")) }
        body.append(contentsOf: payload[(open + 1)...close])
        body.append(UInt8(ascii: "}"))
        return .success(body)
    }
}
