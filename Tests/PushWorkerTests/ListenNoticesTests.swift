import PGClient
import PushCore
@testable import PushWorker
import Testing

/// What the listen loop does with the notices of one wait (``ListenNotices``), without a
/// database: an insert wakes the loops that claim, a lane change has the lanes read again, and a
/// cancel from the dashboard ends its lane's requests first (it needs no statement), once per lane.
@Suite("Listen notices")
struct ListenNoticesTests {
    static func insert(_ payload: String = "") -> PGNotification {
        PGNotification(channel: ListenNotices.enqueuedChannel, payload: payload, senderPID: 1)
    }

    static func lane(_ payload: String = "") -> PGNotification {
        PGNotification(channel: LaneStops.laneChannel, payload: payload, senderPID: 2)
    }

    static func cancel(_ lane: String) -> PGNotification {
        Self.lane(LaneStops.cancelPayloadPrefix + lane)
    }

    @Test("a wait that timed out calls for nothing")
    func nothing() {
        #expect(ListenNotices([]) == ListenNotices())
    }

    @Test("inserts wake the loops that claim, and no lane is read")
    func inserts() {
        #expect(ListenNotices([Self.insert(), Self.insert()]) == ListenNotices(enqueued: true))
    }

    @Test("a change to pushq.lanes has the lanes read again and wakes no claim")
    func laneChange() {
        #expect(ListenNotices([Self.lane()]) == ListenNotices(lanesChanged: true))
    }

    @Test("each cancelled lane is ended once, in the order its first notice came, and the lanes are read again")
    func cancels() {
        let notices = ListenNotices([Self.cancel("campaign"), Self.cancel("digest"), Self.cancel("campaign"), Self.lane()])
        #expect(notices == ListenNotices(cancelledLanes: ["campaign", "digest"], lanesChanged: true))
    }

    @Test("one wait's inserts, changes and cancels together call for all three")
    func mixed() {
        let notices = ListenNotices([Self.lane(), Self.insert(), Self.cancel("campaign")])
        #expect(notices == ListenNotices(enqueued: true, cancelledLanes: ["campaign"], lanesChanged: true))
    }

    @Test("only the lanes' channel cancels: a cancel-like payload on the insert channel is an insert")
    func cancelOnlyOnLaneChannel() {
        #expect(ListenNotices([Self.insert(LaneStops.cancelPayloadPrefix + "campaign")]) == ListenNotices(enqueued: true))
    }

    @Test("a lane's name is the whole payload after the prefix, even one that holds the prefix again")
    func laneNameAfterPrefix() {
        let notices = ListenNotices([Self.cancel("cancel:x"), Self.lane("cancelled")])
        #expect(notices.cancelledLanes == ["cancel:x"])
        #expect(notices.lanesChanged)
    }
}
