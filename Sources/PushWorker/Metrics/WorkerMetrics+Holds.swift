import CoreMetrics
import PushCore
import PushStore

extension WorkerMetrics {
    /// The held endpoints every worker reads once a second: 1 for each held one, 0 for those
    /// held before and no longer.
    func holds(_ holds: [HeldEndpoint]) {
        guard isEnabled else { return }
        state.withLock { s in
            // A Web Push credential's holds are per origin; its gauges (labelled without the
            // origin, a subscriber's choice) say whether any origin is held, of either kind.
            var seen: [Endpoint: (paused: Bool, down: Bool)] = [:]
            for h in holds {
                let e = h.endpoint.withoutOrigin
                let was = seen[e] ?? (false, false)
                seen[e] = (was.paused || h.kind != .outage, was.down || h.kind == .outage)
            }
            for (endpoint, held) in seen {
                let g = gauges(endpoint, &s)
                g.paused.record(held.paused ? 1 : 0)
                g.down.record(held.down ? 1 : 0)
            }
            for (endpoint, g) in s.holdGauges where seen[endpoint] == nil {
                g.paused.record(0)
                g.down.record(0)
            }
        }
    }

    /// Makes the endpoint's hold gauges exist (at 0) before any hold, so that alerts see a series.
    func serves(_ endpoints: [Endpoint]) {
        guard isEnabled else { return }
        state.withLock { s in
            s.served.formUnion(endpoints)
            for e in endpoints where s.holdGauges[e] == nil {
                let g = gauges(e, &s)
                g.paused.record(0)
                g.down.record(0)
            }
        }
    }

    private func gauges(_ endpoint: Endpoint, _ s: inout State) -> (paused: Gauge, down: Gauge) {
        if let g = s.holdGauges[endpoint] { return g }
        let dims = [("credential", endpoint.credential), ("environment", endpoint.metricEnvironment)]
        let g = (Gauge(label: Catalog.paused.name, dimensions: dims, factory: factory),
                 Gauge(label: Catalog.down.name, dimensions: dims, factory: factory))
        s.holdGauges[endpoint] = g
        return g
    }

    /// The queue gauges, read by the worker holding the queue-gauges lock; nil removes them
    /// (the lock went to another worker), so that only one worker exports them.
    func queue(_ gauges: QueueGauges?) {
        guard isEnabled else { return }
        state.withLock { s in
            guard let gauges else {
                if let q = s.queue {
                    q.due.destroy()
                    q.oldest.destroy()
                    s.queue = nil
                }
                return
            }
            let q = s.queue ?? (Gauge(label: Catalog.dueRows.name, dimensions: [], factory: factory),
                                Gauge(label: Catalog.oldestDueAge.name, dimensions: [], factory: factory))
            s.queue = q
            q.due.record(gauges.dueRows)
            q.oldest.record(gauges.oldestDueAgeSeconds)
        }
    }
}
