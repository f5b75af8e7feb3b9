import PGClient
extension PGConnection {
    /// The lanes of ``QueueStatus/lanes``: ``laneGauges()`` with each lane's send rate, plus the
    /// lanes without a row in `pushq.lanes` that sent in the window but have nothing due.
    func laneStatus() throws(PGError) -> [LaneStatus] {
        let r = try query(Self.laneSendRatesSQL)
        var sent: [String: Double] = [:]
        for row in r.rows { sent[try row.string("lane") ?? ""] = try row.decode(Double?.self, "rows") ?? 0 }
        let span = Double(QueueStatus.sendRateSeconds)
        var lanes = try laneGauges().map { LaneStatus(gauges: $0, sentPerSecond: (sent[$0.name] ?? 0) / span) }
        let shown = Set(lanes.map(\.gauges.name))
        var unconfigured = lanes.count(where: { !$0.gauges.configured })
        let defaultRank = lanes.first { $0.gauges.name == "default" }?.gauges.rank ?? 100
        for (name, n) in sent.sorted(by: { $0.key < $1.key }) where n > 0 && !shown.contains(name) {
            guard unconfigured < Self.unconfiguredLaneLimit else { break }
            unconfigured += 1
            lanes.append(LaneStatus(gauges: LaneGauges(name: name, configured: false, rank: defaultRank, maxPerSecond: nil, paused: false,
                                                       dueRows: 0, oldestDueAgeSeconds: 0),
                                    sentPerSecond: n / span))
        }
        return lanes
    }

    /// Rows sent per lane in the last minute (``QueueStatus/sendRateSeconds``), from the tally
    /// (pushq.outcomes): the current minute's, and the previous minute's in the share of it that
    /// falls within the last 60 seconds (its rows taken as spread evenly over it).
    static let laneSendRatesSQL = """
        SELECT lane, sum(rows * CASE WHEN minute = date_trunc('minute', now()) THEN 1
                                     ELSE 1 - extract(epoch FROM now() - date_trunc('minute', now())) / 60 END)::float8 AS rows
          FROM pushq.outcomes
         WHERE status = 'sent' AND minute >= date_trunc('minute', now()) - interval '1 minute'
         GROUP BY lane
        """
}
