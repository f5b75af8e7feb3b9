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

extension StatusJSON {
    /// `channels` of `pushq status --json`.
    struct Channels: Encodable {
        struct Channel: Encodable {
            var name: String; var status: String; var credential: String; var environment: Nullable<String>
            var apns_channel_id: Nullable<String>; var message_storage_policy: Int; var attempts: Int
            var last_status: Nullable<Int>; var last_reason: Nullable<String>; var waiting_rows: Int
        }
        struct Reconciliation: Encodable {
            var credential: String; var environment: String; var bundle_id: String; var checked_seconds_ago: Nullable<Int>
            var listed: Int; var unknown_ids: [String]; var last_reason: Nullable<String>
        }
        var counts: [String: Int]
        var list: [Channel]
        var unknown_at_apple: [Reconciliation]

        init(_ c: ChannelsStatus) {
            counts = c.counts
            list = c.channels.map {
                Channel(name: $0.name, status: $0.status, credential: $0.credential, environment: Nullable(value: $0.environment),
                        apns_channel_id: Nullable(value: $0.apnsChannelID), message_storage_policy: $0.messageStoragePolicy,
                        attempts: $0.attempts, last_status: Nullable(value: $0.lastStatus), last_reason: Nullable(value: $0.lastReason),
                        waiting_rows: $0.waitingRows)
            }
            unknown_at_apple = c.reconciliations.map {
                Reconciliation(credential: $0.credential, environment: $0.environment, bundle_id: $0.topic,
                               checked_seconds_ago: Nullable(value: $0.checkedAt.map { Int(-$0.timeIntervalSinceNow) }),
                               listed: $0.listed, unknown_ids: $0.unknownIDs, last_reason: Nullable(value: $0.lastReason))
            }
        }
    }
}
