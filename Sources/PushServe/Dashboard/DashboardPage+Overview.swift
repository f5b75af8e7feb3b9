import Foundation
import PushCore
import PushStore

/// The dashboard's pages: pure functions from what the store read to HTML.
struct DashboardPage {
    var layout: DashboardLayout
    /// Whether the key may cancel single rows (scope `enqueue` or `admin`).
    var canCancel: Bool
    /// Whether the key may operate lanes and holds (scope `admin`).
    var canOperate: Bool
}

extension DashboardPage {
    /// The overview: counts by status and lane, the chart, the oldest due row, holds and live workers.
    func overview(_ status: QueueStatus, series: MinuteSeries, notice: String? = nil) -> HTML {
        let counts = QueueStatus.statuses.map { s -> HTML in
            "<tr><th>\(s)</th><td class=\"n\" id=\"count-\(s)\">\(status.counts[s] ?? 0)</td></tr>"
        }
        let estimate: HTML = status.finalCountsExact ? "" : "<p class=\"muted\">Final counts are estimates (more than 100 000 final rows).</p>"
        let oldest: HTML = status.oldestDueSeconds.map { "<p>Oldest due row waits for <strong id=\"oldest-due\">\(DashboardFormat.age(seconds: Double($0)))</strong>.</p>" }
            ?? "<p id=\"oldest-due\">No row is due.</p>"
        let totals = series.minutes.reduce((0, 0, 0)) { ($0.0 + $1.sent, $0.1 + $1.failed, $0.2 + $1.invalidated) }
        return layout.page(title: "Overview", refreshing: true, notice: notice, """
            <div class="grid">
            <section><h2>Rows by status</h2><table>\(counts)</table>\(estimate)\(oldest)</section>
            <section><h2>Last hour</h2>
            <p class="legend"><span class="sent">■ sent <strong id="hour-sent">\(totals.0)</strong></span><span class="failed">■ failed <strong id="hour-failed">\(totals.1)</strong></span><span class="invalidated">■ tokens invalidated <strong id="hour-invalidated">\(totals.2)</strong></span></p>
            \(MinuteChart.svg(series))</section>
            </div>
            \(providers(status))
            <section><h2>Lanes</h2>\(lanes(status.lanes))</section>
            \(tenants(status.tenants))
            <section><h2>Holds</h2>\(holds(status.otherHolds, webPushHeld: !status.webPushHolds.isEmpty))</section>
            \(webPushHolds(status.webPushHolds))
            <section><h2>Live workers</h2>\(workers(status.workers))\(withoutWorker(status.rowsWithoutWorker))</section>
            """)
    }

    private func lanes(_ lanes: [LaneStatus]) -> HTML {
        let rows = lanes.map { lane -> HTML in
            let g = lane.gauges
            let cap = g.maxPerSecond.map { String(format: "%.0f/s", $0) } ?? "none"
            var actions: [HTML] = []
            if canOperate {
                actions.append(confirmLink(g.paused ? .resumeLane(g.name) : .pauseLane(g.name)))
                if g.dueRows > 0 { actions.append(confirmLink(.cancelLane(g.name))) }
            }
            return """
                <tr><td>\(g.name)</td><td class="n">\(g.rank)</td><td class="n" id="lane-due-\(g.name)">\(g.dueRows)</td>\
                <td class="n">\(g.dueRows > 0 ? DashboardFormat.age(seconds: Double(g.oldestDueAgeSeconds)) : "")</td>\
                <td class="n">\(String(format: "%.1f", lane.sentPerSecond))</td><td>\(cap)</td><td>\(g.paused ? "paused" : "")</td>\
                <td id="lane-quiet-\(g.name)">\(g.quietHours ?? "")\(g.quietRows > 0 ? " (\(g.quietRows) waiting)" : "")</td>\
                <td id="lane-recipient-cap-\(g.name)">\(g.recipientCap.map(\.description) ?? "")\(g.cappedRows > 0 ? " (\(g.cappedRows) waiting)" : "")</td><td>\(actions)</td></tr>
                """
        }
        return """
            <table><tr><th>lane</th><th class="n">rank</th><th class="n">due rows</th><th class="n">oldest due</th><th class="n">sent/s</th><th>cap</th><th></th><th>quiet hours</th><th>recipient cap</th><th></th></tr>\(rows)</table>
            """
    }

    /// Each lane's tenants with the most due rows (rows without a tenant as "(none)"): shown only
    /// when a lane's due rows have tenants.
    private func tenants(_ tenants: [TenantDue]) -> HTML {
        guard !tenants.isEmpty else { return "" }
        let rows = tenants.map { t -> HTML in
            let name = t.tenant ?? "(none)"
            return """
                <tr><td>\(t.lane)</td><td>\(name)</td><td class="n" id="tenant-due-\(t.lane)-\(t.tenant ?? "")">\(t.dueRows)\(t.atLeast ? "+" : "")</td></tr>
                """
        }
        return """
            <section><h2>Tenants</h2><p class="muted">In each lane, the \(TenantDue.shownPerLane) tenants with the most due rows; their rows are sent in turn.</p>\
            <table id="tenants"><tr><th>lane</th><th>tenant</th><th class="n">due rows</th></tr>\(rows)</table></section>
            """
    }

    /// The APNs and FCM holds (Web Push origins have their table, ``webPushHolds(_:)``).
    private func holds(_ holds: [HoldReport], webPushHeld: Bool) -> HTML {
        guard !holds.isEmpty else {
            return webPushHeld ? "<p id=\"holds\">None but Web Push origins (below).</p>" : "<p id=\"holds\">None: every endpoint is sending.</p>"
        }
        let rows = holds.map { h -> HTML in
            let e = h.held.endpoint
            let lift: HTML = canOperate ? confirmLink(.liftHold(credential: e.credential, environment: e.channel)) : ""
            return """
                <tr><td>\(h.held.kind.rawValue)</td><td>\(e.credential)</td><td>\(e.channel)</td><td>\(h.held.reason)</td><td>\(h.message)</td>\
                <td>\(DashboardFormat.time(h.nextProbe))</td><td class="n">\(h.held.failures)</td><td>\(lift)</td></tr>
                """
        }
        return """
            <table id="holds"><tr><th>kind</th><th>credential</th><th>environment</th><th>reason</th><th>message</th><th>next probe</th><th class="n">probes</th><th></th></tr>\(rows)</table>
            """
    }

    /// Rows by provider and status, when more than one provider has rows or one other than APNs
    /// does (else the counts above say it all).
    private func providers(_ status: QueueStatus) -> HTML {
        guard status.providers.count > 1 || status.providers.contains(where: { $0.provider != .apns }) else { return "" }
        let header = QueueStatus.statuses.map { s -> HTML in "<th class=\"n\">\(s)</th>" }
        let rows = status.providers.map { p -> HTML in
            let cells = QueueStatus.statuses.map { s -> HTML in
                "<td class=\"n\" id=\"provider-\(p.provider.rawValue)-\(s)\">\(p.counts[s] ?? 0)</td>"
            }
            return "<tr><th>\(p.provider.serviceName)</th>\(cells)</tr>"
        }
        return "<section><h2>Rows by provider</h2><table><tr><th>provider</th>\(header)</tr>\(rows)</table></section>"
    }

    /// Each held Web Push origin (where the push service is): shown only when there is one.
    private func webPushHolds(_ holds: [HoldReport]) -> HTML {
        guard !holds.isEmpty else { return "" }
        let rows = holds.map { h -> HTML in
            let e = h.held.endpoint
            let lift: HTML = canOperate ? confirmLink(.liftHold(credential: e.credential, environment: e.channel)) : ""
            return """
                <tr><td>\(e.origin?.description ?? "every origin")</td><td>\(h.held.kind.rawValue)</td><td>\(e.credential)</td><td>\(h.held.reason)</td>\
                <td>\(h.message)</td><td>\(DashboardFormat.time(h.nextProbe))</td><td class="n">\(h.held.failures)</td><td>\(lift)</td></tr>
                """
        }
        return """
            <section><h2>Web Push holds</h2><table id="webpush-holds"><tr><th>origin</th><th>kind</th><th>credential</th><th>reason</th><th>message</th><th>next probe</th><th class="n">probes</th><th></th></tr>\(rows)</table></section>
            """
    }

    private func workers(_ workers: [WorkerRecord]) -> HTML {
        guard !workers.isEmpty else { return "<p>No live worker.</p>" }
        let rows = workers.map { w -> HTML in
            let credentials = w.credentials.map { c in c.name + (c.provider.map { " (\($0))" } ?? "") + " " + c.environment }.joined(separator: ", ")
            return """
                <tr><td>\(w.id)</td><td>\(w.host)</td><td class="n">\(w.pid)</td><td>\(w.version)</td><td>\(credentials)</td>\
                <td>\(DashboardFormat.time(w.startedAt))</td><td class="n">\(DashboardFormat.age(seconds: w.heartbeatAge)) ago</td></tr>
                """
        }
        return """
            <table><tr><th>worker</th><th>host</th><th class="n">pid</th><th>version</th><th>credentials</th><th>started</th><th class="n">last beat</th></tr>\(rows)</table>
            """
    }

    private func withoutWorker(_ rows: [(credential: String, rows: Int)]) -> HTML {
        guard !rows.isEmpty else { return "" }
        let items = rows.map { r -> HTML in "<li>\(r.credential): \(r.rows) rows</li>" }
        return "<p>Rows waiting for a credential no live worker serves:</p><ul>\(items)</ul>"
    }

    /// A link to the confirmation page of `action`.
    func confirmLink(_ action: DashboardAction) -> HTML {
        "<a class=\"action\" href=\"\(DashboardFormat.url(DashboardLayout.root + "/confirm", action.queryItems))\">\(action.verb)</a>"
    }
}
