import Foundation

/// Google's checks on a `messages:send` body, as a pure function, by Google's rules
/// (``MockFCMRules``): `{"message":{…}}` (and optionally `validate_only`); only the `Message`
/// fields HTTP v1 knows, each of its type; exactly one target; `data` values all strings under
/// keys that are not reserved; the payload within 4096 bytes; a well-formed registration token.
/// A failure carries FCM-like words for a 400 INVALID_ARGUMENT.
enum FCMMessageValidator {
    struct Problem: Error, Equatable {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The registration token the message goes to (nil for a topic or condition), or what is wrong.
    static func check(_ body: [UInt8]) -> Result<String?, Problem> {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else {
            return .failure(Problem("Invalid JSON payload received. Unexpected token."))
        }
        guard let top = parsed as? [String: Any] else {
            return .failure(Problem("Invalid JSON payload received. Expected an object."))
        }
        for key in top.keys.sorted() where !["message", "validate_only", "validateOnly"].contains(key) {
            return .failure(Problem("Invalid JSON payload received. Unknown name \"\(key)\": Cannot find field."))
        }
        guard let message = top["message"] as? [String: Any] else {
            return .failure(Problem("Request contains an invalid argument: message is required."))
        }
        if let problem = checkFields(message) { return .failure(problem) }
        let targets = MockFCMRules.targetFields.filter { message[$0] != nil }
        guard targets.count == 1, let target = message[targets[0]] as? String else {
            return .failure(Problem("Request contains an invalid argument: exactly one of token, topic or condition must be set (found \(targets.count))."))
        }
        if body.count > MockFCMRules.maxPayloadBytes {
            // The payload: the message without its target (only a large body can be over).
            let size = MockJSON.compactSize(message.filter { $0.key != targets[0] })
            if size > MockFCMRules.maxPayloadBytes {
                return .failure(Problem("Request contains an invalid argument: the message payload is \(size) bytes, over the limit of \(MockFCMRules.maxPayloadBytes) (message too big)."))
            }
        }
        guard targets[0] == "token" else { return .success(nil) }
        guard MockFCMRules.isValidRegistrationToken(target) else {
            return .failure(Problem("The registration token is not a valid FCM registration token"))
        }
        return .success(target)
    }

    /// Unknown names and wrong types among the message's fields, and `data`'s keys and values.
    private static func checkFields(_ message: [String: Any]) -> Problem? {
        for key in message.keys.sorted() {
            let value = message[key]!
            if MockFCMRules.messageObjectFields.contains(key) {
                if !(value is [String: Any]) { return Problem("Invalid value at 'message.\(key)': expected an object.") }
            } else if key == "name" || MockFCMRules.targetFields.contains(key) {
                if !(value is String) { return Problem("Invalid value at 'message.\(key)' (TYPE_STRING): expected a string.") }
            } else if key == "data" {
                guard let data = value as? [String: Any] else {
                    return Problem("Invalid value at 'message.data' (type.googleapis.com/google.firebase.fcm.v1.Message.DataEntry): data must be an object.")
                }
                for name in data.keys.sorted() {
                    if !(data[name] is String) {
                        return Problem("Invalid value at 'message.data[\"\(name)\"].value' (TYPE_STRING): values of data must be strings.")
                    }
                    if MockFCMRules.isReservedDataKey(name) {
                        return Problem("Invalid data payload key: \"\(name)\" is a reserved word.")
                    }
                }
            } else {
                return Problem("Invalid JSON payload received. Unknown name \"\(key)\" at 'message': Cannot find field.")
            }
        }
        return nil
    }
}
