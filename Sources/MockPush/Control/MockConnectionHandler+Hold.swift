import NIOCore
import NIOHTTP2

extension MockConnectionHandler {
    /// While the server holds answers, keeps this one until ``MockPushServer/releaseAnswers()``,
    /// which writes it on this connection's event loop (after its delay, if it has one).
    ///
    /// - Returns: whether it was kept.
    func park(_ answer: MockAnswer, streamID: HTTP2StreamID, apnsID: String, idHeader: String, context: ChannelHandlerContext) -> Bool {
        park(context: context) { handler, context in
            handler.deliver(answer, streamID: streamID, apnsID: apnsID, idHeader: idHeader, context: context)
        }
    }

    /// ``park(_:streamID:apnsID:idHeader:context:)`` for any provider's answer: `deliver` writes it
    /// (with its delay, if it has one) when the answers are released.
    func park(context: ChannelHandlerContext, _ deliver: @escaping (MockConnectionHandler, ChannelHandlerContext) -> Void) -> Bool {
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context, deliver), eventLoop: loop)
        let held = core.heldAnswers
        let kept = held.keep {
            loop.execute {
                let (handler, context, deliver) = bound.value
                handler.delayedAnswers -= 1
                guard context.channel.isActive else { return }
                deliver(handler, context)
                handler.needsFlush = false
                context.flush()
                held.written()
                handler.finishGoawayIfDone(context: context)
            }
        }
        // Counted like a delayed answer: a GOAWAY waits for it before closing.
        if kept { delayedAnswers += 1 }
        return kept
    }
}
