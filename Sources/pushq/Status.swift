import ArgumentParser
import Foundation
import PushCore
import PushServe
import PushStore
import PGClient

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the queue: counts per status and per provider, oldest waiting row, lanes, recent failures, invalid tokens, paused credentials, endpoints down, Web Push holds per origin, live workers.",
        discussion: """
            Reads indexes only, never the whole table: rows that are not final are counted exactly, \
            final rows exactly up to 100000 and estimated above that (shown with ~). \
            --json prints one JSON object for scripts.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "How far back 'recent' failure reasons go, in minutes.") var minutes = 60
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func run() async throws {
        let settings = database.settings()
        let logger = try settings.logger(label: "pushq.status")
        let c = try await PGConnection.connect(try settings.databaseURL(), logger: logger)
        let status = try await c.closing { try await $0.queueStatus(failureMinutes: minutes) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(StatusJSON(status, minutes: minutes)), as: UTF8.self))
        } else {
            printText(status)
        }
    }

    private func printText(_ s: QueueStatus) {
        print("notifications by status" + (s.finalCountsExact ? "" : " (~ estimated)"))
        for name in QueueStatus.statuses {
            let estimated = !s.finalCountsExact && !["queued", "sending", "retrying"].contains(name)
            print("  " + pad(name, 10) + (estimated ? "~" : "") + "\(s.counts[name, default: 0])")
        }
        printProviders(s)
        print("oldest due row waiting: " + (s.oldestDueSeconds.map { "\($0) s" } ?? "none waiting"))
        printLanes(s.lanes)
        if !s.holders.isEmpty {
            print("rows held by workers")
            for h in s.holders {
                print("  " + pad(h.worker, 30) + "\(h.rows)" + (h.lapsed == 0 ? "" : " (\(h.lapsed) with lapsed lease)"))
            }
        }
        print("failure reasons, last \(minutes) min" + (s.reasons.isEmpty ? ": none" : ""))
        for r in s.reasons { print("  " + pad(r.status, 10) + pad(r.reason, 28) + "\(r.rows)") }
        print("invalid tokens" + (s.invalidTokens.isEmpty ? ": none" : ""))
        for t in s.invalidTokens { print("  " + pad(t.reason, 16) + "\(t.tokens)") }
        let pauses = s.otherHolds.filter { $0.held.kind != .outage }
        let outages = s.otherHolds.filter { $0.held.kind == .outage }
        print("paused credentials" + (pauses.isEmpty ? ": none" : ""))
        for h in pauses { print("  " + describe(h)) }
        print("endpoints down" + (outages.isEmpty ? ": none" : ""))
        for h in outages { print("  " + describe(h)) }
        let webPush = s.webPushHolds
        print("Web Push holds (per origin)" + (webPush.isEmpty ? ": none" : ""))
        for h in webPush { print("  " + describeWebPush(h)) }
        print("live workers" + (s.workers.isEmpty ? ": none" : ""))
        for w in s.workers {
            // APNs credentials (provider nil: registered by a worker before FCM) with their topic,
            // then each other provider's named by its service: "default (FCM)", "default (Web Push)".
            let isAPNs = { (c: ServedCredential) in c.provider == nil || c.provider == Provider.apns.rawValue }
            let apns = w.credentials.filter(isAPNs)
            let others = w.credentials.filter { !isAPNs($0) }
            let served = apns.map { c in c.name + (c.topic.map { " (\($0))" } ?? "") }
                + others.map { c in c.name + " (\(c.provider.flatMap(Provider.init(rawValue:))?.serviceName ?? c.provider ?? ""))" }
            print("  \(w.id)  pushq \(w.version), up \(Int(-w.startedAt.timeIntervalSinceNow)) s, beat \(Int(w.heartbeatAge)) s ago, default environment \(apns.first?.environment ?? "none"), credentials: \(served.joined(separator: ", "))")
        }
        print("waiting for a credential no live worker serves" + (s.rowsWithoutWorker.isEmpty ? ": none" : ""))
        for o in s.rowsWithoutWorker {
            print("  " + pad(o.credential, 16) + "\(o.rows) (they expire at their expires_at; start a worker with this credential)")
        }
        printChannels(s.channels)
    }

    /// One line per provider that has rows: its rows by status (`~` before an estimate).
    private func printProviders(_ s: QueueStatus) {
        guard !s.providers.isEmpty else { return }
        print("by provider")
        for p in s.providers {
            let figures = QueueStatus.statuses.map { name in
                let estimated = !s.finalCountsExact && !["queued", "sending", "retrying"].contains(name)
                return "\(name) " + (estimated ? "~" : "") + "\(p.counts[name, default: 0])"
            }
            print("  " + pad(p.provider.serviceName, 10) + figures.joined(separator: "  "))
        }
    }

    /// One line per lane: rank, cap, pause, due rows, oldest due age, send rate.
    private func printLanes(_ lanes: [LaneStatus]) {
        print("lanes (due rows, oldest due, sent per second over the last \(QueueStatus.sendRateSeconds) s)")
        for l in lanes {
            let g = l.gauges
            let cap = g.maxPerSecond.map { "cap \(Self.figure($0))/s" } ?? "no cap"
            let due = g.dueRows >= PGConnection.dueRowsCountLimit ? "\(g.dueRows)+" : "\(g.dueRows)"
            let setting: String
            if g.configured {
                let rank = pad("rank \(g.rank)", 10)
                setting = rank + pad(cap, 16) + (g.paused ? "PAUSED  " : "        ")
            } else {
                setting = pad("no row in pushq.lanes: like default", 34)
            }
            let oldest = pad("oldest \(Int(g.oldestDueAgeSeconds.rounded())) s", 16)
            let figures: String = pad("due \(due)", 14) + oldest + Self.figure(l.sentPerSecond) + "/s"
            // Rows waiting for the lane's quiet hours to end where their recipient is: not due.
            let quiet = g.quietHours.map { "  quiet hours \($0): \(g.quietRows) waiting" } ?? (g.quietRows > 0 ? "  \(g.quietRows) waiting for quiet hours" : "")
            // Rows waiting until their recipient's frequency cap has room again: not due either.
            let capped = g.recipientCap.map { "  recipient cap \($0): \(g.cappedRows) waiting" }
                ?? (g.cappedRows > 0 ? "  \(g.cappedRows) waiting for a recipient cap" : "")
            print("  " + pad(g.name, 16) + setting + figures + quiet + capped)
        }
    }

    /// A rate or cap: whole above 10, one decimal below.
    static func figure(_ x: Double) -> String {
        x >= 10 ? String(Int(x.rounded())) : String((x * 10).rounded() / 10)
    }

    private func describe(_ h: HoldReport) -> String {
        let left = max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up)))
        let probe = h.held.probeDue ? "probe due" : "next probe in \(left) s"
        return "\(h.held.endpoint.credential) (\(h.held.endpoint.channel)): \(h.held.reason), \(probe) — \(h.message)"
    }

    /// A Web Push hold: its origin (where the push service is) first, then as the others.
    private func describeWebPush(_ h: HoldReport) -> String {
        let left = max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up)))
        let probe = h.held.probeDue ? "probe due" : "next probe in \(left) s"
        let origin = h.held.endpoint.origin?.description ?? "every origin"
        return "Web Push hold: \(origin) — \(h.held.reason) (\(h.held.kind.rawValue), credential \(h.held.endpoint.credential)), \(probe) — \(h.message)"
    }

    func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}
