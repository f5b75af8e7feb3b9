/// The lanes whose requests must not start: the paused lanes of `pushq.lanes`, as a worker last
/// read them (on the lanes' `NOTIFY`, ``laneChannel``).
///
/// Mirrors the claim's rule: a lane with its own row of `pushq.lanes` is paused when that row
/// says so; a lane without one takes `default`'s. ``stops(_:)`` is one or two set look-ups: it
/// runs for every request that leaves a sender's queue while any lane is paused.
public struct LaneStops: Sendable, Equatable {
    /// Lanes paused by their own row.
    public private(set) var paused: Set<String> = []
    /// `default` is paused: so is every lane without a row of its own, i.e. every lane but
    /// ``running``.
    public private(set) var othersPaused = false
    /// Lanes with a row of their own that is not paused (read only when ``othersPaused``).
    public private(set) var running: Set<String> = []

    /// No lane stopped.
    public init() {}

    /// The stops of these rows of `pushq.lanes` (name, paused).
    public init(lanes: [(name: String, paused: Bool)]) {
        for lane in lanes {
            if lane.paused { paused.insert(lane.name) } else { running.insert(lane.name) }
        }
        othersPaused = paused.contains(Self.defaultLane)
        if !othersPaused { running = [] }
    }

    /// Whether no lane is stopped.
    public var isEmpty: Bool { paused.isEmpty && !othersPaused }

    /// Whether requests of `lane` must not start.
    public func stops(_ lane: String) -> Bool {
        othersPaused ? !running.contains(lane) : paused.contains(lane)
    }

    /// The lane every row without a lane is in, whose row of `pushq.lanes` the others without one follow.
    public static let defaultLane = "default"

    /// The workers' channel of lane changes: migration 59's trigger on `pushq.lanes` notifies it
    /// with an empty payload, the dashboard's lane cancel with ``cancelPayloadPrefix`` and the lane.
    public static let laneChannel = "pushq_lanes"

    /// What starts the payload of a lane cancel on ``laneChannel``: `cancel:<lane>`.
    public static let cancelPayloadPrefix = "cancel:"
}
