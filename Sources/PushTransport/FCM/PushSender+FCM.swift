import Logging
import PushCore

extension PushSender {
    /// Creates a sender to Firebase Cloud Messaging (HTTP v1); starts nothing (see ``start()``).
    ///
    /// Requests go to `{base}/v1/projects/{project_id}/messages:send`, where `base` is
    /// ``FCMConfiguration/effectiveBaseURL`` and `project_id` the service account's.
    /// Each ``PushRequest`` carries the complete request body in `payload`
    /// (`{"message":{"token":…,…}}`, see `FCMMessageBody.build`) and ``ProviderFields/fcm``;
    /// `expiration` is honoured locally. Requests carry `authorization: Bearer` with an access
    /// token from `tokens`; a 401 UNAUTHENTICATED drops that token once and resends at once with
    /// a new one, without reporting the first answer (see ``FCMAnswer/outcome(status:)``).
    ///
    /// - Parameters:
    ///   - configuration: how to connect, as for every provider.
    ///   - fcm: where to post and how many streams per connection.
    ///   - tokens: the service account's access tokens; share one provider per account.
    ///   - logger: for connection events; nothing per notification above `debug`, never a token.
    ///   - onResults: receives answers in batches, on a connection thread.
    /// - Throws: ``PushTransportError`` as the APNs initializer.
    public convenience init(configuration: PushSenderConfiguration, fcm: FCMConfiguration, tokens: FCMAccessTokenProvider,
                            logger: Logger, onResults: @escaping @Sendable ([PushResponse]) -> Void) throws {
        try self.init(provider: FCMProvider(configuration: fcm, tokens: tokens), configuration: configuration,
                      logger: logger, onResults: onResults)
    }
}
