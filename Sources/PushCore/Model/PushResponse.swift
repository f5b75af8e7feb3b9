/// What became of one ``PushRequest``: its provider's answer, or why none came.
public struct PushResponse: Sendable {
    /// The request this answers (its `tag` identifies the row, its `claim` the claim).
    public var request: PushRequest
    /// `:status`, nil if no answer came.
    public var status: Int?
    /// What the provider said beyond the status (its answer headers and body), or what the
    /// sender concluded about the credential without an answer; nil otherwise.
    public var answer: ProviderAnswer?
    /// Why no answer came: the outcome is unknown.
    public var transportFailure: TransportFailure?
    /// The provider token the request carried (APNs token auth), with its age when the answer came.
    public var token: TokenUse?
    /// The request's `expiration` had passed when a stream came free: it was never sent.
    public var expiredBeforeSending = false
    /// The request's ``PushRequest/startDeadline`` had passed when a stream came free: it was
    /// never sent, and is the caller's to give back (this is no answer).
    public var deadlinePassed = false
    /// The request's lane was paused (``LaneStops``) when it left the sender's queue: it was
    /// never sent, and is the caller's to give back (or to end, if the lane was cancelled).
    public var laneStopped = false
    /// How long the answered request took (libcurl's total time, from the moment it was
    /// handed to its connection to the end of the answer), in nanoseconds; 0 without an answer.
    public var durationNanoseconds: Int64 = 0

    public init(request: PushRequest, status: Int? = nil, answer: ProviderAnswer? = nil, transportFailure: TransportFailure? = nil) {
        self.request = request
        self.status = status
        self.answer = answer
        self.transportFailure = transportFailure
    }

    /// `request.tag`.
    public var tag: Int64 { request.tag }

    /// APNs' answer headers and error body, nil for another provider's or without an answer.
    public var apns: APNsAnswer? {
        if case .apns(let a)? = answer { return a }
        return nil
    }

    /// FCM's answer, nil for another provider's or without one.
    public var fcm: FCMAnswer? {
        if case .fcm(let a)? = answer { return a }
        return nil
    }

    /// A Web Push service's answer (or the sender's endpoint refusal), nil for another provider's or without one.
    public var webPush: WebPushAnswer? {
        if case .webPush(let a)? = answer { return a }
        return nil
    }

    /// What to do next: the provider's classification of its answer (``ProviderAnswer/outcome(status:)``),
    /// else ``Outcome/classify(_:)-(TransportFailure)`` (no answer, any provider).
    ///
    /// A broadcast has no device token to invalidate: an answer that would invalidate one (a 410
    /// Apple does not document for broadcasts) ends it `failed` with the same reason instead.
    public var outcome: Outcome {
        if expiredBeforeSending { return .expiredBeforeSending }
        if let verdict = answer?.outcome(status: status) {
            if case .invalidateToken(let reason, _) = verdict, case .apns(let headers) = request.fields, headers.isBroadcast {
                return .fail(reason)
            }
            return verdict
        }
        return Outcome.classify(transportFailure ?? TransportFailure(kind: .other, message: "no answer"))
    }

    /// The reason recorded in `last_reason`: the provider's (APNs' `reason`, FCM's error code),
    /// else the transport failure's, else `HTTP` and the status; nil for none (a 200 without one).
    public var reasonText: String? {
        answer?.reasonText ?? transportFailure?.reasonString ?? status.map { "HTTP\($0)" }
    }
}

/// The provider's own part of an answer (``PushResponse/answer``).
public enum ProviderAnswer: Sendable, Hashable {
    case apns(APNsAnswer)
    case fcm(FCMAnswer)
    case webPush(WebPushAnswer)

    /// The provider's classification of an answer with `status` (nil: no HTTP answer), nil
    /// when this answer does not decide it (no status, and no verdict of the sender's own).
    public func outcome(status: Int?) -> Outcome? {
        switch self {
        case .apns(let a): return status.map { Outcome.classify(status: $0, reason: a.reason, timestamp: a.timestamp) }
        case .fcm(let a): return a.outcome(status: status)
        case .webPush(let a): return a.verdict(status: status).map { .webPush($0) }
        }
    }

    /// The provider's reason for `last_reason`, nil when it gave none.
    public var reasonText: String? {
        switch self {
        case .apns(let a): return a.reason?.rawValue
        case .fcm(let a): return a.error?.code?.rawValue
        case .webPush(let a): return a.endpointRefusal?.reason
        }
    }
}
