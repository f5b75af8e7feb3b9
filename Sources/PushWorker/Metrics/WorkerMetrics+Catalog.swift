import PushCore

extension WorkerMetrics {
    /// One metric the worker exports: its Prometheus name, help text and, for histograms, buckets.
    public struct Metric: Sendable {
        public var name: String
        public var help: String
        /// Bucket upper bounds (seconds for durations); empty for counters and gauges.
        public var buckets: [Double] = []
    }

    /// The metrics' definitions.
    enum Catalog {
        static let durationBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

        static let finished = Metric(name: "pushq_notifications_finished_total",
                                     help: "Notifications that reached a final status (outcome sent, failed or expired), by last reason, credential and environment.")
        static let retries = Metric(name: "pushq_retries_total", help: "Attempts that left the row retrying, by kind of retry.")
        static let invalidations = Metric(name: "pushq_token_invalidations_total",
                                          help: "Device tokens recorded invalid in pushq.devices, by the provider's reason.")
        static let requests = Metric(name: "pushq_requests_total",
                                     help: "Answers from the providers by provider, credential, environment and HTTP status (status \"none\": no answer came).")
        static let requestDuration = Metric(name: "pushq_request_duration_seconds",
                                            help: "Time from handing a request to its connection to the provider's answer, by provider.",
                                            buckets: durationBuckets)
        static let openConnections = Metric(name: "pushq_connections_open", help: "HTTP/2 connections to the providers open now, by provider.")
        static let goaways = Metric(name: "pushq_goaways_total",
                                    help: "Connections a provider ended (an HTTP/2 GOAWAY or a dropped connection) that the worker replaced, by provider, credential and environment.")
        static let reopens = Metric(name: "pushq_connection_reopens_total",
                                    help: "Connections the worker closed and replaced (token expiry, 5xx, idle, after a GOAWAY), by provider, credential and environment.")
        static let tokenRefreshes = Metric(name: "pushq_auth_token_refreshes_total",
                                           help: "Bearer tokens a credential obtained, by provider and credential: APNs provider tokens (JWT) signed, FCM OAuth token exchanges started (successful or not).")
        static let inFlight = Metric(name: "pushq_requests_in_flight", help: "Requests sent to a provider and not yet answered, by provider.")
        static let claimBatch = Metric(name: "pushq_claim_batch_rows", help: "Rows taken by one claim statement.",
                                       buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000])
        static let claimDuration = Metric(name: "pushq_claim_duration_seconds", help: "Time of one claim statement.", buckets: durationBuckets)
        static let writeDuration = Metric(name: "pushq_complete_write_duration_seconds",
                                          help: "Time to write back one batch of answers (one transaction).", buckets: durationBuckets)
        static let paused = Metric(name: "pushq_credential_paused",
                                   help: "1 while a credential is paused in an environment (its provider rejected it, or a BadDeviceToken burst).")
        static let down = Metric(name: "pushq_endpoint_down",
                                 help: "1 while a provider cannot be reached, or answers only 5xx, for a credential and environment.")
        static let dueRows = Metric(name: "pushq_queue_due_rows",
                                    help: "Rows queued or retrying whose scheduled_at has come (exported by the one worker holding the queue-gauges lock; saturates at 1000000).")
        static let oldestDueAge = Metric(name: "pushq_queue_oldest_due_age_seconds",
                                         help: "Age of the oldest due row's scheduled_at, 0 when none is due (exported by the one worker holding the queue-gauges lock).")

        static let laneDueRows = Metric(name: "pushq_lane_due_rows",
                                        help: "Rows queued or retrying whose scheduled_at has come, by lane: the lanes of pushq.lanes, the others summed as lane=\"other\" (exported by the one worker holding the queue-gauges lock; saturates at 1000000 per lane).")
        static let laneOldestDueAge = Metric(name: "pushq_lane_oldest_due_age_seconds",
                                             help: "Age of the oldest due row's scheduled_at by lane (lane=\"other\": the oldest of the lanes without a row in pushq.lanes), 0 when none is due (exported by the one worker holding the queue-gauges lock).")
        static let laneQuietRows = Metric(name: "pushq_lane_quiet_rows",
                                          help: "Rows waiting for the end of their lane's quiet hours where their recipient is (not due), by lane as pushq_lane_due_rows (exported by the one worker holding the queue-gauges lock; saturates at 1000000 per lane).")
        static let laneCappedRows = Metric(name: "pushq_lane_capped_rows",
                                           help: "Rows waiting until their recipient's frequency cap has room again (over_cap defer; not due), by lane as pushq_lane_due_rows (exported by the one worker holding the queue-gauges lock; saturates at 1000000 per lane).")
        static let laneSent = Metric(name: "pushq_lane_sent_total",
                                     help: "Notifications this worker sent (final status sent), by lane: the lanes of pushq.lanes, the others as lane=\"other\".")
        static let laneRank = Metric(name: "pushq_lane_rank",
                                     help: "A lane's rank in pushq.lanes: lower goes first (exported by the one worker holding the queue-gauges lock).")
        static let laneMaxPerSecond = Metric(name: "pushq_lane_max_per_second",
                                             help: "A lane's cap in pushq.lanes, sends per second of the whole fleet; 0 when it has none (exported by the one worker holding the queue-gauges lock).")
        static let lanePaused = Metric(name: "pushq_lane_paused",
                                       help: "1 while a lane is paused in pushq.lanes, else 0 (exported by the one worker holding the queue-gauges lock).")
        static let channelRequests = Metric(name: "pushq_channel_requests_total",
                                            help: "Requests to APNs' channel-management API, by operation (create, delete, list) and result (done, gone, failed, retry, held).")
        static let channels = Metric(name: "pushq_channels",
                                     help: "Broadcast channels in pushq.channels, by status (creating, active, deleting, deleted, failed).")
        static let channelsUnknownAtApple = Metric(name: "pushq_channels_unknown_at_apple",
                                                   help: "Channels Apple's all-channels listed at the last nightly reconciliation that no live row of pushq.channels has, by credential and environment.")

        /// The names from before FCM, exported for one more release as copies counting exactly
        /// what they counted (requests of both providers, without a provider label). Each help
        /// text names its replacement.
        enum Deprecated {
            static let requests = Metric(name: "pushq_apns_requests_total",
                                         help: "Deprecated, removed in the next release: use pushq_requests_total. Answers by HTTP status (status \"none\": no answer came), both providers.")
            static let requestDuration = Metric(name: "pushq_apns_request_duration_seconds",
                                                help: "Deprecated, removed in the next release: use pushq_request_duration_seconds. Time from handing a request to its connection to the answer, both providers.",
                                                buckets: durationBuckets)
            static let openConnections = Metric(name: "pushq_apns_connections_open",
                                                help: "Deprecated, removed in the next release: use pushq_connections_open. HTTP/2 connections open now, both providers.")
            static let goaways = Metric(name: "pushq_apns_goaways_total",
                                        help: "Deprecated, removed in the next release: use pushq_goaways_total. Connections a provider ended that the worker replaced, by credential and environment.")
            static let reopens = Metric(name: "pushq_apns_connection_reopens_total",
                                        help: "Deprecated, removed in the next release: use pushq_connection_reopens_total. Connections the worker closed and replaced, by credential and environment.")
            static let inFlight = Metric(name: "pushq_apns_requests_in_flight",
                                         help: "Deprecated, removed in the next release: use pushq_requests_in_flight. Requests sent and not yet answered, both providers.")
            static let apnsTokenRefreshes = Metric(name: "pushq_apns_provider_token_refreshes_total",
                                                   help: "Deprecated, removed in the next release: use pushq_auth_token_refreshes_total{provider=\"apns\"}. Provider tokens (JWT) signed, by credential.")
            static let fcmTokenRefreshes = Metric(name: "pushq_fcm_access_token_refreshes_total",
                                                  help: "Deprecated, removed in the next release: use pushq_auth_token_refreshes_total{provider=\"fcm\"}. OAuth token exchanges started for an FCM credential (successful or not), by credential.")

            /// The deprecated token-refresh counter of `provider`; nil for Web Push, which came
            /// after the names were deprecated.
            static func tokenRefreshes(_ provider: Provider) -> Metric? {
                switch provider {
                case .apns: return apnsTokenRefreshes
                case .fcm: return fcmTokenRefreshes
                case .webpush: return nil
                }
            }

            static let all = [requests, requestDuration, openConnections, goaways, reopens, inFlight, apnsTokenRefreshes, fcmTokenRefreshes]
        }
    }

    /// Every metric the worker exports, by name (deprecated copies included).
    public static let catalog: [String: Metric] = {
        typealias C = Catalog
        return Dictionary(uniqueKeysWithValues: ([
            C.finished, C.retries, C.invalidations, C.requests, C.requestDuration, C.openConnections, C.goaways, C.reopens,
            C.tokenRefreshes, C.inFlight, C.claimBatch, C.claimDuration, C.writeDuration, C.paused, C.down, C.dueRows, C.oldestDueAge,
            C.laneDueRows, C.laneOldestDueAge, C.laneQuietRows, C.laneCappedRows, C.laneSent, C.laneRank, C.laneMaxPerSecond, C.lanePaused,
            C.channelRequests, C.channels, C.channelsUnknownAtApple,
        ] + C.Deprecated.all).map { ($0.name, $0) })
    }()
}
