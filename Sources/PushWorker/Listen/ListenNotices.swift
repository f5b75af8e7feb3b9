import PGClient
import PushCore

/// What the notices of one wait of the listen loop call for (``ListenLoop``), decided without a
/// connection: the loop carries it out in this order — wake the loops that claim, end the
/// cancelled lanes' requests, then read `pushq.lanes` again.
struct ListenNotices: Equatable {
    /// The insert trigger's channel: new rows were enqueued, or a channel created or deleted.
    static let enqueuedChannel = "pushq_enqueued"

    /// A notice other than the lanes' came: the claim loop (also one waiting for room, which
    /// looks whether the new rows outrank what it holds) and the channel loop look at once.
    var enqueued = false
    /// The lanes cancelled from the dashboard (payload ``LaneStops/cancelPayloadPrefix`` and the
    /// lane), each once, in the order their first notice came. Cancels go first: they need no statement.
    var cancelledLanes: [String] = []
    /// A notice came on ``LaneStops/laneChannel`` (a change to `pushq.lanes`, or a cancel):
    /// the lanes are read again.
    var lanesChanged = false
}

extension ListenNotices {
    /// What `received`, the notices of one wait, call for.
    init(_ received: [PGNotification]) {
        let prefix = LaneStops.cancelPayloadPrefix
        for notice in received {
            guard notice.channel == LaneStops.laneChannel else {
                enqueued = true
                continue
            }
            lanesChanged = true
            if notice.payload.hasPrefix(prefix) {
                let lane = String(notice.payload.dropFirst(prefix.count))
                if !cancelledLanes.contains(lane) { cancelledLanes.append(lane) }
            }
        }
    }
}
