import PushCore
import PushTransport

/// What the worker asks of a sender, whatever its provider: an APNs or FCM ``PushSender`` (one
/// per endpoint), or a Web Push ``WebPushSender`` (one per credential, which checks each
/// endpoint and keeps connections per origin). The loops hold them as `any Sender`, keyed by
/// the endpoint they were made for (``PushWorker/sender(for:)``).
protocol Sender: AnyObject, Sendable {
    /// Starts its threads.
    func start() throws
    /// Queues requests; answers come back through the `onResults` it was made with.
    func submit(_ batch: [PushRequest]) throws
    /// Takes back the queued requests of the stopped lanes, unsent.
    func stopLanes(_ stops: LaneStops) -> [PushRequest]
    /// Takes back the queued requests of `lane`, unsent.
    func withdraw(lane: String) -> [PushRequest]
    /// Streams free right now (negative when more is queued than can start).
    var freeSlots: Int { get }
    /// Connection counters and gauges, for the metrics.
    func stats() -> PushSender.Stats
    /// Stops, waiting for answers in flight up to `deadline`; returns what was never sent.
    func shutdown(deadline: Duration) async -> [PushRequest]
}

extension PushSender: Sender {}
extension WebPushSender: Sender {}

extension Endpoint {
    /// The key of this endpoint's sender in the worker's senders: the endpoint itself, but a Web
    /// Push endpoint without its origin (one sender per credential checks and serves every origin).
    var senderKey: Endpoint { provider == .webpush ? .webPush(credential, origin: nil) : self }
}
