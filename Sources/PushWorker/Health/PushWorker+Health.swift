import PushCore
import PushStore
import PGClient

extension PushWorker {
    /// How long a loop may go without a tick before the worker counts as stuck, in seconds: a
    /// statement may take ``WorkerConfiguration/statementDeadlineSeconds`` before its connection
    /// is given up, and upkeep runs every ``WorkerConfiguration/heartbeatSeconds``.
    var staleAfterSeconds: Double {
        max(60, 2 * configuration.statementDeadlineSeconds + 2 * configuration.heartbeatSeconds)
    }

    /// What `/healthz` and `/readyz` answer now (see ``WorkerHealth``). Before ``run()`` has
    /// connected, no loop has ticked and the database counts as not connected.
    public func health() -> WorkerHealth {
        let now = ContinuousClock.now
        func seconds(_ d: Duration) -> Double {
            Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
        return state.withLock { s in
            WorkerHealth(loopAges: s.ticks.mapValues { seconds(now - $0) },
                         runningSeconds: s.loopsStartedAt.map { seconds(now - $0) } ?? 0,
                         databaseConnected: s.databaseConnected, draining: s.stopRequested,
                         credentials: Set(configuration.credentialNames(.apns)), pausedCredentials: s.pausedCredentials,
                         staleAfterSeconds: staleAfterSeconds, refusals: s.refusals)
        }
    }

    /// Records that `loop` is alive.
    func tick(_ loop: WorkerHealth.Loop) {
        state.withLock { $0.ticks[loop] = .now }
    }

    /// Records whether the last statement on the claim connection worked.
    func databaseAnswered(_ ok: Bool) {
        state.withLock { $0.databaseConnected = ok }
    }

    /// Takes in the holds read by the claim loop: readiness and the hold gauges.
    func sawHolds(_ holds: [HeldEndpoint]) {
        let paused = Set(holds.filter { $0.kind != .outage && configuration.apnsCredential($0.endpoint.credential) != nil }.map(\.endpoint.credential))
        state.withLock { $0.pausedCredentials = paused }
        metrics.holds(holds)
    }

    /// The queue and lane gauges, if this worker holds the queue-gauges lock (taking it when
    /// free), and the names of `pushq.lanes` (the lanes that are labels) in every worker.
    /// Only workers that export metrics ask for the lock.
    func readQueueGauges(_ connection: PGConnection) async throws {
        guard metrics.isEnabled else { return }
        if try await connection.holdsQueueGaugesLock() {
            metrics.queue(try await connection.queueGauges())
            let lanes = try await connection.laneGauges()
            metrics.laneNames(lanes.filter(\.configured).map(\.name))
            metrics.lanes(lanes)
        } else {
            metrics.queue(nil)
            metrics.lanes(nil)
            metrics.laneNames(try await connection.laneNames())
        }
    }
}
