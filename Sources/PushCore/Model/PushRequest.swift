import PushCore

/// One notification to send: everything that goes into the HTTP/2 request.
///
/// For a sender to FCM (``APNsSender/init(configuration:fcm:logger:onResults:)``), `payload`
/// is the complete request body (`{"message":{"token":…,…}}`), `deviceToken` the
/// registration token (for the caller's records: it is not sent apart from the body), and
/// the `apns-*` fields are ignored; `expiration` is still honoured locally.
///
/// The sender sends these fields as they are, except for what would break the request
/// itself: a header value (or device token) holding a control character or longer than
/// ``HeaderLimit`` allows is refused before anything is sent, as
/// `TransportFailure.Kind.invalidHeader` (see ``headerProblem``). The rest of validation
/// (token format, payload size, priority for `background`) is the caller's job, because
/// APNs answers a bad value with a rejection that slows the connection down.
public struct APNsRequest: Sendable {
    /// The caller's id for this notification (the row id); copied to the response.
    public var tag: Int64
    /// Device token as hex.
    public var deviceToken: String
    /// The exact request body (a JSON object), byte for byte.
    public var payload: [UInt8]
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-topic`, suffix included.
    public var topic: String
    /// `apns-priority`: 10, 5 or 1.
    public var priority: Int
    /// `apns-expiration` in UNIX seconds, nil for no header.
    public var expiration: Int64?
    /// `apns-collapse-id`, nil for no header.
    public var collapseID: String?
    /// `apns-id`: a lowercase canonical UUID, the same for every attempt.
    public var apnsID: String
    /// The caller's id for this claim of the row (its lease); copied to the response, so that an
    /// answer is matched to the claim that sent it when the same row is claimed again.
    public var claim: Int64
    /// A monotonic time (``monotonicNanoseconds()``) after which the request must not start:
    /// the caller's lease on the row ends soon after. A request still waiting for a stream then
    /// comes back unsent, ``APNsResponse/deadlinePassed``. Nil for no deadline.
    public var startDeadline: Int64?
    /// FCM: times the sender resent this request itself after a 401 (a new access token).
    var fcmResends = 0

    public init(tag: Int64, deviceToken: String, payload: [UInt8], pushType: PushType, topic: String,
                priority: Int, expiration: Int64? = nil, collapseID: String? = nil, apnsID: String,
                claim: Int64 = 0, startDeadline: Int64? = nil) {
        self.tag = tag
        self.claim = claim
        self.startDeadline = startDeadline
        self.deviceToken = deviceToken
        self.payload = payload
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }
}

/// What became of one ``APNsRequest``: APNs' (or FCM's) answer, or the transport failure
/// that kept it from coming.
public struct APNsResponse: Sendable {
    /// The request this answers (its `tag` identifies the row).
    public var request: APNsRequest
    /// `:status`, nil if no answer came.
    public var status: Int?
    /// The `apns-id` response header.
    public var apnsID: String?
    /// The `apns-unique-id` response header (development environment only).
    public var apnsUniqueID: String?
    /// `reason` from the JSON body of an error answer.
    public var reason: APNsReason?
    /// `timestamp` (ms since the epoch) from the JSON body of a 410.
    public var timestamp: Int64?
    /// Why no answer came: the outcome is unknown.
    public var transportFailure: TransportFailure?
    /// The provider token the request carried (token auth), with its age when the answer came.
    public var token: TokenUse?
    /// The request's `expiration` had passed when a stream came free: it was never sent.
    public var expiredBeforeSending = false
    /// The request's ``APNsRequest/startDeadline`` had passed when a stream came free: it was
    /// never sent, and is the caller's to give back (this is no answer).
    public var deadlinePassed = false
    /// How long the answered request took (libcurl's total time, from the moment it was
    /// handed to its connection to the end of the answer), in nanoseconds; 0 without an answer.
    public var durationNanoseconds: Int64 = 0
    /// The service that answered `status`: `.fcm` for an answer from FCM.
    public var provider: Provider = .apns
    /// FCM: the message `name` of a 200 (`projects/{id}/messages/{n}`), nil if the body had none.
    public var fcmMessageName: String?
    /// FCM: the parsed error body of an error answer, nil if it could not be read.
    public var fcmError: FCMErrorBody?
    /// FCM: the answer's `Retry-After`, in seconds from when it came (delta-seconds or an
    /// HTTP-date; ``FCMVerdict/retryAfterSeconds(_:now:)``), nil without one.
    public var retryAfterSeconds: Int64?
    /// FCM: what the sender itself concluded about the credential, without FCM answering this
    /// request: its token exchange was refused (``FCMVerdict/tokenRefused(_:)``), or a fresh
    /// access token got 401 too (`.pauseCredential(.unauthenticated, …)`). Nil otherwise.
    public var fcmCredentialVerdict: FCMVerdict?

    /// `request.tag`.
    public var tag: Int64 { request.tag }

    /// What to do next, classified by ``Outcome/classify(status:reason:timestamp:)`` (APNs),
    /// `.fcm(FCMVerdict.classify(status:error:retryAfter:))` (FCM) or
    /// ``Outcome/classify(_:)-(TransportFailure)`` (no answer, either service).
    ///
    /// FCM: a 401 UNAUTHENTICATED is resent by the sender with a new access token and never
    /// reported, except after two resends (`.fcm(.refreshAccessToken)`) or during shutdown;
    /// a fresh token refused too is ``fcmCredentialVerdict``.
    public var outcome: Outcome {
        if expiredBeforeSending { return .expiredBeforeSending }
        if let fcmCredentialVerdict { return .fcm(fcmCredentialVerdict) }
        if let status {
            if provider == .fcm { return .fcm(FCMVerdict.classify(status: status, error: fcmError, retryAfter: retryAfterSeconds)) }
            return Outcome.classify(status: status, reason: reason, timestamp: timestamp)
        }
        return Outcome.classify(transportFailure ?? TransportFailure(kind: .other, message: "no answer"))
    }
}
