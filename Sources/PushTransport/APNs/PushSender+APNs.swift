import Logging
import PushCore

extension PushSender {
    /// Creates a sender to APNs; starts nothing (see ``start()``).
    ///
    /// Requests go to `{base}/3/device/{device token}`, where `base` is
    /// ``APNsConfiguration/effectiveBaseURL`` (Apple's host for its environment, or its
    /// `baseURL`), with the `apns-*` headers of their ``ProviderFields/apns(_:)``.
    ///
    /// - Parameters:
    ///   - configuration: how to connect, as for every provider.
    ///   - apns: where to post and how many streams per connection.
    ///   - credential: token or certificate authentication.
    ///   - logger: for connection events; nothing per notification above `debug`, never a token.
    ///   - onResults: receives answers in batches, on a connection thread.
    /// - Throws: ``PushTransportError`` if libcurl lacks HTTP/2 or is too old, a configuration
    ///   is invalid, the CA file or client certificate cannot be read (the message names the
    ///   file), or libcurl refuses a setting.
    public convenience init(configuration: PushSenderConfiguration, apns: APNsConfiguration, credential: APNsCredential,
                            logger: Logger, onResults: @escaping @Sendable ([PushResponse]) -> Void) throws {
        try self.init(provider: APNsProvider(configuration: apns, credential: credential), configuration: configuration,
                      logger: logger, onResults: onResults)
    }
}
