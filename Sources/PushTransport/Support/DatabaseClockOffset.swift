import Synchronization

/// How far the database's clock is ahead of this host's, in seconds (negative: behind), as the
/// worker last measured it; senders judge send-time expiry with it (``PushCore/SendTimeExpiry``).
///
/// One instance is shared, through ``PushSenderConfiguration/databaseClock``, by the worker
/// that measures it and every sender it builds; it starts at 0 (the host's clock alone).
/// An atomic: the worker's upkeep writes it, the senders' connection threads read it.
public final class DatabaseClockOffset: Sendable {
    private let value = Atomic<Int64>(0)

    public init(seconds: Int64 = 0) {
        value.store(seconds, ordering: .relaxed)
    }

    /// The offset in seconds.
    public var seconds: Int64 { value.load(ordering: .relaxed) }

    /// Records a new measurement.
    public func set(_ seconds: Int64) { value.store(seconds, ordering: .relaxed) }
}
