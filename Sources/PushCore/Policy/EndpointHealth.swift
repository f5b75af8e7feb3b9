/// Whether an endpoint (credential, environment) is up, judged from its recent answers: a
/// fault of APNs or of the network, as opposed to a fault of one notification.
///
/// The endpoint is **down** when, since its last answer that showed APNs up (any HTTP answer
/// but a 5xx), either
/// - ``unreachableToTrip`` requests in a row could not even connect (TCP refused, TLS
///   handshake failed): that is never one notification's fault; or
/// - ``rowsToTrip`` different notifications failed with a 5xx, a timeout or a lost
///   connection. One notification that always gets 500 while others get 200 never trips it,
///   and so it still ends `failed` after its attempts.
///
/// It is up again at the first answer that shows APNs up. Pure: the ``Decider`` keeps one
/// per endpoint.
public struct EndpointHealth: Sendable, Hashable {
    /// What one answer says about the endpoint (``Outcome/healthSignal``).
    public enum Signal: Sendable, Hashable {
        /// APNs answered with something other than a 5xx.
        case reachable
        /// No connection: refused, unresolvable, TLS handshake failed.
        case unreachable
        /// A 5xx, a timeout, or a connection lost mid-request.
        case serverFailure
        /// Says nothing about APNs (a local error, a cancelled request).
        case none
    }

    /// Connection failures in a row that take the endpoint down. Defaults to 2.
    public let unreachableToTrip: Int
    /// Different notifications failing, with no sign of life between, that take it down. Defaults to 3.
    public let rowsToTrip: Int
    /// Whether the endpoint is down.
    public private(set) var isDown = false
    private var unreachableStreak = 0
    private var failingRows: [Int64] = []

    public init(unreachableToTrip: Int = 2, rowsToTrip: Int = 3) {
        precondition(unreachableToTrip >= 1 && rowsToTrip >= 1)
        self.unreachableToTrip = unreachableToTrip
        self.rowsToTrip = rowsToTrip
    }

    /// Records one answer to notification `row`.
    public mutating func record(_ signal: Signal, row: Int64) {
        switch signal {
        case .reachable:
            isDown = false
            unreachableStreak = 0
            failingRows.removeAll(keepingCapacity: true)
        case .unreachable, .serverFailure:
            if signal == .unreachable { unreachableStreak += 1 }
            if failingRows.count < rowsToTrip, !failingRows.contains(row) { failingRows.append(row) }
            if unreachableStreak >= unreachableToTrip || failingRows.count >= rowsToTrip { isDown = true }
        case .none:
            break
        }
    }
}
