import CCurl
import Foundation
import Logging
import PushCore

/// A connection as its sender sees it: the body of one thread.
protocol SenderConnection: AnyObject, Sendable {
    var index: Int { get }
    /// The thread body; returns when the sender has shut down.
    func run(startedAt: Int64)
}

/// One HTTP/2 connection to a provider, driven by its own thread; provider-neutral.
///
/// The connection is a `CURLM*` limited to one host connection, so every stream it carries
/// uses the token pinned here, and its in-flight count is exact. Its thread (a Foundation
/// `Thread`, never Swift's cooperative pool) loops: take work from the sender in one batch,
/// authorize it (``PushAuthorizer``), load it into pooled streams (``StreamSlot``, written by
/// the ``PushProvider``), `curl_multi_perform`, collect answers (read by the provider's answer
/// parser) and hand them to `onResults` in one batch, then `curl_multi_poll` until a socket, a
/// timer or `curl_multi_wakeup` (from `submit`/`shutdown`) wakes it. A failing
/// `curl_multi_perform` or `curl_multi_poll` never spins it (``LoopBackoff``).
///
/// "Reopening" replaces the multi handle once nothing is in flight: `curl_multi_cleanup`
/// closes the old connection and the next transfer opens a new one with the newest token.
/// Every multi handle is cleaned up on this thread (see `WakeTarget`).
///
/// The first stream slot is built in `init`, so a libcurl option the installed library
/// refuses (the CA blob, the client certificate settings) fails ``PushSender``'s `init`
/// instead of every request.
///
/// `@unchecked Sendable`: the connection is built by `PushSender.init`, then handed to
/// exactly one thread by `PushSender.start()`; from then on only that thread touches its
/// mutable state (the properties below are internal only so that the `+Start`, `+Answers` and
/// `+Lifecycle` files can reach them). The sender keeps the reference only to read the
/// immutable `index`. Other threads reach the connection solely through `SenderCore` (a
/// `Mutex`) and `WakeTarget` (`curl_multi_wakeup`, documented thread-safe).
final class PushConnection<P: PushProvider>: SenderConnection, @unchecked Sendable {
    let index: Int
    let core: SenderCore
    let provider: P
    var authorizer: P.Authorizer
    /// Streams this connection keeps in flight; lowered if a slot cannot be built (out of memory).
    var window: Int
    /// Nil only after the thread finished (the connection is then closed).
    var multi: CurlMulti!
    /// Every slot ever created, and the free ones; slots are reused for the thread's lifetime.
    var allSlots: [StreamSlot] = []
    var freeSlots: [StreamSlot] = []
    var inFlight = 0
    /// The serial of the bearer token the current multi's batches carry, 0 before the first.
    var pinnedSerial = 0
    /// Whether the current multi has carried a request (an idle, unused one needs no reopening).
    var multiUsed = false
    /// TCP connections libcurl opened on the current multi handle. More than one means
    /// libcurl reconnected by itself (after GOAWAY or a drop) with the token pinned for the
    /// old connection; the multi is then replaced so the new connection takes the newest token.
    var connectsOnMulti = 0
    var needsReopen = false
    /// Whether ``SenderState``'s `stats.openConnections` counts this connection.
    var countedOpen = false
    var reopenReason = ""
    var lastActivity: Int64 = 0
    var notBefore: Int64 = 0
    /// `curl_multi_perform` and `curl_multi_poll` failures in a row.
    var backoff = LoopBackoff()
    var results: [PushResponse] = []
    var logger: Logger

    init(index: Int, core: SenderCore, provider: P) throws {
        self.index = index
        self.core = core
        self.provider = provider
        self.window = core.streamsPerConnection
        self.multi = try CurlMulti(maxConcurrentStreams: core.configuration.maxConcurrentStreams,
                                   connections: provider.connectionsPerThread, perHost: provider.connectionsPerHost)
        var logger = core.logger
        logger[metadataKey: LogKey.connection] = "\(index)"
        self.logger = logger
        self.authorizer = provider.makeAuthorizer(logger: logger)
        let first = try makeSlot()
        allSlots.append(first)
        freeSlots.append(first)
        core.wakeTargets[index].set(multi)
    }

    /// A new stream with the sender's settings.
    func makeSlot() throws -> StreamSlot {
        let slot = try StreamSlot(layout: provider.layout, transfer: core.transfer, certificate: provider.clientCertificate)
        try provider.configure(stream: slot)
        return slot
    }

    /// Whether this thread's multi handle is one connection (``PushProvider/connectionsPerThread``
    /// is 1), replaced when libcurl reconnects, the connection is lost or an answer condemns it.
    var isOneConnection: Bool { provider.connectionsPerThread == 1 }

    /// The thread body; returns when the sender has shut down.
    func run(startedAt: Int64) {
        notBefore = startedAt + Int64(Double(index) * core.configuration.connectionStagger * 1e9)
        defer { finishThread() }
        while true {
            let now = monotonicNanoseconds()
            let want = !needsReopen && now >= notBefore ? window - inFlight : 0
            let answered = results.count
            // One lock per iteration: count the answers about to be delivered (so `freeSlots`
            // is exact when `onResults` runs: a worker claims more from there) and take new work.
            let (phase, work, stops) = core.state.withLock { s in
                s.inFlight -= answered
                s.stats.answered += answered
                let (phase, work) = s.exchange(want: want)
                return (phase, work, work.isEmpty ? LaneStops() : s.laneStops)
            }
            if answered > 0 {
                let batch = results
                results = []
                results.reserveCapacity(batch.count)
                core.onResults(batch)
            }
            if case .stopping(let deadline) = phase {
                if inFlight == 0 { return }
                if now >= deadline { cancelInFlight(); return }
            }
            if phase == .stopped { return }
            if !work.isEmpty { start(work, now: now, stops: stops) }

            let (rc, _) = multi.perform()
            if rc != CURLM_OK {
                multiFailed("curl_multi_perform", rc)
                continue
            }
            let resent = collectAnswers()
            if needsReopen, inFlight == 0 { reopen() }
            if !results.isEmpty || resent {  // deliver them and take more work before sleeping
                multiWorked()
                continue
            }
            let prc = multi.poll(timeoutMilliseconds: pollTimeout(now: now, phase: phase))
            if prc != CURLM_OK { multiFailed("curl_multi_poll", prc) } else { multiWorked() }
        }
    }

    /// How long `curl_multi_poll` may wait: at most a second, less before the stagger ends or
    /// the shutdown deadline.
    private func pollTimeout(now: Int64, phase: SenderState.Phase) -> Int32 {
        var timeout: Int64 = 1000
        if now < notBefore { timeout = min(timeout, (notBefore - now) / 1_000_000 + 1) }
        if case .stopping(let deadline) = phase { timeout = min(timeout, max(0, (deadline - now) / 1_000_000 + 1)) }
        return Int32(timeout)
    }
}
