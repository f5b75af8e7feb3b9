import Foundation
import Logging
import PushCore

/// APNs' part of a ``PushSender``: the URL `…/3/device/<token>` (or, for a broadcast,
/// `…/4/broadcasts/apps/<bundle id>` with `apns-channel-id`), the `apns-*` headers, the
/// answer's `apns-id`, `apns-request-id`, `apns-unique-id` and error body, and what answers do
/// to the connection (``ConnectionAction/forAnswer(status:reason:)``). Authentication is
/// ``APNsAuthorizer``'s.
struct APNsProvider: PushProvider {
    /// The provider's header nodes (``StreamLayout/headerCapacities``), in order.
    enum Header {
        static let pushType = 0, topic = 1, priority = 2, apnsID = 3, expiration = 4, collapseID = 5, channelID = 6
        /// Bytes per node, NUL included: every value within ``APNsHeaders/Limit`` fits
        /// (`prefix + limit + 1`; the `apns-id` node also takes `apns-request-id: `).
        static let capacities = [64, 13 + APNsHeaders.Limit.topic, 16 + APNsHeaders.Limit.priorityDigits,
                                 18 + APNsHeaders.Limit.apnsID, 64, 19 + APNsHeaders.Limit.collapseID,
                                 18 + APNsHeaders.Limit.channelID]
    }

    /// The answer headers kept (``StreamLayout/answerHeaders``), in order.
    enum AnswerHeader {
        static let apnsID = 0, uniqueID = 1, requestID = 2
    }

    /// The room after the base URL: `/3/device/<token>` or `/4/broadcasts/apps/<bundle id>`.
    static let pathCapacity = max(10 + APNsHeaders.Limit.deviceToken, 19 + APNsHeaders.Limit.topic)

    let credential: APNsCredential
    let baseURL: String
    let streamsPerConnection: Int
    let layout: StreamLayout
    let clientCertificate: CurlClientCertificate?
    /// The client certificate's notAfter (UNIX seconds), checked before each new connection.
    let certificateNotAfter: Int64?
    var provider: Provider { .apns }

    /// - Throws: ``PushTransportError`` for a base URL that is not https, a window below 1, or a
    ///   client certificate that cannot be opened (the message names the file).
    init(configuration: APNsConfiguration, credential: APNsCredential) throws {
        try configuration.validate()
        self.credential = credential
        baseURL = configuration.effectiveBaseURL
        streamsPerConnection = configuration.streamsPerConnection
        let checked = try credential.checkedClientCertificate()
        clientCertificate = checked?.options
        certificateNotAfter = checked?.notAfter
        // The authorization node takes a provider token (a JWT of ~200 bytes).
        layout = StreamLayout(urlPrefix: Array(baseURL.utf8), urlSuffixCapacity: Self.pathCapacity,
                              authorizationPrefix: "authorization: bearer ", authorizationCapacity: 1024,
                              headerCapacities: Header.capacities, fixedHeaders: ["accept:", "content-type:", "expect:"],
                              answerHeaders: ["apns-id:", "apns-unique-id:", "apns-request-id:"])
    }

    func makeAuthorizer(logger: Logger) -> APNsAuthorizer {
        APNsAuthorizer(credential: credential, certificateNotAfter: certificateNotAfter, layout: layout, logger: logger)
    }

    /// ``APNsHeaders/problem(deviceToken:)``; a request of another provider's is refused too.
    func problem(with request: PushRequest) -> String? {
        guard case .apns(let headers) = request.fields else { return "a request for \(request.provider.serviceName) cannot go to APNs" }
        return headers.problem(deviceToken: request.deviceToken)
    }

    /// The URL (the device token, or a broadcast's bundle id, in the path) and the `apns-*`
    /// headers, in place. The request passed ``problem(with:)``: every value fits, and one that
    /// still does not is reported the same way (`invalidHeader`).
    func load(_ request: PushRequest, into stream: StreamSlot) -> TransportFailure? {
        guard case .apns(let headers) = request.fields else {
            return TransportFailure(kind: .invalidHeader, message: "a request for \(request.provider.serviceName) cannot go to APNs")
        }
        var fits = stream.setHeader(Header.pushType, prefix: "apns-push-type: ", value: headers.pushType.rawValue)
        fits = fits && stream.setHeader(Header.priority, prefix: "apns-priority: ", integer: Int64(headers.priority))
        if let channelID = headers.channelID {
            // A broadcast: the bundle id in the path, no apns-topic, its id as apns-request-id,
            // and apns-expiration always (0, deliver once and store nothing, when none is set).
            if let failure = stream.setURL(path: "/4/broadcasts/apps/", suffix: headers.topic) { return failure }
            stream.clearHeader(Header.topic)
            fits = fits && stream.setHeader(Header.channelID, prefix: "apns-channel-id: ", value: channelID)
            fits = fits && stream.setHeader(Header.apnsID, prefix: "apns-request-id: ", value: headers.apnsID)
            fits = fits && stream.setHeader(Header.expiration, prefix: "apns-expiration: ", integer: request.expiration ?? 0)
            stream.clearHeader(Header.collapseID)
        } else {
            if let failure = stream.setURL(path: "/3/device/", suffix: request.deviceToken) { return failure }
            stream.clearHeader(Header.channelID)
            fits = fits && stream.setHeader(Header.topic, prefix: "apns-topic: ", value: headers.topic)
            fits = fits && stream.setHeader(Header.apnsID, prefix: "apns-id: ", value: headers.apnsID)
            if let expiration = request.expiration {
                fits = fits && stream.setHeader(Header.expiration, prefix: "apns-expiration: ", integer: expiration)
            } else {
                stream.clearHeader(Header.expiration)
            }
            if let collapseID = headers.collapseID {
                fits = fits && stream.setHeader(Header.collapseID, prefix: "apns-collapse-id: ", value: collapseID)
            } else {
                stream.clearHeader(Header.collapseID)
            }
        }
        guard fits else {
            return TransportFailure(kind: .invalidHeader, message: "a header value (topic, priority, apns-id, expiration, collapse id or channel id) is too long for its header")
        }
        return nil
    }

    /// `apns-id` (the request's own string when it echoes it: nothing allocated), `apns-unique-id`,
    /// and the `reason` and `timestamp` of an error body.
    func answer(status: Int, stream: StreamSlot, request: PushRequest) -> ProviderAnswer {
        var answer = APNsAnswer()
        let id = stream.answerHeader(AnswerHeader.apnsID)
        if case .apns(let headers) = request.fields, id.elementsEqual(headers.apnsID.utf8) {
            answer.apnsID = headers.apnsID
        } else if !id.isEmpty {
            answer.apnsID = String(decoding: id, as: UTF8.self)
        }
        let uniqueID = stream.answerHeader(AnswerHeader.uniqueID)
        if !uniqueID.isEmpty { answer.uniqueID = String(decoding: uniqueID, as: UTF8.self) }
        let requestID = stream.answerHeader(AnswerHeader.requestID)
        if !requestID.isEmpty { answer.requestID = String(decoding: requestID, as: UTF8.self) }
        if status != 200, !stream.answerBody.isEmpty {
            let parsed = stream.answerBody.withUnsafeBytes { APNsErrorBodyParser.parse($0) }
            answer.reason = parsed.reason.map(APNsReason.init)
            answer.timestamp = parsed.timestamp
        }
        return .apns(answer)
    }

    func connectionAction(after response: PushResponse) -> ConnectionAction {
        ConnectionAction.forAnswer(status: response.status ?? 0, reason: response.apns?.reason)
    }
}
