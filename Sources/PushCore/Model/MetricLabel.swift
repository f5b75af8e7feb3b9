/// Values that may become metric labels: a closed set each, so that nothing a producer writes
/// (a row's `credential` or `last_reason`, both free text) makes a new time series.
///
/// A reason is kept when pushq, APNs or FCM defines it (``reason(_:)``); the worker keeps a
/// credential when it serves it. Anything else is counted as ``other``.
public enum MetricLabel {
    /// The label of every value outside the set.
    public static let other = "other"

    /// `reason` as a label: a reason pushq writes (``pushqReasons``), one of Apple's
    /// (``APNsReason/known``), one of FCM's (``FCMErrorCode/known``), a Web Push one
    /// (``WebPushReason``, `EndpointNotAllowed`, a row's Web Push refusals), a transport failure's,
    /// `HTTP` and a status code from 100 to 599, or empty (none); anything else is ``other``.
    public static func reason(_ text: String) -> String {
        if text.isEmpty || known.contains(text) { return text }
        if text.utf8.count == 7, text.hasPrefix("HTTP"),
           let status = Int(text.dropFirst(4)), (100...599).contains(status) { return text }
        return other
    }

    /// The reasons pushq itself writes to `last_reason`.
    public static let pushqReasons: [String] = [
        "TokenInvalidated", "LeaseExpired", "AttemptsExhausted", "ClaimError", "WriteBackError",
        "InvalidRow", "InvalidPayload", "MissingTopic", "SenderUnavailable",
    ]

    private static let known: Set<String> = {
        var set = Set(pushqReasons)
        set.formUnion(APNsReason.known.map(\.rawValue))
        set.formUnion(FCMErrorCode.known.map(\.rawValue))
        set.formUnion(WebPushReason.allCases.map(\.rawValue))
        set.formUnion([WebPushEndpointRefusal.reason, "InvalidSubscriptionKeys", "InvalidTopic", "InvalidPriority"])
        set.formUnion(TransportFailure.Kind.allCases.map { TransportFailure(kind: $0, message: "").reasonString })
        return set
    }()
}
