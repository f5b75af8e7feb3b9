/// The parsed body of an FCM error answer:
/// `{"error":{"code":404,"message":"…","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`.
public struct FCMErrorBody: Sendable, Hashable {
    /// The FcmError detail's `errorCode`, else `error.status`; nil when the body has neither.
    public var code: FCMErrorCode?
    /// `error.message`, e.g. "The registration token is not a valid FCM registration token".
    public var message: String?
    /// Whose quota a 429 is about, when the body says (``FCMQuotaScope``).
    public var quotaScope: FCMQuotaScope?

    public init(code: FCMErrorCode?, message: String?, quotaScope: FCMQuotaScope? = nil) {
        self.code = code
        self.message = message
        self.quotaScope = quotaScope
    }

    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

    /// Reads an error body; nil when it is not JSON with an `error` object.
    public static func parse(_ body: some Collection<UInt8>) -> FCMErrorBody? {
        guard let error = JSONValue.parse(body)?["error"], error.objectValue != nil else { return nil }
        var code: FCMErrorCode? = nil
        for detail in error["details"]?.arrayValue ?? [] {
            if detail["@type"]?.stringValue == fcmErrorType, let c = detail["errorCode"]?.stringValue {
                code = FCMErrorCode(c)
                break
            }
        }
        if code == nil, let status = error["status"]?.stringValue { code = FCMErrorCode(status) }
        return FCMErrorBody(code: code, message: error["message"]?.stringValue, quotaScope: FCMQuotaScope.read(error))
    }

    /// Whether the message says the registration token itself is malformed
    /// (FCM: "The registration token is not a valid FCM registration token").
    public var saysTokenInvalid: Bool {
        guard let message = message?.lowercased() else { return false }
        return message.contains("registration token") && (message.contains("not a valid") || message.contains("invalid"))
    }
}

/// The body of an FCM 200: `{"name":"projects/p/messages/0:1500415314455276%31bd1c9631bd1c96"}`.
public enum FCMSendSuccess {
    /// The message name, nil when the body does not carry one.
    public static func messageName(_ body: some Collection<UInt8>) -> String? {
        guard let name = JSONValue.parse(body)?["name"]?.stringValue, name.hasPrefix("projects/"),
              name.contains("/messages/") else { return nil }
        return name
    }
}
