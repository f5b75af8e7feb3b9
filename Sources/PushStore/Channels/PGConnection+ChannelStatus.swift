import Foundation
import PushCore
import PGClient

/// One broadcast channel in `pushq status`.
public struct ChannelReport: Sendable {
    public var name: String
    public var status: String
    /// `credential`, or `"default"`.
    public var credential: String
    /// `environment`, nil for the worker's default.
    public var environment: String?
    public var apnsChannelID: String?
    public var messageStoragePolicy: Int
    public var attempts: Int
    public var lastStatus: Int?
    public var lastReason: String?
    /// Broadcast rows waiting for it (`queued`, `retrying`).
    public var waitingRows: Int
}

/// One (credential, environment, bundle id) of the nightly reconciliation with Apple's `all-channels`.
public struct ReconciliationReport: Sendable {
    public var credential: String
    public var environment: String
    public var topic: String
    /// When the last check ended; nil while the first one runs.
    public var checkedAt: Date?
    /// Channels Apple listed.
    public var listed: Int
    /// Channels Apple listed that no row of `pushq.channels` has (other than `deleted` ones).
    public var unknownIDs: [String]
    /// Why the last check failed, nil when it worked.
    public var lastReason: String?
}

/// Broadcast channels, as `pushq status` shows them.
public struct ChannelsStatus: Sendable {
    /// Channels per status, every status of `pushq.channels` present.
    public var counts: [String: Int]
    /// Channels that are not `deleted`, at most ``listLimit``: those with work or trouble first.
    public var channels: [ChannelReport]
    public var reconciliations: [ReconciliationReport]

    /// The statuses in the order they are shown.
    public static let statuses = ["creating", "active", "deleting", "deleted", "failed"]
    /// Most channels listed one by one.
    public static let listLimit = 100
}

/// A (credential, environment, bundle id) whose channels the nightly reconciliation checks.
public struct ChannelScope: Sendable, Hashable {
    public var credential: String
    public var environment: APNsEnvironment
    /// The bundle id; nil for the credential's (or the worker's) default.
    public var topic: String?

    public init(credential: String, environment: APNsEnvironment, topic: String?) {
        self.credential = credential
        self.environment = environment
        self.topic = topic
    }
}

extension PGConnection {
    /// Broadcast channels: counts per status, the channels that are not `deleted` (with their
    /// waiting rows, through `notifications_channel_created`: each of the channel's rows kept), and
    /// the reconciliations.
    public func channelsStatus() throws(PGError) -> ChannelsStatus {
        var counts = Dictionary(uniqueKeysWithValues: ChannelsStatus.statuses.map { ($0, 0) })
        let c = try query("SELECT status, count(*) AS channels FROM pushq.channels GROUP BY status")
        for row in c.rows { counts[try row.string("status") ?? "", default: 0] += try row.decode(Int?.self, "channels") ?? 0 }
        let rows = try query("""
            SELECT c.name, c.status, COALESCE(c.credential, 'default') AS credential, c.environment, c.apns_channel_id,
                   c.message_storage_policy, c.attempts, c.last_status, c.last_reason,
                   (SELECT count(*) FROM pushq.notifications n WHERE n.channel = c.name AND n.status IN ('queued', 'retrying'))
                       AS waiting_rows
              FROM pushq.channels c
             WHERE c.status <> 'deleted'
             ORDER BY c.status = 'active', c.updated_at DESC, c.name
             LIMIT $1
            """, [ChannelsStatus.listLimit])
        var channels: [ChannelReport] = []
        for row in rows.rows {
            channels.append(ChannelReport(
                name: try row.string("name") ?? "", status: try row.string("status") ?? "",
                credential: try row.string("credential") ?? "default",
                environment: try row.string("environment"), apnsChannelID: try row.string("apns_channel_id"),
                messageStoragePolicy: try row.decode(Int?.self, "message_storage_policy") ?? 1,
                attempts: try row.decode(Int?.self, "attempts") ?? 0,
                lastStatus: try row.decode(Int?.self, "last_status"), lastReason: try row.string("last_reason"),
                waitingRows: try row.decode(Int?.self, "waiting_rows") ?? 0))
        }
        return ChannelsStatus(counts: counts, channels: channels, reconciliations: try reconciliations())
    }

    /// Every row of `pushq.channel_reconciliations`, by credential, environment and bundle id.
    public func reconciliations() throws(PGError) -> [ReconciliationReport] {
        let r = try query("""
            SELECT credential, environment, topic, extract(epoch FROM checked_at)::float8 AS checked_at, listed,
                   array_to_string(unknown_ids, ' ') AS unknown_ids, last_reason
              FROM pushq.channel_reconciliations ORDER BY 1, 2, 3
            """)
        var out: [ReconciliationReport] = []
        for row in r.rows {
            out.append(ReconciliationReport(
                credential: try row.string("credential") ?? "", environment: try row.string("environment") ?? "",
                topic: try row.string("topic") ?? "",
                checkedAt: try row.decode(Double?.self, "checked_at").map { Date(timeIntervalSince1970: $0) },
                listed: try row.decode(Int?.self, "listed") ?? 0, unknownIDs: Self.words(try row.string("unknown_ids")),
                lastReason: try row.string("last_reason")))
        }
        return out
    }

    /// The (credential, environment, bundle id) of every channel of `credentials` that ever
    /// reached Apple (it has an id): what the reconciliation checks.
    public func channelScopes(credentials: [String], defaultEnvironment: APNsEnvironment) throws(PGError) -> [ChannelScope] {
        let r = try query("""
            SELECT DISTINCT COALESCE(credential, 'default') AS credential, COALESCE(environment, $2) AS environment, topic
              FROM pushq.channels
             WHERE apns_channel_id IS NOT NULL AND COALESCE(credential, 'default') = ANY($1::text[])
             ORDER BY 1, 2, 3
            """, [credentials, defaultEnvironment.rawValue])
        var out: [ChannelScope] = []
        for row in r.rows {
            guard let environment = APNsEnvironment(rawValue: try row.string("environment") ?? "") else { continue }
            out.append(ChannelScope(credential: try row.string("credential") ?? "default", environment: environment,
                                    topic: try row.string("topic")))
        }
        return out
    }

    /// Takes the reconciliation of one scope (`topic` the resolved bundle id) when nobody ran it
    /// in the last `everySeconds`: one worker of the fleet gets true, the others false.
    public func takeReconciliation(credential: String, environment: APNsEnvironment, topic: String, workerID: String,
                                   everySeconds: Double) throws(PGError) -> Bool {
        let r = try query("""
            INSERT INTO pushq.channel_reconciliations AS r (credential, environment, topic, started_at, checked_by)
            VALUES ($1, $2, $3, now(), $4)
            ON CONFLICT (credential, environment, topic) DO UPDATE SET started_at = now(), checked_by = $4
             WHERE r.started_at < now() - $5 * interval '1 second'
            RETURNING 1
            """, [credential, environment.rawValue, topic, workerID, everySeconds])
        return r.count == 1
    }

    /// Records a reconciliation: `listed` the ids Apple's `all-channels` gave (nil when the
    /// request failed, `reason` saying why; the previous findings are kept).
    ///
    /// - Returns: the ids Apple has that no row of `pushq.channels` has (other than `deleted` ones).
    @discardableResult
    public func recordReconciliation(credential: String, environment: APNsEnvironment, topic: String,
                                     listed: [String]?, reason: String?) throws(PGError) -> [String] {
        let r = try query("""
            UPDATE pushq.channel_reconciliations r
               SET checked_at = now(),
                   listed = COALESCE(cardinality($4::text[]), r.listed),
                   unknown_ids = CASE WHEN $4::text[] IS NULL THEN r.unknown_ids
                                      ELSE ARRAY(SELECT l.id FROM unnest($4::text[]) l(id)
                                                  WHERE NOT EXISTS (SELECT 1 FROM pushq.channels c
                                                                     WHERE c.apns_channel_id = l.id AND c.status <> 'deleted')
                                                  ORDER BY 1) END,
                   last_reason = $5
             WHERE r.credential = $1 AND r.environment = $2 AND r.topic = $3
            RETURNING array_to_string(r.unknown_ids, ' ') AS unknown_ids
            """, [credential, environment.rawValue, topic, listed, reason])
        return try r.rows.first.map { row throws(PGError) in Self.words(try row.string("unknown_ids")) } ?? []
    }

    /// The ids of `array_to_string(ids, ' ')`: channel ids are base64, without spaces.
    private static func words(_ text: String?) -> [String] {
        (text ?? "").split(separator: " ").map(String.init)
    }
}
