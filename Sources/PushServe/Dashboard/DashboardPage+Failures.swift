import PushStore
import PGClient

extension DashboardPage {
    /// The reasons of the last hour and of the last day, each count linking to its rows.
    func failures(hour: FailureReasons, day: FailureReasons) -> HTML {
        layout.page(title: "Failures", refreshing: true, """
            <div class="grid"><section><h2>Last hour</h2>\(reasons(hour))</section>
            <section><h2>Last day</h2>\(reasons(day))</section></div>
            """)
    }

    /// The newest rows that failed with `reason` in the last `minutes` minutes.
    func failedRows(reason: String, minutes: Int, rows: [NotificationSummary]) -> HTML {
        let window = minutes <= 60 ? "the last hour" : "the last day"
        return layout.page(title: "Failed with \(reason.isEmpty ? "no reason" : reason)", """
            <p>The newest rows that failed in \(window) (at most \(PGConnection.dashboardListLimit)).</p>
            \(notificationTable(rows))
            """)
    }

    private func reasons(_ failures: FailureReasons) -> HTML {
        guard !failures.reasons.isEmpty else { return "<p>No row failed.</p>" }
        let rows = failures.reasons.map { r -> HTML in
            let link = DashboardFormat.url(DashboardLayout.root + "/failures/rows", [("reason", r.reason), ("minutes", String(failures.minutes))])
            return "<tr><td>\(r.reason.isEmpty ? "(none)" : r.reason)</td><td class=\"n\"><a href=\"\(link)\">\(r.rows)</a></td></tr>"
        }
        return "<table><tr><th>reason</th><th class=\"n\">rows</th></tr>\(rows)</table>"
    }

    /// Rows in a table, each linking to its page; tokens shortened.
    func notificationTable(_ rows: [NotificationSummary]) -> HTML {
        guard !rows.isEmpty else { return "<p>No rows.</p>" }
        let body = rows.map { n -> HTML in
            let target: HTML = n.channel.map { "channel \($0)" } ?? "\(DashboardFormat.shortToken(n.deviceToken))"
            return """
                <tr><td><a href="\(DashboardLayout.root)/notifications/\(n.id)">\(n.id)</a></td><td>\(n.provider)</td><td><code>\(target)</code></td>\
                <td>\(n.lane)</td><td class="status">\(n.status)</td><td>\(n.lastReason)</td><td class="n">\(n.attempts)</td>\
                <td>\(DashboardFormat.time(n.createdAt))</td><td>\(DashboardFormat.time(n.finishedAt))</td></tr>
                """
        }
        return """
            <table class="rows"><tr><th>id</th><th>provider</th><th>token</th><th>lane</th><th>status</th><th>reason</th><th class="n">attempts</th><th>created</th><th>finished</th></tr>\(body)</table>
            """
    }
}
