import Foundation
import PushCore
@testable import PushServe
@testable import PushStore
import Testing

/// The dashboard's pages as pure functions: escaping, shortened tokens, links, the chart.
@Suite("Dashboard pages")
struct DashboardPageTests {
    static let hostile = "<script>alert(\"x\")</script>'&<img src=x onerror=alert(1)>"
    static let page = DashboardPage(layout: DashboardLayout(keyName: hostile, csrfToken: "tok\"en"), canCancel: true, canOperate: true)
    static let token = "0123456789abcdef" + String(repeating: "0", count: 40) + "fedcba98"

    /// Markup that text from the database must never become.
    static func expectInert(_ html: HTML, sourceLocation: SourceLocation = #_sourceLocation) {
        let s = html.rendered
        #expect(s.components(separatedBy: "<script").count == 2, "only the dashboard's own script tag", sourceLocation: sourceLocation)
        #expect(!s.contains("<img"), sourceLocation: sourceLocation)
        #expect(!s.contains("alert(\""), sourceLocation: sourceLocation)
        #expect(s.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;&lt;img"), sourceLocation: sourceLocation)
    }

    @Test("escape: & < > \" ' become references, other text (Unicode included) stays")
    func escape() {
        #expect(HTML.escape(#"a&b<c>d"e'f"#) == "a&amp;b&lt;c&gt;d&quot;e&#39;f")
        #expect(HTML.escape("café ✓ 日本") == "café ✓ 日本")
        let text = "<b>"
        let nested: HTML = "<i>\(text)</i>"
        #expect("<p>\(nested)</p>" as HTML == "<p><i>&lt;b&gt;</i></p>", "HTML nests as is, Strings are escaped")
        let none: String? = nil
        #expect("<p>\(none)</p>" as HTML == "<p></p>")
    }

    /// every page escapes what the database holds: payload, metadata, reasons, lanes, holds, workers, users,
    /// topics, search text, the key's name
    @Test("every page escapes what the database holds")
    func everyPageEscapes() {
        let h = Self.hostile
        let record = NotificationRecord(columns: NotificationRecord.names.map {
            .init(name: $0, value: ["id": "7", "status": "queued", "device_token": Self.token][$0] ?? h)
        })
        Self.expectInert(Self.page.notification(record, notice: h))
        let summary = NotificationSummary(id: 7, provider: h, deviceToken: h, channel: nil, lane: h, status: h, lastReason: h, attempts: 1,
                                          createdAt: Date(), finishedAt: nil)
        Self.expectInert(Self.page.failedRows(reason: h, minutes: 60, rows: [summary]))
        Self.expectInert(Self.page.failures(hour: FailureReasons(minutes: 60, reasons: [.init(reason: h, rows: 3)]),
                                            day: FailureReasons(minutes: 1_440, reasons: [])))
        let device = DeviceRecord(deviceToken: h, environment: h, provider: h, kind: h, userRef: h, topic: h, registeredAt: nil,
                                  invalidatedAt: nil, invalidReason: h, activity: h)
        Self.expectInert(Self.page.userPage(h, devices: [device], rows: [summary]))
        Self.expectInert(Self.page.tokenPage(h, devices: [device], rows: [summary]))
        Self.expectInert(Self.page.metadataResults(key: h, value: h, rows: [summary]))
        Self.expectInert(Self.page.nothingFound(h))
        Self.expectInert(Self.page.refused(h))
        Self.expectInert(Self.page.confirm(.cancelLane(h)))
        Self.expectInert(Self.page.confirm(.liftHold(credential: h, environment: h)))
        Self.expectInert(Self.page.overview(Self.status(hostile: h), series: MinuteSeries(minutes: []), notice: h))
    }

    static func status(hostile h: String) -> QueueStatus {
        let hold = HoldReport(held: HeldEndpoint(endpoint: Endpoint(credential: h, environment: .production), kind: .credential, reason: h),
                              message: h, nextProbe: Date())
        let worker = WorkerRecord(id: h, host: h, pid: 1, version: h, startedAt: Date(), heartbeatAge: 2,
                                  credentials: [ServedCredential(name: h, environment: h, topic: h)])
        let lane = LaneStatus(gauges: LaneGauges(name: h, configured: true, rank: 1, maxPerSecond: nil, paused: false, dueRows: 3,
                                                 oldestDueAgeSeconds: 4), sentPerSecond: 1)
        return QueueStatus(counts: ["queued": 3], finalCountsExact: true, oldestDueSeconds: 4, holders: [], reasons: [], invalidTokens: [],
                           holds: [hold], workers: [worker], rowsWithoutWorker: [(h, 2)], lanes: [lane],
                           channels: ChannelsStatus(counts: [:], channels: [], reconciliations: []))
    }

    @Test("a token is shown as its first 8 and last 6 characters, never whole; short values stay")
    func shortToken() {
        #expect(DashboardFormat.shortToken(Self.token) == "01234567…dcba98")
        #expect(DashboardFormat.shortToken("short") == "short" && DashboardFormat.shortToken(nil) == "")
        let record = NotificationRecord(columns: [.init(name: "id", value: "1"), .init(name: "device_token", value: Self.token)])
        let html = Self.page.notification(record).rendered
        #expect(!html.contains(">" + Self.token + "<") && html.contains("01234567…dcba98"))
    }

    @Test("search text: digits an id, key=value metadata, long hex or FCM-shaped a token, else a user; prefixes say which")
    func searchParsing() {
        #expect(DashboardSearch("42") == .id(42))
        #expect(DashboardSearch(" campaign=spring ") == .metadata(key: "campaign", value: "spring"))
        #expect(DashboardSearch("a=b=c") == .metadata(key: "a", value: "b=c"))
        #expect(DashboardSearch(Self.token) == .token(Self.token))
        let fcm = "fGx" + String(repeating: "A", count: 60) + ":APA91b" + String(repeating: "z", count: 60)
        #expect(DashboardSearch(fcm) == .token(fcm))
        #expect(DashboardSearch("user-7") == .user("user-7"))
        #expect(DashboardSearch("user:42") == .user("42") && DashboardSearch("token:abc") == .token("abc"))
        #expect(DashboardSearch("id:x") == nil && DashboardSearch("  ") == nil && DashboardSearch("=x") == .user("=x"))
    }

    /// actions: the fields of a form name the same action again; refused without what they need; only a row's
    /// cancel is not a fleet operation
    @Test("actions: a form's fields name the same action again; refused without what they need; only a row's cancel is not fleet")
    func actionFields() {
        let all: [DashboardAction] = [.cancelRow(9), .cancelLane("a&b"), .pauseLane("x"), .resumeLane("x"), .liftHold(credential: "c", environment: "fcm")]
        for a in all {
            #expect(DashboardAction(fields: Dictionary(uniqueKeysWithValues: a.queryItems)) == a)
        }
        #expect(all.filter { !$0.operatesFleet } == [.cancelRow(9)])
        #expect(DashboardAction(fields: ["action": "cancel", "id": "-1"]) == nil)
        #expect(DashboardAction(fields: ["action": "cancel-lane"]) == nil)
        #expect(DashboardAction(fields: ["action": "drop-table"]) == nil)
        let link = Self.page.confirmLink(.cancelLane("a&b c")).rendered
        #expect(link.contains("href=\"/dashboard/confirm?action=cancel-lane&amp;lane=a%26b%20c\""), "\(link)")
    }

    @Test("the confirmation page posts the action's fields and the session's CSRF token, escaped")
    func confirmation() {
        let html = Self.page.confirm(.pauseLane("promo")).rendered
        #expect(html.contains("<form method=\"post\" action=\"/dashboard/actions\">"))
        #expect(html.contains("<input type=\"hidden\" name=\"action\" value=\"pause-lane\">"))
        #expect(html.contains("<input type=\"hidden\" name=\"lane\" value=\"promo\">"))
        #expect(html.contains("<input type=\"hidden\" name=\"csrf_token\" value=\"tok&quot;en\">"))
    }

    @Test("the overview: a count per status, actions only for keys allowed them, the chart's three lines with a point per minute")
    func overview() {
        var status = Self.status(hostile: "x")
        status.counts = Dictionary(uniqueKeysWithValues: QueueStatus.statuses.enumerated().map { ($1, $0 * 10) })
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let minutes = (0..<60).map { MinuteSeries.Minute(start: start + Double($0 * 60), sent: $0, failed: $0 % 7, invalidated: $0 % 3) }
        let html = Self.page.overview(status, series: MinuteSeries(minutes: minutes)).rendered
        for (i, s) in QueueStatus.statuses.enumerated() { #expect(html.contains("id=\"count-\(s)\">\(i * 10)<")) }
        #expect(html.contains("id=\"hour-sent\">1770<") && html.contains("data-refresh=\"5\""))
        #expect(html.contains(">00:00<") && html.contains(">00:59 UTC<"), "the first and last minute on the axis")
        for line in ["sent", "failed", "invalidated"] {
            let points = html.components(separatedBy: "<polyline class=\"\(line)\"")[1].components(separatedBy: "points=\"")[1].prefix { $0 != "\"" }
            #expect(points.split(separator: " ").count == 60)
        }
        #expect(html.contains(">Pause<") && html.contains(">Lift hold<") && html.contains(">Cancel waiting rows<"))
        let viewer = DashboardPage(layout: Self.page.layout, canCancel: false, canOperate: false).overview(status, series: MinuteSeries(minutes: minutes))
        #expect(!viewer.rendered.contains("/dashboard/confirm"), "a read key sees no action")
        #expect(MinuteChart.niceCeiling(0) == 1 && MinuteChart.niceCeiling(7) == 10 && MinuteChart.niceCeiling(11) == 20 && MinuteChart.niceCeiling(120) == 200 && MinuteChart.niceCeiling(500) == 500)
    }
}
