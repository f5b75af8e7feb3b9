/// What APNs answered beside the status (``ProviderAnswer/apns(_:)``).
public struct APNsAnswer: Sendable, Hashable {
    /// The `apns-id` response header.
    public var apnsID: String?
    /// The `apns-unique-id` response header (development environment only).
    public var uniqueID: String?
    /// `reason` from the JSON body of an error answer.
    public var reason: APNsReason?
    /// `timestamp` (ms since the epoch) from the JSON body of a 410.
    public var timestamp: Int64?
    /// The `apns-request-id` response header: a broadcast's id (the request's own, echoed, or one
    /// APNs made); nil for a request to a device, which gets `apns-id`.
    public var requestID: String?

    public init(apnsID: String? = nil, uniqueID: String? = nil, reason: APNsReason? = nil, timestamp: Int64? = nil,
                requestID: String? = nil) {
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.reason = reason
        self.timestamp = timestamp
        self.requestID = requestID
    }
}
