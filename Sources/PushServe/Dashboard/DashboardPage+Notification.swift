import PushStore

extension DashboardPage {
    /// Every column of one notification, the payload and metadata in full, the token shortened.
    func notification(_ record: NotificationRecord, notice: String? = nil) -> HTML {
        let rows = record.columns.map { c -> HTML in
            let value: HTML
            switch c.name {
            case "payload", "metadata": value = c.value.map { "<pre>\($0)</pre>" } ?? "<span class=\"muted\">NULL</span>"
            case "device_token":
                value = c.value.map { "<a href=\"\(DashboardFormat.url(DashboardLayout.root + "/search", [("q", "token:" + $0)]))\"><code>\(DashboardFormat.shortToken($0))</code></a>" }
                    ?? "<span class=\"muted\">NULL</span>"
            default: value = c.value.map { "\($0)" } ?? "<span class=\"muted\">NULL</span>"
            }
            return "<tr><th>\(c.name)</th><td id=\"column-\(c.name)\">\(value)</td></tr>"
        }
        let id = Int64(record["id"] ?? "") ?? 0
        let waiting = record["status"] == "queued" || record["status"] == "retrying"
        let cancel: HTML = canCancel && waiting ? "<p>\(confirmLink(.cancelRow(id)))</p>" : ""
        return layout.page(title: "Notification \(id)", notice: notice, "\(cancel)<table class=\"record\">\(rows)</table>")
    }

    /// The confirmation step of `action`: what it will do, and one button that posts it with the CSRF token.
    func confirm(_ action: DashboardAction) -> HTML {
        let fields = action.queryItems.map { f -> HTML in "<input type=\"hidden\" name=\"\(f.0)\" value=\"\(f.1)\">" }
        return layout.page(title: "Confirm", """
            <section><p>This will \(action.summary).</p>
            <form method="post" action="\(DashboardLayout.root)/actions">\(fields)\(layout.csrfField)
            <button class="danger" type="submit">\(action.verb)</button> <a href="\(DashboardLayout.root)">Back</a></form></section>
            """)
    }

    /// A page saying the key may not do what it asked, or the request was refused.
    func refused(_ message: String) -> HTML {
        layout.page(title: "Refused", "<p class=\"error\">\(message)</p>")
    }
}
