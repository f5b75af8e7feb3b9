import Logging
import PushCore

extension PushSender {
    /// Creates a sender to APNs; starts nothing (see ``start()``).
    ///
    /// Requests go to `{base}/3/device/{device token}`, where `base` is
    /// ``PushSenderConfiguration/effectiveBaseURL`` (Apple's host for the configuration's
    /// environment, or its `baseURL`), with the `apns-*` headers of their ``ProviderFields/apns(_:)``.
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect; `fcmBaseURL` is not used.
    ///   - credential: token or certificate authentication.
    ///   - logger: for connection events; nothing per notification above `debug`, never a token.
    ///   - onResults: receives answers in batches, on a connection thread.
    /// - Throws: ``PushTransportError`` if libcurl lacks HTTP/2 or is too old, the configuration
    ///   is invalid, the CA file or client certificate cannot be read (the message names the
    ///   file), or libcurl refuses a setting.
    public convenience init(configuration: PushSenderConfiguration, apns credential: APNsCredential, logger: Logger,
                            onResults: @escaping @Sendable ([PushResponse]) -> Void) throws {
        try self.init(provider: APNsProvider(configuration: configuration, credential: credential), configuration: configuration,
                      logger: logger, onResults: onResults)
    }
}
