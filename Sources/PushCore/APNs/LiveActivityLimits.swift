/// Apple's limits on a Live Activity, which bound how long its update token can be of use.
///
/// "A Live Activity can be active for up to eight hours unless its app or a person ends it
/// before this limit. After the eight-hour limit, the system automatically ends the Live
/// Activity […]. However, the Live Activity remains on the Lock Screen until a person removes it
/// or for up to four additional hours" (ActivityKit, "Displaying live data with Live
/// Activities"; `ActivityUIDismissalPolicy.default`: "up to four hours after it ends"). A
/// `live_activity` token registered longer ago than both together belongs to an activity that is
/// gone from every screen, whatever happened to it: the pruner retires it (`AgeLimit`).
///
/// Apple gives no such limit for push-to-start tokens: they stay valid until APNs says otherwise
/// or the app registers a newer one.
public enum LiveActivityLimits {
    /// Seconds an activity may run before the system ends it: 8 hours.
    public static let activeSeconds: Double = 8 * 3600
    /// Seconds an ended activity may stay on the Lock Screen: 4 hours.
    public static let endedSeconds: Double = 4 * 3600
    /// Seconds after its registration past which a `live_activity` token is of no use: 12 hours.
    public static var tokenLifetimeSeconds: Double { activeSeconds + endedSeconds }
}
