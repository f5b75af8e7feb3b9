import Foundation
import PushStore

extension StatusJSON {
    /// `channels` of `pushq status --json`.
    struct Channels: Encodable, Sendable {
        struct Channel: Encodable, Sendable {
            var name: String; var status: String; var credential: String; var environment: Nullable<String>
            var apns_channel_id: Nullable<String>; var message_storage_policy: Int; var attempts: Int
            var last_status: Nullable<Int>; var last_reason: Nullable<String>; var waiting_rows: Int
        }
        struct Reconciliation: Encodable, Sendable {
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
