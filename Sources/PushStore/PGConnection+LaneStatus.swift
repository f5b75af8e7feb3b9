extension PGConnection {
    /// The lanes of ``QueueStatus/lanes``: ``laneGauges()`` with each lane's send rate, plus the
    /// lanes without a row in `pushq.lanes` that sent in the window but have nothing due.
    func laneStatus() throws(PGError) -> [LaneStatus] {
        let r = try query(Self.laneSendRatesSQL, [QueueStatus.sendRateSample, QueueStatus.sendRateSeconds])
        var sent: [String: Int] = [:]
        var sampled = 0
        var span = Double(QueueStatus.sendRateSeconds)
        for i in 0..<r.count {
            sent[r.string(i, 0) ?? "", default: 0] += try r.decode(Int.self, i, 1) ?? 0
            sampled = try r.decode(Int.self, i, 2) ?? 0
            if sampled >= QueueStatus.sendRateSample {
                // More rows finished in the window than the sample holds: the rate is over the
                // time the sample spans.
                span = max(1, try r.decode(Double.self, i, 3) ?? span)
            }
        }
        var lanes = try laneGauges().map { LaneStatus(gauges: $0, sentPerSecond: Double(sent[$0.name] ?? 0) / span) }
        let shown = Set(lanes.map(\.gauges.name))
        var unconfigured = lanes.count(where: { !$0.gauges.configured })
        let defaultRank = lanes.first { $0.gauges.name == "default" }?.gauges.rank ?? 100
        for (name, n) in sent.sorted(by: { $0.key < $1.key }) where n > 0 && !shown.contains(name) {
            guard unconfigured < Self.unconfiguredLaneLimit else { break }
            unconfigured += 1
            lanes.append(LaneStatus(gauges: LaneGauges(name: name, configured: false, rank: defaultRank, maxPerSecond: nil, paused: false,
                                                       dueRows: 0, oldestDueAgeSeconds: 0),
                                    sentPerSecond: Double(n) / span))
        }
        return lanes
    }

    /// Rows sent per lane among the newest final rows of the last `$2` seconds, at most `$1` of
    /// them, through `notifications_finished` read backwards: with the size of the sample and
    /// the age of its oldest row, for the span the rate is over.
    static let laneSendRatesSQL = """
        SELECT lane, count(*) FILTER (WHERE status = 'sent')::int8, (sum(count(*)) OVER ())::int8,
               extract(epoch FROM now() - min(min(finished_at)) OVER ())::float8
          FROM (SELECT lane, status, finished_at FROM pushq.notifications
                 WHERE status IN ('sent', 'failed', 'expired', 'cancelled') AND finished_at > now() - $2 * interval '1 second'
                 ORDER BY finished_at DESC, created_at DESC LIMIT $1) newest
         GROUP BY lane
        """
}
