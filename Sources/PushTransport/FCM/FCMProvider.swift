import Foundation
import Logging
import PushCore

/// FCM's part of a ``PushSender`` (HTTP v1): one URL for every message,
/// `{base}/v1/projects/{project_id}/messages:send`, whose body carries the registration token;
/// `content-type: application/json`; the answer's message name, error body and `Retry-After`;
/// a connection reopened after a 5xx. Authentication is ``FCMAuthorizer``'s.
struct FCMProvider: PushProvider {
    /// The answer headers kept (``StreamLayout/answerHeaders``), in order.
    enum AnswerHeader {
        static let retryAfter = 0
    }

    let tokens: FCMAccessTokenProvider
    let baseURL: String
    let streamsPerConnection: Int
    let layout: StreamLayout
    var provider: Provider { .fcm }
    var clientCertificate: CurlClientCertificate? { nil }

    /// - Throws: ``PushTransportError`` for a base URL that is not https or a window below 1.
    init(configuration: FCMConfiguration, tokens: FCMAccessTokenProvider) throws {
        try configuration.validate()
        self.tokens = tokens
        baseURL = configuration.effectiveBaseURL
        streamsPerConnection = configuration.streamsPerConnection
        // The authorization node takes any valid access token (`FCMAccessToken.isValidValue`: up
        // to 4096 bytes). FCM's headers are fixed but for it: no node of the provider's own.
        layout = StreamLayout(urlPrefix: Array((baseURL + "/v1/projects/" + tokens.account.projectID + "/messages:send").utf8),
                              urlSuffixCapacity: 0, authorizationPrefix: "authorization: Bearer ", authorizationCapacity: 23 + 4096,
                              headerCapacities: [], fixedHeaders: ["accept:", "content-type: application/json", "expect:"],
                              answerHeaders: ["retry-after:"])
    }

    func makeAuthorizer(logger: Logger) -> FCMAuthorizer {
        FCMAuthorizer(tokens: tokens, layout: layout, logger: logger)
    }

    /// None: the body was checked when it was built (`FCMMessageBody.build`). A request of
    /// another provider's is refused.
    func problem(with request: PushRequest) -> String? {
        request.provider == .fcm ? nil : "a request for \(request.provider.serviceName) cannot go to FCM"
    }

    /// The fixed URL; FCM's headers are fixed but for the bearer token.
    func load(_ request: PushRequest, into stream: StreamSlot) -> TransportFailure? {
        stream.setURL(suffix: "")
    }

    /// The message name of a 200, else the error body and `Retry-After`.
    func answer(status: Int, stream: StreamSlot, request: PushRequest) -> ProviderAnswer {
        var answer = FCMAnswer()
        if status == 200 {
            answer.messageName = FCMSendSuccess.messageName(stream.answerBody)
            return .fcm(answer)
        }
        answer.error = FCMErrorBody.parse(stream.answerBody)
        let retryAfter = stream.answerHeader(AnswerHeader.retryAfter)
        if !retryAfter.isEmpty {
            answer.retryAfterSeconds = FCMVerdict.retryAfterSeconds(String(decoding: retryAfter, as: UTF8.self), now: Int64(time(nil)))
        }
        return .fcm(answer)
    }

    /// A 5xx reopens the connection; nothing else condemns it.
    func connectionAction(after response: PushResponse) -> ConnectionAction {
        (response.status ?? 0) >= 500 ? .reopen : .keep
    }
}
