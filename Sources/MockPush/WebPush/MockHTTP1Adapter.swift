import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// HTTP/1.1 in front of the mock's handler, for a Web Push origin that offers only `http/1.1`
/// (``MockPushServer/listenForWebPushOrigins(_:http1Only:)``): each request NIOHTTP1 decodes
/// becomes the HTTP/2 frames ``MockConnectionHandler`` reads (HEADERS with the pseudo-headers,
/// DATA, END_STREAM on the last), on a stream id of its own; the frames it answers with become
/// the HTTP/1.1 response. So an HTTP/1.1 push service checks, decrypts, records and answers
/// exactly as the HTTP/2 one does.
///
/// One request at a time per connection (NIOHTTP1's pipelining assistance holds a pipelined
/// request back until the response before it ended). Frames without an HTTP/1.1 meaning
/// (SETTINGS, WINDOW_UPDATE, PING, GOAWAY) are dropped; RST_STREAM (a reset the rules ask for)
/// closes the connection, the only way HTTP/1.1 has to abandon a request.
///
/// Not Sendable: its state is touched on its channel's event loop only.
final class MockHTTP1Adapter: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTPServerResponsePart

    /// The stream id of the request being read or answered (odd, as a client's streams).
    private var streamID: Int32 = -1
    /// Whether the response head went out and its end has not.
    private var responding = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            streamID += 2
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: head.method.rawValue)
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":path", value: head.uri)
            headers.add(name: ":authority", value: head.headers.first(name: "host") ?? "")
            for (name, value) in head.headers {
                let lower = name.lowercased()
                guard !["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"].contains(lower) else { continue }
                headers.add(name: lower, value: value)
            }
            fire(.headers(.init(headers: headers, endStream: false)), context: context)
            // A client that waits for leave to send its body (libcurl does for larger POSTs over
            // HTTP/1.1) gets it at once, as a push service answers: the answer comes after the body.
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
        case .body(let chunk):
            fire(.data(.init(data: .byteBuffer(chunk), endStream: false)), context: context)
        case .end:
            fire(.data(.init(data: .byteBuffer(context.channel.allocator.buffer(capacity: 0)), endStream: true)), context: context)
        }
    }

    private func fire(_ payload: HTTP2Frame.FramePayload, context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(HTTP2Frame(streamID: HTTP2StreamID(streamID), payload: payload)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        switch frame.payload {
        case .headers(let h):
            guard !responding else {
                // Trailers: HTTP/1.1 has none here; the response ends.
                responding = false
                context.write(wrapOutboundOut(.end(nil)), promise: promise)
                return
            }
            var status = 500
            var headers = HTTPHeaders()
            for (name, value, _) in h.headers {
                if name == ":status" {
                    status = Int(value) ?? 500
                } else if !name.hasPrefix(":") {
                    headers.add(name: name, value: value)
                }
            }
            if h.endStream, !headers.contains(name: "content-length") { headers.add(name: "content-length", value: "0") }
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
            if h.endStream {
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.write(wrapOutboundOut(.end(nil)), promise: promise)
            } else {
                responding = true
                context.write(wrapOutboundOut(.head(head)), promise: promise)
            }
        case .data(let d):
            guard responding else {
                promise?.succeed(())
                return
            }
            if case .byteBuffer(let chunk) = d.data, chunk.readableBytes > 0 {
                context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: d.endStream ? nil : promise)
            } else if !d.endStream {
                promise?.succeed(())
            }
            if d.endStream {
                responding = false
                context.write(wrapOutboundOut(.end(nil)), promise: promise)
            }
        case .rstStream:
            promise?.succeed(())
            context.close(promise: nil)
        default:
            promise?.succeed(())
        }
    }
}
