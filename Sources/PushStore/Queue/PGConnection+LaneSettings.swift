import PushCore
import PGClient

/// A row of `pushq.lanes` as a worker needs it beside the claim: whether the lane is paused (its
/// requests must not start) and its cap (its requests' starts are paced).
public struct LaneSetting: Sendable, Hashable {
    public var name: String
    public var paused: Bool
    /// `max_per_second`; nil: no cap.
    public var maxPerSecond: Double?

    public init(name: String, paused: Bool, maxPerSecond: Double? = nil) {
        self.name = name
        self.paused = paused
        self.maxPerSecond = maxPerSecond
    }
}

extension PGConnection {
    /// Every row of `pushq.lanes` (a handful: the lanes an operator configured), read when the
    /// lanes' channel (``LaneStops/laneChannel``) says they changed.
    public func laneSettings() throws(PGError) -> [LaneSetting] {
        let r = try query("SELECT name, paused, max_per_second FROM pushq.lanes ORDER BY name")
        var settings: [LaneSetting] = []
        settings.reserveCapacity(r.count)
        for row in r.rows {
            settings.append(LaneSetting(name: try row.string("name") ?? "", paused: try row.string("paused") == "t",
                                        maxPerSecond: try row.decode(Double?.self, "max_per_second")))
        }
        return settings
    }
}
