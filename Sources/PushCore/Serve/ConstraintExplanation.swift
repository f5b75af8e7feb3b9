/// What a named constraint of pushq's tables means, for the API's `400` answers: the field it
/// is about and its rule in words. The database decides (the constraint refuses the row); this
/// table only explains, so a rule is written once, in the migration, and a test checks that
/// every named check of `pushq.notifications`, `pushq.devices` and `pushq.api_keys` has a line
/// here and that every line names one (docs/api.md lists them).
public struct ConstraintExplanation: Sendable, Hashable {
    /// The request's field the rule is about (`device_token`, `payload`...).
    public var field: String
    /// The rule, in one sentence.
    public var rule: String

    /// The explanation of `constraint`, nil for a name this table does not know.
    public static func of(_ constraint: String) -> ConstraintExplanation? {
        table[constraint].map { ConstraintExplanation(field: $0.0, rule: $0.1) }
    }

    /// Every constraint explained, by name.
    public static var all: [String: ConstraintExplanation] {
        table.mapValues { ConstraintExplanation(field: $0.0, rule: $0.1) }
    }

    // One line per constraint: (field, rule). Sorted by table, then name.
    private static let table: [String: (String, String)] = [
        "notifications_background_priority": ("priority", "a background push may not have priority 10"),
        "notifications_broadcast_payload_size": ("payload", "a broadcast's payload is at most 5120 bytes"),
        "notifications_broadcast_push_type": ("push_type", "a broadcast (channel) is an APNs row with push_type liveactivity"),
        "notifications_channel_endpoint": ("channel", "a broadcast may not name another credential or environment than its channel's"),
        "notifications_channel_known": ("channel", "the channel must be a row of pushq.channels"),
        "notifications_collapse_id_length": ("collapse_id", "at most 64 bytes"),
        "notifications_collapse_id_printable": ("collapse_id", "no control characters"),
        "notifications_credential_printable": ("credential", "no control characters"),
        "notifications_dedupe_key_length": ("dedupe_key", "1 to 200 characters"),
        "notifications_device_token_hex": ("device_token", "an APNs token is hexadecimal digits"),
        "notifications_device_token_length": ("device_token", "an APNs token is 64 to 200 hexadecimal digits, an even number"),
        "notifications_environment_known": ("environment", "production or development"),
        "notifications_expires_at_finite": ("expires_at", "a finite time (leave it out for no expiry)"),
        "notifications_fcm_no_apns_columns": ("provider",
            "an FCM row leaves topic, priority, collapse_id and environment out and push_type alert"),
        "notifications_fcm_payload_target": ("payload", "an FCM payload names no token, topic or condition at its top level: pushq adds the token"),
        "notifications_fcm_token_charset": ("device_token", "an FCM token is made of A-Z a-z 0-9 - _ :"),
        "notifications_fcm_token_length": ("device_token", "an FCM token is 1 to 4096 characters"),
        "notifications_lane_name": ("lane", "1 to 64 of A-Z a-z 0-9 _ . : -"),
        "notifications_liveactivity_content_state": ("payload", "a liveactivity start or update has an aps.content-state object"),
        "notifications_liveactivity_event": ("payload", "a liveactivity payload has aps.event start, update or end and a numeric aps.timestamp"),
        "notifications_liveactivity_start": ("payload", "a liveactivity start has aps.attributes-type (a string), aps.attributes (an object) and aps.alert"),
        "notifications_max_attempts_positive": ("max_attempts", "at least 1"),
        "notifications_metadata_size": ("metadata", "at most 65536 bytes as text"),
        "notifications_notify_channel_name": ("notify_channel", "a lower-case name LISTEN hears as written: ^[a-z_][a-z0-9_]{0,62}$"),
        "notifications_notify_channel_reserved": ("notify_channel", "not starting with pushq_, a prefix reserved for the channels of pushq's own workers"),
        "notifications_payload_object": ("payload", "a JSON object"),
        "notifications_payload_size": ("payload", "at most 4096 bytes (5120 for an APNs voip push)"),
        "notifications_priority_valid": ("priority", "10, 5 or 1"),
        "notifications_provider_known": ("provider", "apns, fcm or webpush"),
        "notifications_push_type_known": ("push_type",
            "one of alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls"),
        "notifications_scheduled_at_finite": ("scheduled_at", "a finite time"),
        "notifications_status_known": ("status", "queued, sending, retrying, sent, failed, expired or cancelled"),
        "notifications_target": ("device_token", "a device_token or a channel, not both and not neither"),
        "notifications_topic_shape": ("topic", "1 to 255 of A-Z a-z 0-9 . - _"),
        "notifications_webpush_endpoint": ("device_token",
            "a Web Push endpoint is https://host[:port]/path, without userinfo or fragment, at most 2048 visible ASCII bytes"),
        "notifications_webpush_keys": ("webpush_keys",
            "a Web Push row has the subscription's keys: p256dh the base64url of a 65-byte point starting 0x04, auth of 16 bytes"),
        "notifications_webpush_keys_provider": ("webpush_keys", "only a Web Push row has webpush_keys"),
        "notifications_webpush_no_apns_columns": ("provider", "a Web Push row leaves topic and environment out and push_type alert"),
        "notifications_webpush_payload_size": ("payload", "a Web Push payload is at most 3993 bytes (RFC 8291)"),
        "notifications_webpush_topic": ("collapse_id", "a Web Push Topic is 1 to 32 of A-Z a-z 0-9 - _"),
        "notifications_time_zone_known": ("time_zone", "an IANA time zone name as pg_timezone_names lists it, e.g. Europe/Paris (pushq.time_zones)"),
        "notifications_tenant_shape": ("tenant", "1 to 64 of A-Z a-z 0-9 _ . : - (named like a lane), or null"),
        "enqueue_for_user_dedupe_key_length": ("dedupe_key", "1 to 160 characters for a user's fan-out (each row's key adds up to 40)"),
        "enqueue_for_user_local_time": ("local_time", "a finite local time, not given together with scheduled_at"),

        "devices_activity_id_kind": ("activity_id", "a live_activity token has an activity_id, other kinds none"),
        "devices_activity_id_shape": ("activity_id", "1 to 200 characters, no control characters"),
        "devices_device_token_hex": ("device_token", "an APNs token is hexadecimal digits"),
        "devices_device_token_length": ("device_token", "an APNs token is 64 to 200 hexadecimal digits, an even number"),
        "devices_environment_known": ("environment", "production or development"),
        "devices_fcm_environment_default": ("environment", "an FCM device has no environment (production)"),
        "devices_fcm_token_charset": ("device_token", "an FCM token is made of A-Z a-z 0-9 - _ :"),
        "devices_fcm_token_length": ("device_token", "an FCM token is 1 to 4096 characters"),
        "devices_installation_id_shape": ("installation_id", "1 to 200 characters, no control characters"),
        "devices_invalid_reason_known": ("invalid_reason", "a reason APNs or FCM gives, NotFound or Gone (Web Push), or Replaced, ActivityEnded, AgeLimit"),
        "devices_kind_apns": ("kind", "push_to_start and live_activity tokens are APNs tokens"),
        "devices_kind_known": ("kind", "device, push_to_start or live_activity"),
        "devices_provider_known": ("provider", "apns, fcm or webpush"),
        "devices_time_zone_known": ("time_zone", "an IANA time zone name as pg_timezone_names lists it, e.g. Europe/Paris (pushq.time_zones)"),
        "devices_token_environment_key": ("device_token", "the token is registered in this environment for the other provider"),
        "devices_webpush_endpoint": ("endpoint",
            "a Web Push endpoint is https://host[:port]/path, without userinfo or fragment, at most 2048 visible ASCII bytes"),
        "devices_webpush_environment_default": ("environment", "a Web Push subscription has no environment (production)"),
        "devices_webpush_keys": ("keys", "a subscription's keys: p256dh the base64url of a 65-byte point starting 0x04, auth of 16 bytes"),
        "devices_webpush_keys_provider": ("keys", "only a Web Push subscription has keys"),

        "api_keys_name_shape": ("name", "1 to 64 of A-Z a-z 0-9 _ . -"),
        "api_keys_name_key": ("name", "a key of that name exists (revoked keys keep their names)"),
        "api_keys_scope_known": ("scope", "read, enqueue, devices or admin"),
        "api_keys_key_hash_key": ("key", "a key with this hash exists: make another"),
        "api_keys_key_hash_shape": ("key", "the key's SHA-256, 64 lower-case hexadecimal digits"),
    ]
}
