import Foundation
import Logging
import PushCore

/// Sends notifications to APNs, or to FCM's HTTP v1 API, over HTTP/2 (libcurl), in batches.
///
/// One sender talks to one service with one credential: APNs with an ``APNsCredential``
/// (``init(configuration:credential:logger:onResults:)``), or FCM with a service account's
/// ``FCMAccessTokenProvider`` (``init(configuration:fcm:logger:onResults:)``). Both run on the
/// same connection threads, streams, queue and shutdown described here.
///
/// Work goes in with ``submit(_:)`` and comes back through `onResults`, a batch at a time,
/// so the cost per notification stays a few microseconds above libcurl's own: no `Task`,
/// continuation or lock per notification.
///
/// The sender owns ``APNsSenderConfiguration/connections`` threads (Foundation `Thread`s,
/// not Swift's cooperative pool), each driving one HTTP/2 connection with at most
/// ``APNsSenderConfiguration/streamsPerConnection`` streams in flight. Requests beyond
/// that wait in the sender's queue; ``freeSlots`` says how many more fit without queueing.
///
/// `onResults` is called on a connection thread: it must return quickly (hand the batch
/// to another queue) and must not call ``shutdown(deadline:)``. It may call ``submit(_:)``.
///
/// Outcomes (``APNsResponse/outcome``) are for the caller to carry out, including
/// `.retryNow` (resubmit at once, without counting an attempt). The sender itself only
/// takes care of connections: it renews the provider token after `ExpiredProviderToken`
/// and reopens a connection after answers that condemn it (see `ConnectionAction`).
///
/// Lifecycle: `init` (checks libcurl, the CA file and the certificate, builds each
/// connection's first stream; starts nothing),
/// ``start()``, any number of ``submit(_:)``, ``shutdown(deadline:)``.
public final class APNsSender: Sendable {
    /// Counters since ``start()``.
    public struct Stats: Sendable, Hashable {
        /// Requests that got an answer or a failure.
        public var answered = 0
        /// TCP+TLS connections opened (libcurl's `CURLINFO_NUM_CONNECTS`, summed).
        public var connectionsOpened = 0
        /// Times a connection was closed on purpose and replaced (token expiry, 5xx, idle...).
        public var reopens = 0
        /// Times a connection switched to a newer provider token without reopening.
        public var tokenSwitches = 0
        /// Connections open now: their current handle has opened a TCP+TLS connection that
        /// was not closed since.
        public var openConnections = 0
        /// Connections APNs ended (an HTTP/2 GOAWAY, or the connection dropped): libcurl saw
        /// the connection lost or had to reconnect. libcurl does not report GOAWAY frames
        /// themselves, so a GOAWAY and a drop count alike.
        public var connectionsEndedByServer = 0
        /// Requests waiting for a stream.
        public var pending = 0
        /// Requests handed to libcurl and not yet answered.
        public var inFlight = 0
        /// The most requests ever in flight at once, over all connections.
        public var peakInFlight = 0
    }

    private let core: SenderCore
    private let connections: [APNsConnection]
    /// The libcurl in use (version, TLS library, nghttp2).
    public let libcurl: LibcurlInfo

    /// Creates a sender; starts nothing (see ``start()``).
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect.
    ///   - credential: token or certificate authentication.
    ///   - logger: for connection events; nothing per notification above `debug`.
    ///   - onResults: receives answers in batches, on a connection thread.
    /// - Throws: ``PushTransportError`` if libcurl lacks HTTP/2 or is too old, the
    ///   configuration is invalid, the CA file or client certificate cannot be read (the
    ///   message names the file), or libcurl refuses a setting (each connection builds its
    ///   first stream here, so nothing about the setup is left to fail per request).
    public convenience init(configuration: APNsSenderConfiguration, credential: APNsCredential, logger: Logger,
                            onResults: @escaping @Sendable ([APNsResponse]) -> Void) throws {
        try self.init(configuration: configuration, credential: credential, fcm: nil, logger: logger, onResults: onResults)
    }

    /// Creates a sender to Firebase Cloud Messaging (HTTP v1); starts nothing (see ``start()``).
    ///
    /// Requests go to `{base}/v1/projects/{project_id}/messages:send`, where `base` is
    /// ``APNsSenderConfiguration/effectiveFCMBaseURL`` and `project_id` the service account's,
    /// over the same connections, streams and queue as APNs. Each ``APNsRequest`` carries the
    /// complete request body in `payload` (`{"message":{"token":…,…}}`, see `FCMMessageBody.build`)
    /// and the registration token in `deviceToken`; the APNs header fields are ignored, and
    /// `expiration` is still honoured locally. Requests carry `authorization: Bearer` with an
    /// access token from `tokens`; a 401 UNAUTHENTICATED drops that token once and resends at
    /// once with a new one, without reporting the first answer (see ``APNsResponse/outcome``).
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect; ``APNsSenderConfiguration/fcmBaseURL``
    ///     replaces FCM's host, `environment` and `baseURL` are not used.
    ///   - tokens: the service account's access tokens; share one provider per account.
    ///   - logger: for connection events; nothing per notification above `debug`, never a token.
    ///   - onResults: receives answers in batches, on a connection thread.
    /// - Throws: ``PushTransportError`` as the APNs initializer.
    public convenience init(configuration: APNsSenderConfiguration, fcm tokens: FCMAccessTokenProvider, logger: Logger,
                            onResults: @escaping @Sendable ([APNsResponse]) -> Void) throws {
        try self.init(configuration: configuration, credential: nil, fcm: tokens, logger: logger, onResults: onResults)
    }

    private init(configuration: APNsSenderConfiguration, credential: APNsCredential?, fcm: FCMAccessTokenProvider?,
                 logger: Logger, onResults: @escaping @Sendable ([APNsResponse]) -> Void) throws {
        libcurl = try LibcurlInfo.checked()
        let provider: Provider = fcm == nil ? .apns : .fcm
        try configuration.validate(for: provider)
        var caBundle: [UInt8]? = nil
        if let extra = configuration.extraCAFile {
            caBundle = try Self.caBundle(adding: extra, libcurl: libcurl)
        }
        var certificate: APNsClientCertificate? = nil
        var notAfter: Int64? = nil
        if case .certificate(let cert)? = credential {
            notAfter = try cert.validate()
            certificate = cert
        }
        let url: String
        if let fcm {
            // One URL for every message: the registration token is in the body.
            url = configuration.effectiveFCMBaseURL + "/v1/projects/" + fcm.account.projectID + "/messages:send"
        } else {
            url = configuration.effectiveBaseURL + "/3/device/"
        }
        let template = EasyTemplate(
            provider: provider, urlPrefix: Array(url.utf8),
            requestTimeoutMilliseconds: Int(configuration.requestTimeout * 1000),
            connectTimeoutMilliseconds: Int(configuration.connectTimeout * 1000),
            caBundle: caBundle, caFile: configuration.extraCAFile, certificate: certificate, certificateNotAfter: notAfter,
            verbose: configuration.curlVerbose)
        let core = SenderCore(configuration: configuration, credential: credential, fcm: fcm, template: template,
                              logger: logger, onResults: onResults)
        self.core = core
        connections = try (0..<configuration.connections).map { try APNsConnection(index: $0, core: core) }
    }

    /// The PEM blob given to libcurl as `CURLOPT_CAINFO_BLOB` so that `extraFile` is trusted
    /// *in addition to* the system roots.
    ///
    /// A CA blob makes libcurl ignore `CURLOPT_CAINFO` (the bundle file) but not
    /// `CURLOPT_CAPATH`. When libcurl has a built-in CA directory (Debian: `/etc/ssl/certs`),
    /// the system roots keep coming from it and the blob is just the extra CA. Otherwise the
    /// blob is the system bundle followed by the extra CA. Keep the blob small: libcurl 7.88
    /// copies the SSL configuration, blob included, for every transfer (a 200 KB bundle cost
    /// ~100 µs of memcpy per notification).
    static func caBundle(adding extraFile: String, libcurl: LibcurlInfo) throws -> [UInt8] {
        let extra: [UInt8]
        do { extra = try readWholeFile(extraFile) } catch {
            throw PushTransportError(.configuration, "cannot read PUSHQ_APNS_CA_FILE \(extraFile)", cause: error)
        }
        guard String(decoding: extra, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw PushTransportError(.configuration, "PUSHQ_APNS_CA_FILE \(extraFile) holds no PEM certificate")
        }
        if let problem = pemCertificateProblem(extra) {
            throw PushTransportError(.configuration, "PUSHQ_APNS_CA_FILE \(extraFile) holds a certificate OpenSSL cannot read: \(problem)")
        }
        if libcurl.defaultCAPath != nil { return extra }
        var bundle: [UInt8] = []
        if let system = libcurl.defaultCAInfo, let roots = try? readWholeFile(system) {
            bundle = roots
            bundle.append(UInt8(ascii: "\n"))
        }
        return bundle + extra
    }

    /// Starts the connection threads. Connections open on first use.
    ///
    /// - Throws: ``PushTransportError`` `.invalidState` if already started.
    public func start() throws {
        try core.state.withLock { s in
            guard s.phase == .created else { throw PushTransportError(.invalidState, "APNsSender.start() called twice") }
            s.phase = .running
            s.runningThreads = connections.count
        }
        core.logger.info(core.provider == .fcm ? "FCM sender starting" : "APNs sender starting", metadata: [
            "apns.url": "\(core.configuration.effectiveBaseURL(for: core.provider))",
            "apns.connections": "\(connections.count)",
            "apns.streams": "\(core.configuration.streamsPerConnection)",
            "libcurl": "\(libcurl.version) \(libcurl.ssl) nghttp2/\(libcurl.nghttp2)",
        ])
        let startedAt = monotonicNanoseconds()
        for connection in connections {
            let thread = Thread { connection.run(startedAt: startedAt) }
            thread.name = "pushq-\(core.provider.rawValue)-\(connection.index)"
            thread.start()
        }
    }

    /// Queues a batch; connections pick it up at once.
    ///
    /// - Throws: ``PushTransportError`` `.invalidState` after ``shutdown(deadline:)`` began.
    public func submit(_ batch: [APNsRequest]) throws {
        guard !batch.isEmpty else { return }
        try core.state.withLock { s in
            switch s.phase {
            case .created, .running: s.pending.append(contentsOf: batch)
            case .stopping, .stopped: throw PushTransportError(.invalidState, "APNsSender is shutting down; submit refused")
            }
        }
        core.wakeAll()
    }

    /// Streams free right now: total window minus queued and in-flight requests (may be negative).
    public var freeSlots: Int {
        let capacity = core.configuration.connections * core.configuration.streamsPerConnection
        return core.state.withLock { capacity - $0.pendingCount - $0.inFlight }
    }

    /// Counters since ``start()``.
    public func stats() -> Stats {
        core.state.withLock { s in
            var stats = s.stats
            stats.pending = s.pendingCount
            stats.inFlight = s.inFlight
            return stats
        }
    }

    /// Stops accepting work, waits for in-flight requests up to `deadline`, and returns the
    /// requests that were never handed to APNs.
    ///
    /// Requests still in flight at the deadline are reported through `onResults` as
    /// `TransportFailure.Kind.cancelled` (outcome unknown). Returns when every connection
    /// thread has exited; any number of callers may wait at once (a later call's unsent list
    /// is empty, and an earlier deadline stands).
    public func shutdown(deadline: Duration) async -> [APNsRequest] {
        let (seconds, attoseconds) = deadline.components
        let deadlineNanos = monotonicNanoseconds() + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let (unsent, mustWait) = core.state.withLock { s -> ([APNsRequest], Bool) in
            let unsent = s.takeUnsent()
            switch s.phase {
            case .created: s.phase = .stopped; return (unsent, false)
            case .running: s.phase = .stopping(deadline: deadlineNanos); return (unsent, true)
            case .stopping: return (unsent, true)
            case .stopped: return (unsent, false)
            }
        }
        core.wakeAll()
        if mustWait {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = core.state.withLock { s -> Bool in
                    if s.runningThreads == 0 { return true }
                    s.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        core.logger.info("APNs sender stopped", metadata: ["apns.unsent": "\(unsent.count)"])
        return unsent
    }
}
