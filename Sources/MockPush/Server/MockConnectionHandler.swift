import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

/// Serves one TLS + HTTP/2 connection, on the connection channel itself.
///
/// Sits after `NIOHTTP2Handler` (no stream multiplexer: per-stream child channels
/// cost too much at tens of thousands of requests per second) and sees raw
/// `HTTP2Frame`s. It collects each stream's HEADERS and DATA until END_STREAM,
/// then decides and writes the answer frames; answers are flushed once per read
/// burst. Without a multiplexer nobody else replenishes flow-control windows, so
/// this handler sends WINDOW_UPDATE frames as it consumes DATA.
///
/// Not Sendable: all of its state is touched on its channel's event loop only.
final class MockConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    struct PendingStream {
        var headers: HPACKHeaders
        var body: ByteBuffer?
        var unacknowledgedBytes = 0
    }

    static let windowUpdateThreshold = 32 * 1024

    let core: MockCore
    /// For `POST /_mock/refuse`, which closes the listener and this connection too.
    let listener: MockListener
    let connectionID: Int
    let faultsAtOpen: MockConnectionFaults
    var streams: [HTTP2StreamID: PendingStream] = [:]
    var tokenState = ConnectionTokenState()
    var certificateAuthenticated: Bool?
    var connectionUnacknowledgedBytes = 0
    var needsFlush = false
    var requestsCompleted = 0
    var highestCompletedStreamID = HTTP2StreamID(0)
    var streamsLimited: Bool
    /// An FCM send succeeded on this connection: it advertises FCM's stream limit.
    var fcmStreamsRaised = false
    /// The last VAPID authorization that verified on this connection (WebPush/), and its claims.
    var lastVAPID: (authorization: String, claims: MockVAPIDClaims)?
    var goawayLastStreamID: HTTP2StreamID?
    var delayedAnswers = 0
    var closing = false
    var rng: SplitMix64
    var lastActivity = NIODeadline.now()
    var idleTask: Scheduled<Void>?

    init(core: MockCore, listener: MockListener, connectionID: Int, faults: MockConnectionFaults) {
        self.core = core
        self.listener = listener
        self.connectionID = connectionID
        self.faultsAtOpen = faults
        self.streamsLimited = core.configuration.limitStreamsUntilFirstValidToken
        var seed = SystemRandomNumberGenerator()
        self.rng = SplitMix64(seed: seed.next())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        scheduleIdleCheck(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTask?.cancel()
        core.connectionClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if idleTask != nil { lastActivity = .now() }
        guard !closing else { return }
        let id = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if var pending = streams.removeValue(forKey: id) {
                // Trailers: the request ends here.
                if headers.endStream {
                    completeRequest(context: context, streamID: id, headers: pending.headers, body: pending.body)
                } else {
                    pending.headers.add(contentsOf: headers.headers)
                    streams[id] = pending
                }
            } else if headers.endStream {
                completeRequest(context: context, streamID: id, headers: headers.headers, body: nil)
            } else {
                streams[id] = PendingStream(headers: headers.headers)
            }
        case .data(let data):
            let length = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            acknowledgeConnectionBytes(length, context: context)
            guard var pending = streams.removeValue(forKey: id) else { break }
            if case .byteBuffer(var chunk) = data.data, chunk.readableBytes > 0 {
                if pending.body == nil {
                    pending.body = chunk
                } else {
                    pending.body!.writeBuffer(&chunk)
                }
            }
            if data.endStream {
                completeRequest(context: context, streamID: id, headers: pending.headers, body: pending.body)
            } else {
                pending.unacknowledgedBytes += length
                if pending.unacknowledgedBytes >= Self.windowUpdateThreshold {
                    write(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: pending.unacknowledgedBytes)), context: context)
                    pending.unacknowledgedBytes = 0
                }
                streams[id] = pending
            }
        case .rstStream:
            streams.removeValue(forKey: id)
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    /// HTTP/2 protocol errors are already answered by `NIOHTTP2Handler` (RST_STREAM for a
    /// stream error, GOAWAY for a connection error; the client then closes), so they
    /// only get logged. Anything else (TLS, I/O) closes the connection.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        core.logger.debug("mock connection error", metadata: [
            "mock.connection": "\(connectionID)", "error": "\(error)",
        ])
        if !(error is any NIOHTTP2Error) {
            context.close(promise: nil)
        }
    }

    /// Forgets streams NIOHTTP2 closed (reset by either side, refused, errors).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            streams.removeValue(forKey: closed.streamID)
            finishGoawayIfDone(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Replenishes the connection window once enough DATA was consumed.
    private func acknowledgeConnectionBytes(_ length: Int, context: ChannelHandlerContext) {
        connectionUnacknowledgedBytes += length
        if connectionUnacknowledgedBytes >= Self.windowUpdateThreshold {
            write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: connectionUnacknowledgedBytes)), context: context)
            connectionUnacknowledgedBytes = 0
        }
    }

    /// Writes a frame; it goes out with the next flush.
    func write(_ frame: HTTP2Frame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
        needsFlush = true
    }

    /// Whether the TLS client presented a certificate (which NIOSSL then verified
    /// against the client CA, or the handshake would have failed).
    func hasVerifiedClientCertificate(context: ChannelHandlerContext) -> Bool {
        if let known = certificateAuthenticated { return known }
        var verified = false
        if core.configuration.clientCAPath != nil,
           let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self) {
            verified = tls.peerCertificate != nil
        }
        certificateAuthenticated = verified
        return verified
    }
}
