import PushCore
import Testing

/// Labels come from closed sets: what producers write never becomes a new series.
@Suite("Metric labels")
struct MetricLabelTests {
    @Test("reasons pushq, APNs and FCM define are kept; HTTP statuses; anything else is other", arguments: [
        ("", ""), ("Unregistered", "Unregistered"), ("BadDeviceToken", "BadDeviceToken"), ("UNREGISTERED", "UNREGISTERED"),
        ("QUOTA_EXCEEDED", "QUOTA_EXCEEDED"), ("TransportTimeout", "TransportTimeout"), ("ProviderTokenSigningFailed", "ProviderTokenSigningFailed"),
        ("LeaseExpired", "LeaseExpired"), ("WriteBackError", "WriteBackError"), ("SenderUnavailable", "SenderUnavailable"),
        ("HTTP500", "HTTP500"), ("HTTP418", "HTTP418"), ("HTTP600", "other"), ("HTTP5000", "other"), ("HTTPabc", "other"),
        ("my own reason", "other"), ("unregistered", "other"), ("Unregistered\n", "other"),
    ])
    func reason(_ text: String, _ label: String) {
        #expect(MetricLabel.reason(text) == label)
    }

    @Test("every reason pushq, Apple and Google define is its own label")
    func everyKnownReason() {
        for r in MetricLabel.pushqReasons + APNsReason.known.map(\.rawValue) + FCMErrorCode.known.map(\.rawValue) {
            #expect(MetricLabel.reason(r) == r)
        }
    }
}
