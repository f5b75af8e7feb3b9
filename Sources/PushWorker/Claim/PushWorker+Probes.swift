import Logging
import PushCore
import PushStore
import PGClient

extension PushWorker {
    /// Takes each due probe that no other worker took first, and sends the endpoint's few
    /// probe rows. A hold whose endpoint has no due rows to probe with is lifted: the next
    /// claim of its rows judges the endpoint afresh. A probe claim that fails on a row's data
    /// hunts that row down within the endpoint; the rows claimed meanwhile are the probe. The
    /// next probe's interval is drawn from `random`.
    func probe(_ due: [HeldEndpoint], credentials: [Provider: [String]],
               random: inout some RandomNumberGenerator, _ connection: PGConnection) async throws {
        let policy = configuration.holdPolicy
        for h in due {
            let seconds = policy.interval(h.kind, probes: h.failures, using: &random)
            guard try await connection.takeProbe(h.endpoint, failures: h.failures, seconds: seconds, workerID: configuration.workerID) else { continue }
            let scope = ClaimScope(credentials: credentials, only: h.endpoint)
            let claimed: Claim
            do {
                claimed = try await claim(connection, limit: policy.probeRows(h.kind), scope)
            } catch {
                guard Self.failure(of: error) == .deterministic else { throw error }
                if case .giveUp = await hunt(after: error, limit: policy.probeRows(h.kind), scope, connection).end { throw error }
                continue
            }
            if claimed.rows.contains(where: { $0.verdict == .send }) {
                logger.info("probing a held endpoint", metadata: [
                    LogKey.provider: "\(h.endpoint.provider.rawValue)", LogKey.credential: "\(h.endpoint.credential)",
                    LogKey.environment: "\(h.endpoint.channel)",
                    "hold.kind": "\(h.kind.rawValue)", "hold.reason": "\(h.reason)", "hold.probe": "\(h.failures)",
                    "hold.next_probe_seconds": "\(Int(seconds.rounded()))"])
                dispatch(claimed, probe: true)
            } else {
                dispatch(claimed, probe: true)
                try await connection.liftIdleHold(h.endpoint, failures: h.failures + 1)
                logger.info("hold lifted: no notifications waiting to probe it with", metadata: [
                    LogKey.provider: "\(h.endpoint.provider.rawValue)", LogKey.credential: "\(h.endpoint.credential)",
                    LogKey.environment: "\(h.endpoint.channel)",
                    "hold.kind": "\(h.kind.rawValue)"])
            }
        }
    }
}
