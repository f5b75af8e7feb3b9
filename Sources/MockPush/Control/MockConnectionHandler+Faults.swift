import NIOCore
import NIOHTTP2

/// Connection faults: GOAWAY after N streams, close after N requests, idle kill.
extension MockConnectionHandler {
    /// Called after each request is answered (or scheduled) with the faults in force
    /// now, so faults set at run time apply to open connections too.
    func applyConnectionFaults(_ faults: MockConnectionFaults, context: ChannelHandlerContext) {
        if let limit = faults.closeAfterRequests, requestsCompleted >= limit {
            closeByMock(context: context)
            return
        }
        if let limit = faults.goawayAfterStreams, goawayLastStreamID == nil, requestsCompleted >= limit {
            let last = highestCompletedStreamID
            goawayLastStreamID = last
            core.updateStats { $0.stats.goawaysSent += 1 }
            let reason = faults.goawayReason ?? "Shutdown"
            let debugData = context.channel.allocator.buffer(string: Responses.reasonBody(reason, timestamp: nil))
            write(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: debugData)), context: context)
            // Streams above `last` are refused by the GOAWAY: forget them.
            streams = streams.filter { $0.key <= last }
            finishGoawayIfDone(context: context)
        }
    }

    /// After a GOAWAY, closes the connection once every stream it still serves is answered.
    func finishGoawayIfDone(context: ChannelHandlerContext) {
        guard goawayLastStreamID != nil, !closing, streams.isEmpty, delayedAnswers == 0 else { return }
        closeByMock(context: context)
    }

    /// Flushes what is written and closes the connection.
    func closeByMock(context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        core.updateStats { $0.stats.connectionsClosedByMock += 1 }
        needsFlush = false
        context.flush()
        context.eventLoop.assumeIsolated().execute {
            context.close(promise: nil)
        }
    }

    /// Starts the idle watchdog when the connection opened with `idleTimeoutMilliseconds`.
    func scheduleIdleCheck(context: ChannelHandlerContext) {
        guard let ms = faultsAtOpen.idleTimeoutMilliseconds, ms > 0 else { return }
        let timeout = TimeAmount.milliseconds(Int64(ms))
        lastActivity = .now()
        armIdleCheck(at: lastActivity + timeout, timeout: timeout, context: context)
    }

    private func armIdleCheck(at deadline: NIODeadline, timeout: TimeAmount, context: ChannelHandlerContext) {
        idleTask = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            guard context.channel.isActive, !self.closing else { return }
            let due = self.lastActivity + timeout
            if due <= .now() {
                self.core.logger.debug("mock kills an idle connection", metadata: ["mock.connection": "\(self.connectionID)"])
                if self.faultsAtOpen.idleBlackhole == true {
                    self.blackhole(context: context)
                } else {
                    self.closeByMock(context: context)
                }
            } else {
                self.armIdleCheck(at: due, timeout: timeout, context: context)
            }
        }
    }

    /// Stops reading and writing for good; the socket stays open until the client closes
    /// it or the server stops.
    func blackhole(context: ChannelHandlerContext) {
        closing = true
        needsFlush = false
        core.updateStats { $0.stats.connectionsBlackholed += 1 }
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
    }
}
