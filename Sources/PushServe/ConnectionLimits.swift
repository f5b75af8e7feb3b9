import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How `pushq serve` bounds its HTTP connections, so that clients that connect and stay (idle,
/// or sending a request's head a byte at a time) cannot take every file descriptor or every
/// event-loop turn from the others.
///
/// - ``idleTimeout``: a connection with no request in progress for this long is closed
///   (Hummingbird's own idle timeout).
/// - ``headerTimeout``: a request's head must be complete within this much of the connection's
///   start (the TLS handshake included) or, on a kept-alive connection, of the next request's
///   first byte; else the connection is closed (``RequestHeadTimeout``).
/// - ``maxConnections``: one more connection than this is closed as soon as it is accepted
///   (``LimitedHTTPChannel``), rather than left in the listen backlog where it would wait
///   unanswered.
public struct ConnectionLimits: Sendable {
    public var idleTimeout: Duration
    public var headerTimeout: Duration
    public var maxConnections: Int

    public init(idleTimeout: Duration, headerTimeout: Duration, maxConnections: Int) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.maxConnections = maxConnections
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 as Hummingbird serves it, within `limits`.
    static func http1(within limits: ConnectionLimits, logger: Logger) -> HTTPServerBuilder {
        let open = OpenConnections()
        return .init { responder in
            LimitedHTTPChannel(base: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout))),
                               limits: limits, open: open, logger: logger)
        }
    }
}

/// The connections open now, across event loops.
final class OpenConnections: Sendable {
    private let count = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    /// Counts one more; returns how many are open with it.
    func opened() -> Int { count.wrappingAdd(1, ordering: .relaxed).newValue }
    func closed() { count.wrappingSubtract(1, ordering: .relaxed) }
    /// Counts a refused connection; returns how many were refused so far.
    func refusedOne() -> Int { refused.wrappingAdd(1, ordering: .relaxed).newValue }
}

/// Hummingbird's HTTP/1 child channel, with serve's bounds: beyond ``ConnectionLimits/maxConnections``
/// the accepted connection is closed at once; within it, a ``RequestHeadTimeout`` watches it.
///
/// A refused connection still goes through the base setup (and is closed after it): a failed
/// child-channel setup would reach the server channel's own stream as an error.
struct LimitedHTTPChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let limits: ConnectionLimits
    let open: OpenConnections
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let open = self.open
        let count = open.opened()
        channel.closeFuture.whenComplete { _ in open.closed() }
        let limits = self.limits
        let serveLogger = self.logger
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            guard count <= limits.maxConnections else {
                let refused = open.refusedOne()
                serveLogger.log(level: refused % 1_000 == 1 ? .warning : .debug, "closed a connection beyond the limit of open connections",
                                metadata: ["http.max_connections": "\(limits.maxConnections)", "http.refused_so_far": "\(refused)"])
                channel.close(promise: nil)
                return value
            }
            let watch = RequestHeadTimeout(timeout: TimeAmount(limits.headerTimeout), logger: serveLogger)
            let pipeline = channel.pipeline.syncOperations
            let state = try pipeline.context(handlerType: HTTPConnectionStateHandler.self)
            try pipeline.addHandler(watch, position: .before(state.handler))
            try pipeline.addHandler(RequestHeadTimeout.FirstBytes(watch), position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes a connection whose request head is not complete in time: the timer is armed when the
/// connection starts and when the first byte of a request arrives after the previous response,
/// and disarmed when the head (request line and headers) has been read. Between requests the
/// idle timeout applies instead.
///
/// It sits between Hummingbird's HTTP parts (heads and ends), with ``FirstBytes`` first in the
/// pipeline to see bytes arrive (encrypted ones too, under TLS). Both run on the connection's
/// event loop only.
final class RequestHeadTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private let logger: Logger
    private var timer: Scheduled<Void>?
    /// Heads read whose response has not ended.
    private var requestsInProgress = 0
    /// Between requests: the next byte starts a head, and the timer.
    private var betweenRequests = false

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context.channel) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    func channelActive(context: ChannelHandlerContext) {
        if timer == nil, requestsInProgress == 0 { arm(context.channel) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            requestsInProgress += 1
            betweenRequests = false
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress = max(0, requestsInProgress - 1)
            if requestsInProgress == 0 { betweenRequests = true }
        }
        context.write(data, promise: promise)
    }

    /// Bytes arrived (seen first in the pipeline).
    fileprivate func bytesArrived(_ channel: any Channel) {
        guard betweenRequests else { return }
        betweenRequests = false
        arm(channel)
    }

    private func arm(_ channel: any Channel) {
        guard timer == nil else { return }
        let logger = self.logger
        let timeout = self.timeout
        timer = channel.eventLoop.scheduleTask(in: timeout) {
            logger.debug("closed a connection whose request head did not arrive in time", metadata: ["http.header_timeout": "\(timeout)"])
            channel.close(promise: nil)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }

    /// First in the pipeline: tells the ``RequestHeadTimeout`` that bytes arrived.
    final class FirstBytes: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private let watch: RequestHeadTimeout

        init(_ watch: RequestHeadTimeout) { self.watch = watch }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            watch.bytesArrived(context.channel)
            context.fireChannelRead(data)
        }
    }
}

@available(*, unavailable)
extension RequestHeadTimeout: Sendable {}

@available(*, unavailable)
extension RequestHeadTimeout.FirstBytes: Sendable {}
