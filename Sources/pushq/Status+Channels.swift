import Foundation
import PushStore

extension Status {
    /// Broadcast channels: counts per status, each channel that is not deleted (work or trouble
    /// first), and what the nightly reconciliation found at Apple.
    func printChannels(_ c: ChannelsStatus) {
        let counts = ChannelsStatus.statuses.map { "\($0) \(c.counts[$0, default: 0])" }.joined(separator: ", ")
        print("broadcast channels: " + counts)
        for ch in c.channels {
            let environment = ch.environment ?? "default environment"
            let id = ch.apnsChannelID.map { "id \($0)" } ?? "no id yet"
            var line = "  " + pad(ch.name, 24) + pad(ch.status, 10) + pad("\(ch.credential) (\(environment))", 28) + id
            line += ", storage \(ch.messageStoragePolicy), \(ch.waitingRows) broadcasts waiting"
            if let reason = ch.lastReason {
                line += ", last \(ch.lastStatus.map(String.init) ?? "no answer") \(reason) after \(ch.attempts) attempt(s)"
            }
            print(line)
        }
        if c.channels.count >= ChannelsStatus.listLimit { print("  … (the first \(ChannelsStatus.listLimit))") }
        print("channels at Apple unknown to pushq.channels" + (c.reconciliations.isEmpty ? ": not checked yet" : ""))
        for r in c.reconciliations {
            let when = r.checkedAt.map { "checked \(Int(-$0.timeIntervalSinceNow)) s ago" } ?? "being checked"
            let failed = r.lastReason.map { ", last check failed: \($0)" } ?? ""
            print("  \(r.credential) (\(r.environment)) \(r.topic): \(r.unknownIDs.count) of \(r.listed) listed, \(when)\(failed)"
                  + (r.unknownIDs.isEmpty ? "" : " — " + r.unknownIDs.prefix(10).joined(separator: " ")))
        }
    }
}
