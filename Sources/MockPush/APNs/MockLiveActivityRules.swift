/// What Apple requires of a Live Activity payload (`apns-push-type: liveactivity`), per event,
/// as the mock checks it.
///
/// Apple, "Starting and updating Live Activities with ActivityKit push notifications"
/// (developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications):
/// the `aps` dictionary carries `timestamp` (UNIX seconds) and `event`, one of `start`,
/// `update` and `end`; a `start` carries `attributes-type`, `attributes` and `content-state`;
/// an `update` carries `content-state`; an `end` may carry a final `content-state` and a
/// `dismissal-date`. `stale-date` and `dismissal-date` are UNIX seconds. A broadcast
/// ("Sending broadcast push notification requests to APNs") updates or ends the activities
/// subscribed to its channel: it cannot start one.
///
/// Apple's APNs answers such a payload 200 and the device drops it; the mock answers 400
/// `MockInvalidLiveActivityPayload` so that the mistake shows in a test. Apple's example of a
/// `start` also carries an `alert`, which the documentation does not call required: the mock
/// does not require it.
public enum MockLiveActivityRules {
    /// The events a payload may carry.
    public static let events: Set<String> = ["start", "update", "end"]

    /// Why `body` is not a Live Activity payload Apple's devices act on, or nil.
    ///
    /// - Parameter broadcast: the payload goes to a channel (no `start`).
    public static func problem(_ body: [UInt8], broadcast: Bool) -> String? {
        guard let payload = MockJSON.object(body), let aps = payload["aps"] as? [String: Any] else {
            return "no aps dictionary"
        }
        guard let event = aps["event"] as? String, events.contains(event) else {
            return "aps.event is not start, update or end"
        }
        guard MockJSON.int64(aps["timestamp"]) != nil else { return "aps.timestamp is not UNIX seconds" }
        for key in ["stale-date", "dismissal-date"] where aps[key] != nil && MockJSON.int64(aps[key]) == nil {
            return "aps.\(key) is not UNIX seconds"
        }
        let hasState = aps["content-state"] is [String: Any]
        switch event {
        case "start":
            if broadcast { return "a broadcast cannot start a Live Activity" }
            guard aps["attributes-type"] is String, aps["attributes"] is [String: Any], hasState else {
                return "a start needs attributes-type, attributes and content-state"
            }
        case "update":
            guard hasState else { return "an update needs content-state" }
        default:
            if aps["content-state"] != nil && !hasState { return "content-state is not a dictionary" }
        }
        return nil
    }
}
