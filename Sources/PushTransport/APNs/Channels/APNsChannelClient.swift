import Foundation
import Logging
import PushCore
import Synchronization

/// A client of APNs' channel-management API (iOS 18 broadcast channels): creates, reads,
/// lists and deletes the channels of one app in one environment, over HTTP/2, with the same
/// credential as the app's pushes (a provider token from the shared ``ProviderTokenManager``,
/// or the TLS client certificate). TLS verification is always on.
///
/// Channel management is a few requests per event, not a stream: each request runs its blocking
/// libcurl transfer on a `Thread` of its own, never on Swift's cooperative pool, and the caller
/// suspends until it ends. Idle handles are kept (at most ``idleHandles``) with their connection,
/// so successive requests reuse it. What an answer means is PushCore's
/// (``ChannelResponse/outcome``); this type only sends and reads.
public final class APNsChannelClient: Sendable {
    /// The app whose channels these are: the `<bundle id>` of every path.
    public let bundleID: String
    /// Where requests go (Apple's management host or ``APNsChannelConfiguration/baseURL``), for logs.
    public let baseURL: String
    private let credential: APNsCredential
    private let clientCertificate: CurlClientCertificate?
    private let certificateNotAfter: Int64?
    private let settings: CurlTransferSettings
    private let logger: Logger
    private let idle = Mutex<[ChannelTransfer]>([])
    /// Idle transfers kept for their connections.
    static let idleHandles = 2

    /// - Parameters:
    ///   - configuration: where and how to connect.
    ///   - credential: the app's APNs credential (share its ``ProviderTokenManager`` with the senders).
    ///   - bundleID: the app's bundle id (no `.push-type.…` suffix).
    ///   - logger: a request is logged at `debug`, a request without an answer at `warning`; never a token.
    /// - Throws: ``PushTransportError`` `.configuration` for a URL that is not https, a bundle id that
    ///   cannot be a path segment, bad timeouts, an unreadable CA file or client certificate;
    ///   `.unsupportedLibcurl` for a libcurl without HTTP/2 or too old.
    public init(configuration: APNsChannelConfiguration, credential: APNsCredential, bundleID: String, logger: Logger) throws {
        let libcurl = try LibcurlInfo.checked()
        baseURL = configuration.effectiveBaseURL
        try PushSenderConfiguration.requireHTTPS(baseURL, variable: "the APNs channel-management URL", provider: .apns)
        guard !bundleID.isEmpty, bundleID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }) else {
            throw PushTransportError(.configuration, "the bundle id of a channel client must be visible ASCII without / ? # (got \(bundleID.utf8.count) bytes)")
        }
        guard configuration.requestTimeout > 0, configuration.connectTimeout > 0 else {
            throw PushTransportError(.configuration, "the channel client's timeouts must be positive (timeouts are always on)")
        }
        settings = try CurlTransferSettings(requestTimeout: configuration.requestTimeout, connectTimeout: configuration.connectTimeout,
                                            extraCAFile: configuration.extraCAFile, verbose: configuration.curlVerbose, libcurl: libcurl)
        if case .certificate(let certificate) = credential {
            certificateNotAfter = try certificate.validate()
            clientCertificate = certificate.curlOptions
        } else {
            certificateNotAfter = nil
            clientCertificate = nil
        }
        self.credential = credential
        self.bundleID = bundleID
        var logger = logger
        logger[metadataKey: LogKey.url] = "\(baseURL)"
        self.logger = logger
    }

    /// Sends `operation` and returns APNs' answer, or why none came; never throws: what went
    /// wrong is in the response (``ChannelResponse/outcome``).
    ///
    /// After `ExpiredProviderToken` the shared token is renewed (once, however many requests
    /// failed with it), so that the caller's immediate resend carries a new one.
    ///
    /// - Parameters:
    ///   - operation: create (with the storage policy), read, delete or list.
    ///   - requestID: `apns-request-id`, a lowercase canonical UUID to find the request in
    ///     Apple's logs; nil lets APNs make one (it is in the answer either way).
    public func send(_ operation: ChannelOperation, requestID: String? = nil) async -> ChannelResponse {
        let (authorization, serial): (String?, Int)
        switch authorize() {
        case .success(let token): (authorization, serial) = (token?.value, token?.serial ?? 0)
        case .failure(let failure): return ChannelResponse(operation: operation, transportFailure: failure)
        }
        let transfer: ChannelTransfer
        do { transfer = try takeTransfer() } catch {
            return ChannelResponse(operation: operation, transportFailure: TransportFailure(kind: .other, message: "\(error)"))
        }
        let request = ChannelTransfer.Request(url: baseURL + operation.path(bundleID: bundleID), operation: operation,
                                              authorization: authorization, requestID: requestID,
                                              clientCertificate: clientCertificate, settings: settings)
        let response = await withCheckedContinuation { (continuation: CheckedContinuation<ChannelResponse, Never>) in
            let thread = Thread { continuation.resume(returning: transfer.perform(request)) }
            thread.name = "pushq-channels"
            thread.start()
        }
        giveBack(transfer)
        record(response, serial: serial)
        return response
    }

    /// The provider token to send (nil for certificate authentication), or why none can be.
    private func authorize() -> Result<ProviderTokenManager.Token?, TransportFailure> {
        switch credential {
        case .certificate(let certificate):
            if let notAfter = certificateNotAfter,
               let failure = APNsClientCertificate.expiredFailure(file: certificate.file, notAfter: notAfter, now: Int64(time(nil))) {
                return .failure(failure)
            }
            return .success(nil)
        case .token(let manager):
            do { return .success(try manager.newest()) } catch {
                return .failure(TransportFailure(kind: .signingFailed, message: "cannot sign a provider token: \(error)"))
            }
        }
    }

    /// Logs the request and renews the token APNs called expired.
    private func record(_ response: ChannelResponse, serial: Int) {
        let outcome = response.outcome
        if outcome == .retryNow(.renewProviderToken), case .token(let manager) = credential {
            do { _ = try manager.renew(afterSerial: serial) } catch {
                logger.error("cannot renew the provider token", metadata: ["error": "\(error)"])
            }
        }
        if let failure = response.transportFailure {
            logger.warning("channel request got no answer", metadata: ["channel.operation": "\(response.operation.name)", "error": "\(failure)"])
        } else {
            logger.debug("channel request answered", metadata: ["channel.operation": "\(response.operation.name)",
                                                                "http.status": "\(response.answer?.status ?? 0)",
                                                                LogKey.reason: "\(outcome.reasonText ?? "")"])
        }
    }

    private func takeTransfer() throws -> ChannelTransfer {
        if let kept = idle.withLock({ $0.popLast() }) { return kept }
        return try ChannelTransfer()
    }

    private func giveBack(_ transfer: ChannelTransfer) {
        idle.withLock { if $0.count < Self.idleHandles { $0.append(transfer) } }
    }
}
