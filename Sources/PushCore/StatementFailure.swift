/// Whether a failed database statement would fail the same way if run again on the same rows.
public enum StatementFailure: Sendable, Hashable {
    /// SQLSTATE class 22 (data exception: a value out of range, an infinite timestamp...) or
    /// 23 (integrity constraint violation): the data makes the statement fail, and running it
    /// again on the same rows fails again.
    case deterministic
    /// Anything else: a lost connection (no SQLSTATE), a serialization failure (40001), a
    /// deadlock (40P01), a server shutting down (57P01), a statement timeout (57014)... Worth
    /// running again after a backoff.
    case transient

    /// Classifies a failure by its SQLSTATE (nil when none came: a lost connection, a client error).
    public init(sqlState: String?) {
        switch sqlState?.prefix(2) {
        case "22", "23": self = .deterministic
        default: self = .transient
        }
    }
}
