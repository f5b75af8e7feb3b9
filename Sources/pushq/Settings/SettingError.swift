/// A setting whose value pushq cannot use: names the variable or flag, the value and what is
/// allowed, e.g. `PUSHQ_FCM_STREAMS=1.5: expected a whole number from 1 to 1000`.
///
/// Thrown out of a command, it prints as `Error: <description>` without the usage text.
struct SettingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The variable (`PUSHQ_FCM_STREAMS`) or flag (`--apns-url`) the value came from.
    var setting: String
    /// The value as given; nil for a required setting that was not given.
    var value: String?
    /// What is allowed instead.
    var expected: String

    var description: String {
        guard let value else { return "\(setting) is not set: expected \(expected)" }
        return "\(setting)=\(value): expected \(expected)"
    }
}
