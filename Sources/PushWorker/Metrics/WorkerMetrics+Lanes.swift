import CoreMetrics
import PushCore
import PushStore

extension WorkerMetrics {
    /// One lane's series: its due rows and oldest due age, and for a lane of `pushq.lanes` its
    /// rank, cap and pause (nil for `other`).
    struct LaneSeries {
        var due: Gauge
        var oldest: Gauge
        /// Rows waiting for the lane's quiet hours to end (`pushq_lane_quiet_rows`).
        var quiet: Gauge
        /// Rows waiting for their recipient's frequency cap to have room (`pushq_lane_capped_rows`).
        var capped: Gauge
        var settings: (rank: Gauge, cap: Gauge, paused: Gauge)?

        func destroy() {
            due.destroy()
            oldest.destroy()
            quiet.destroy()
            capped.destroy()
            settings?.rank.destroy()
            settings?.cap.destroy()
            settings?.paused.destroy()
        }
    }

    /// The label of `lane`: its name if `pushq.lanes` has a row of that name (operators make
    /// those: a bounded set), else `other` (producers name lanes: an unbounded set).
    static func laneLabel(_ lane: String, named: Set<String>) -> String {
        named.contains(lane) ? lane : MetricLabel.other
    }

    /// The names of `pushq.lanes`, read by every worker at each upkeep: the lanes that become
    /// labels of `pushq_lane_sent_total`, whose series are made (at 0) as soon as they are known.
    func laneNames(_ names: [String]) {
        guard isEnabled else { return }
        let made = state.withLock { s -> [Counter] in
            s.namedLanes = Set(names)
            return (names + [MetricLabel.other]).compactMap { name in
                s.laneSent[name] == nil ? Self.counter(&s.laneSent, name, make: self.laneSentCounter(name)) : nil
            }
        }
        for counter in made { counter.increment(by: 0) }
    }

    private func laneSentCounter(_ label: String) -> Counter {
        Counter(label: Catalog.laneSent.name, dimensions: [("lane", label)], factory: factory)
    }

    /// The lane gauges, read by the worker holding the queue-gauges lock with the queue gauges;
    /// nil removes them (the lock went to another worker). The lanes without a row in
    /// `pushq.lanes` are summed under `other` (due rows added, the oldest age the largest).
    func lanes(_ lanes: [LaneGauges]?) {
        guard isEnabled else { return }
        state.withLock { s in
            guard let lanes else {
                for series in s.laneGauges.values { series.destroy() }
                s.laneGauges = [:]
                return
            }
            var other = (due: 0, oldest: 0.0, quiet: 0, capped: 0)
            var seen: Set<String> = [MetricLabel.other]
            for lane in lanes {
                guard lane.configured, lane.name != MetricLabel.other else {
                    other = (other.due + lane.dueRows, max(other.oldest, lane.oldestDueAgeSeconds), other.quiet + lane.quietRows,
                             other.capped + lane.cappedRows)
                    continue
                }
                seen.insert(lane.name)
                let series = laneSeries(lane.name, &s)
                series.due.record(lane.dueRows)
                series.oldest.record(lane.oldestDueAgeSeconds)
                series.quiet.record(lane.quietRows)
                series.capped.record(lane.cappedRows)
                series.settings?.rank.record(lane.rank)
                series.settings?.cap.record(lane.maxPerSecond ?? 0)
                series.settings?.paused.record(lane.paused ? 1 : 0)
            }
            let series = laneSeries(MetricLabel.other, &s)
            series.due.record(other.due)
            series.oldest.record(other.oldest)
            series.quiet.record(other.quiet)
            series.capped.record(other.capped)
            for (name, series) in s.laneGauges where !seen.contains(name) {
                series.destroy()
                s.laneGauges[name] = nil
            }
        }
    }

    private func laneSeries(_ label: String, _ s: inout State) -> LaneSeries {
        if let series = s.laneGauges[label] { return series }
        let dims = [("lane", label)]
        func gauge(_ metric: Metric) -> Gauge { Gauge(label: metric.name, dimensions: dims, factory: factory) }
        let series = LaneSeries(due: gauge(Catalog.laneDueRows), oldest: gauge(Catalog.laneOldestDueAge), quiet: gauge(Catalog.laneQuietRows),
                                capped: gauge(Catalog.laneCappedRows),
                                settings: label == MetricLabel.other ? nil
                                    : (gauge(Catalog.laneRank), gauge(Catalog.laneMaxPerSecond), gauge(Catalog.lanePaused)))
        s.laneGauges[label] = series
        return series
    }

    /// Adds the rows each lane sent (``Tally/sentByLane``) to `pushq_lane_sent_total`; called
    /// under the lock by ``add(_:)``.
    func laneSentCounters(_ sent: [String: Int], _ s: inout State) -> [(Counter, Int)] {
        var counters: [(Counter, Int)] = []
        for (lane, n) in sent where n > 0 {
            let label = Self.laneLabel(lane, named: s.namedLanes)
            counters.append((Self.counter(&s.laneSent, label, make: laneSentCounter(label)), n))
        }
        return counters
    }
}
