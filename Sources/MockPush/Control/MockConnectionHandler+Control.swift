import NIOCore
import NIOHTTP2

/// Serves `/_mock/...` control requests on an ordinary stream of the connection.
extension MockConnectionHandler {
    func handleControl(context: ChannelHandlerContext, streamID: HTTP2StreamID, head: RequestHead, body: ByteBuffer?) {
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        switch MockControlAPI.handle(method: head.method ?? "", path: head.path.map { Substring($0) } ?? "", body: bytes, core: core) {
        case .respond(let status, let json):
            writeControlAnswer(status: status, body: json, streamID: streamID, context: context)
        case .refuse(let milliseconds):
            // The answer goes out first: the refusal closes this connection as well.
            writeControlAnswer(status: 200, body: #"{"ok":true}"#, streamID: streamID, context: context)
            needsFlush = false
            context.flush()
            do {
                try listener.refuse(reopenAfter: .milliseconds(Int64(milliseconds)))
            } catch {
                core.logger.error("mock could not refuse connections", metadata: ["error": "\(error)"])
            }
        case .wait(let count, let timeoutMilliseconds):
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            let answered = NIOLoopBoundBox(false, eventLoop: loop)
            let finish: @Sendable (Bool) -> Void = { reached in
                loop.execute {
                    guard !answered.value else { return }
                    answered.value = true
                    let (handler, context) = bound.value
                    guard context.channel.isActive else { return }
                    let n = handler.core.stats().requests
                    handler.writeControlAnswer(
                        status: reached ? 200 : 408,
                        body: reached ? #"{"requests":\#(n)}"# : #"{"reason":"Timeout","requests":\#(n)}"#,
                        streamID: streamID, context: context
                    )
                    handler.needsFlush = false
                    context.flush()
                }
            }
            guard let waiterID = core.addWaiter(condition: { $0.requests >= count }, notify: finish) else { return }
            let core = self.core
            loop.scheduleTask(in: .milliseconds(Int64(timeoutMilliseconds))) {
                core.cancelWaiter(id: waiterID)
            }
        }
    }

    func writeControlAnswer(status: Int, body: String, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        let (headers, data) = Responses.json(
            streamID: streamID, status: status, body: body, apnsID: nil, uniqueID: nil,
            allocator: context.channel.allocator
        )
        write(headers, context: context)
        write(data, context: context)
    }
}
