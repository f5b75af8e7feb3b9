import CCurl
import Foundation
import PushCore

extension PushConnection {
    /// Replaces the multi handle (closing the connection); the next request opens a new one
    /// and takes the newest token.
    func reopen() {
        guard inFlight == 0 else { return }
        do {
            let fresh = try CurlMulti(maxConcurrentStreams: core.configuration.maxConcurrentStreams,
                                      connections: provider.connectionsPerThread, perHost: provider.connectionsPerHost)
            core.wakeTargets[index].set(fresh)
            closeMulti()
            multi = fresh
            pinnedSerial = 0
            multiUsed = false
            connectsOnMulti = 0
            needsReopen = false
            let wasOpen = countedOpen
            countedOpen = false
            core.state.withLock { s in
                s.stats.reopens += 1
                if wasOpen { s.stats.openConnections -= 1 }
            }
            logger.info("reopening connection", metadata: [LogKey.reason: "\(reopenReason)"])
        } catch {
            logger.error("cannot create a new connection handle", metadata: ["error": "\(error)"])
        }
    }

    /// `curl_multi_perform` or `curl_multi_poll` failed: logs the first failure of a run, marks
    /// the connection for replacing, gives up what is in flight once the failures persist
    /// (``LoopBackoff``), and rests this thread instead of spinning.
    func multiFailed(_ call: String, _ rc: CURLMcode) {
        let step = backoff.failed()
        let message = "\(call) failed: \(curlMessage(rc))"
        if step.log {
            logger.error("libcurl cannot drive this connection's transfers; replacing the connection",
                         metadata: [LogKey.curlError: "\(message)"])
        }
        if !needsReopen {
            needsReopen = true
            reopenReason = message
        }
        if step.abandonInFlight, inFlight > 0 {
            // Their outcome is unknown: the caller retries them.
            removeInFlight(TransportFailure(kind: .other, code: Int32(rc.rawValue), message: message))
        }
        if inFlight == 0 { reopen() }
        var rest = timespec(tv_sec: step.restMilliseconds / 1000, tv_nsec: (step.restMilliseconds % 1000) * 1_000_000)
        nanosleep(&rest, nil)
    }

    /// A turn in which libcurl worked: logs the end of a run of failures.
    func multiWorked() {
        guard backoff.failures > 0 else { return }
        let failures = backoff.succeeded()
        logger.info("libcurl drives this connection's transfers again", metadata: ["failures": "\(failures)"])
    }

    /// At the shutdown deadline: reports what is still in flight as cancelled.
    func cancelInFlight() {
        removeInFlight(TransportFailure(kind: .cancelled, message: "the sender shut down before \(core.provider.serviceName) answered"))
    }

    /// Removes every transfer in flight from the multi handle and reports it with `failure`.
    private func removeInFlight(_ failure: TransportFailure) {
        for slot in allSlots where slot.request != nil {
            let rc = multi.remove(slot.easy)
            if rc != CURLM_OK {
                logger.error("curl_multi_remove_handle failed", metadata: [LogKey.curlError: "\(curlMessage(rc))"])
            }
            if let response = slot.cancel(failure) { results.append(response) }
            inFlight -= 1
        }
        freeSlots = allSlots
    }

    /// `curl_multi_cleanup` of the current multi, on this thread (its wake target no longer points at it).
    func closeMulti() {
        let rc = multi.close()
        if rc != CURLM_OK {
            logger.error("curl_multi_cleanup failed", metadata: [LogKey.curlError: "\(curlMessage(rc))"])
        }
    }

    /// Delivers the last answers and closes everything, on this thread.
    func finishThread() {
        if !results.isEmpty {
            let batch = results
            results = []
            core.onResults(batch)
            core.state.withLock { $0.inFlight -= batch.count; $0.stats.answered += batch.count }
        }
        if countedOpen {
            countedOpen = false
            core.state.withLock { $0.stats.openConnections -= 1 }
        }
        // On this thread, in ownership order: no other thread can wake the multi any more;
        // the easy handles (all detached) are cleaned up, then the multi, closing the connection.
        core.wakeTargets[index].set(nil)
        freeSlots = []
        allSlots = []
        closeMulti()
        multi = nil
        core.threadExited()
    }
}
