import Foundation
import PushCore

/// The fields a JSON request object may have and the JSON type each takes; turns one object into
/// column values in PostgreSQL's text form (nil for a JSON `null`: SQL NULL). Only the JSON type
/// and the form of times are checked here; every other rule is the table's (a refused row
/// answers with the constraint's ``ConstraintExplanation``).
struct RequestFields: Sendable {
    enum Kind: Sendable {
        /// A JSON string, without U+0000 (PostgreSQL text cannot hold it).
        case text
        /// A JSON integer within `range`.
        case integer(ClosedRange<Int>)
        /// An RFC 3339 time with its offset: `2026-03-01T09:30:00Z`, `2026-03-01T10:30:00.5+01:00`.
        case time
        /// A UUID string.
        case uuid
        /// A local date and time without an offset (`timestamp without time zone`):
        /// `2026-12-01T09:00:00`, `2026-12-01 09:00`; read in each device's `time_zone`.
        case localTime
        /// Any JSON value, kept byte for byte.
        case json
    }

    let kinds: [String: Kind]
    /// Fields that must be there (and not null).
    let required: Set<String>

    /// The columns of the object at `bytes[range]`.
    ///
    /// - Parameter index: the object's index in a batch, for the error.
    /// - Throws: ``APIError`` 400 naming the field and what it must be.
    func values(_ bytes: [UInt8], _ range: Range<Int>, index: Int? = nil) throws(APIError) -> [String: String?] {
        guard case .object(let members)? = JSONValue.split(bytes, in: range, validateUTF8: false) else {
            throw APIError(.badRequest, code: "invalid_body", message: "\(index.map { "notification \($0): " } ?? "")expected a JSON object",
                           index: index)
        }
        var values: [String: String?] = [:]
        for (key, valueRange) in members {
            guard let kind = kinds[key] else {
                throw APIError.invalidField(key, "not a field of this request (fields: \(kinds.keys.sorted().joined(separator: ", ")))", index: index)
            }
            guard values[key] == nil else { throw APIError.invalidField(key, "given twice", index: index) }
            values[key] = try Self.text(bytes, valueRange, kind, field: key, index: index)
        }
        for field in required.sorted() where (values[field] ?? nil) == nil {
            throw APIError.invalidField(field, "required", index: index)
        }
        return values
    }

    private static func text(_ bytes: [UInt8], _ range: Range<Int>, _ kind: Kind, field: String, index: Int?) throws(APIError) -> String? {
        if case .json = kind { return String(decoding: bytes[range], as: UTF8.self) }
        guard let value = JSONValue.parse(bytes, in: range) else { throw APIError.invalidField(field, "not JSON", index: index) }
        if value == .null { return nil }
        switch kind {
        case .json:
            return nil
        case .text:
            guard let s = value.stringValue else { throw APIError.invalidField(field, "a string", index: index) }
            guard !s.unicodeScalars.contains("\u{0}") else { throw APIError.invalidField(field, "may not contain U+0000", index: index) }
            return s
        case .integer(let allowed):
            guard let n = value.int64Value, allowed.contains(Int(n)) else {
                throw APIError.invalidField(field, "a whole number from \(allowed.lowerBound) to \(allowed.upperBound)", index: index)
            }
            return String(n)
        case .time:
            guard let s = value.stringValue, Self.isRFC3339(s) else {
                throw APIError.invalidField(field, "an RFC 3339 time with its offset, e.g. 2026-03-01T09:30:00Z", index: index)
            }
            return s
        case .uuid:
            guard let s = value.stringValue, UUID(uuidString: s) != nil else { throw APIError.invalidField(field, "a UUID", index: index) }
            return s
        case .localTime:
            guard let s = value.stringValue, Self.isLocalTime(s) else {
                throw APIError.invalidField(field, "a local time without an offset, e.g. 2026-12-01T09:00:00 (read in each device's time_zone)",
                                            index: index)
            }
            return s
        }
    }

    /// The number written with `count` ASCII digits at `at` of `f`, nil if any is not a digit.
    private static func number(_ f: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at + count <= f.count else { return nil }
        var n = 0
        for b in f[at..<(at + count)] {
            guard (48...57).contains(b) else { return nil }
            n = n * 10 + Int(b - 48)
        }
        return n
    }

    /// Whether `f` starts with `YYYY-MM-DDTHH:MM` (`T`, `t` or a space between), each field in
    /// its range (a day past its month's end is left to PostgreSQL).
    private static func startsWithDateAndMinute(_ f: [UInt8]) -> Bool {
        guard f.count >= 16, f[4] == 45, f[7] == 45, [84, 116, 32].contains(f[10]), f[13] == 58, number(f, 0, 4) != nil,
              let month = number(f, 5, 2), (1...12).contains(month), let day = number(f, 8, 2), (1...31).contains(day),
              let hour = number(f, 11, 2), hour <= 23, let minute = number(f, 14, 2), minute <= 59 else { return false }
        return true
    }

    /// `2026-12-01T09:00`, `2026-12-01 09:00:00.5`: a date and a time of day without an offset,
    /// each field in its range (a day past its month's end is left to PostgreSQL).
    static func isLocalTime(_ text: String) -> Bool {
        let f = Array(text.utf8)
        guard startsWithDateAndMinute(f) else { return false }
        if f.count == 16 { return true }
        guard f.count >= 19, f[16] == 58, let second = number(f, 17, 2), second <= 59 else { return false }
        if f.count == 19 { return true }
        guard f[19] == 46, (21...28).contains(f.count) else { return false }
        return f[20...].allSatisfy { (48...57).contains($0) }
    }

    /// `2026-03-01T09:30:00Z`, `2026-03-01 10:30:00.5+01:00`: each field in its range (a day past
    /// its month's end is left to PostgreSQL), an offset of at most 15:59.
    static func isRFC3339(_ text: String) -> Bool {
        let f = Array(text.utf8)
        guard f.count >= 20, startsWithDateAndMinute(f), f[16] == 58, let second = number(f, 17, 2), second <= 60 else { return false }
        var i = 19
        if f[i] == 46 {
            let start = i + 1
            i = start
            while i < f.count, (48...57).contains(f[i]) { i += 1 }
            guard (1...9).contains(i - start) else { return false }
        }
        guard i < f.count else { return false }
        if f[i] == 90 || f[i] == 122 { return i + 1 == f.count }
        guard f[i] == 43 || f[i] == 45, i + 6 == f.count, f[i + 3] == 58,
              let h = number(f, i + 1, 2), h <= 15, let m = number(f, i + 4, 2), m <= 59 else { return false }
        return true
    }
}

extension RequestFields {
    /// `POST /api/v1/notifications`: the columns producers write.
    static let notification = RequestFields(kinds: [
        "provider": .text, "device_token": .text, "channel": .text, "payload": .json, "push_type": .text, "topic": .text,
        "priority": .integer(-32_768...32_767), "expires_at": .time, "collapse_id": .text, "apns_id": .uuid, "environment": .text,
        "credential": .text, "scheduled_at": .time, "max_attempts": .integer(-32_768...32_767), "metadata": .json, "lane": .text,
        "dedupe_key": .text, "notify_channel": .text, "time_zone": .text, "user_ref": .text, "webpush_keys": .json,
        "tenant": .text,
    ], required: ["payload"])

    /// `POST /api/v1/users/{user_ref}/notifications`: the arguments of `pushq.enqueue_for_user`.
    static let fanOut = RequestFields(kinds: [
        "payload": .json, "fcm_payload": .json, "topic": .text, "push_type": .text, "priority": .integer(-2_147_483_648...2_147_483_647),
        "expires_at": .time, "collapse_id": .text, "credential": .text, "scheduled_at": .time,
        "max_attempts": .integer(-2_147_483_648...2_147_483_647), "metadata": .json, "lane": .text, "dedupe_key": .text,
        "notify_channel": .text, "local_time": .localTime, "webpush_payload": .json, "tenant": .text,
    ], required: [])

    /// `PUT /api/v1/devices`: a registration's columns, or a browser's `PushSubscription` as
    /// `toJSON()` gives it (`endpoint`, `expirationTime`, `keys`) with them (``APIRoutes/webPushSubscription(_:)``).
    static let device = RequestFields(kinds: [
        "device_token": .text, "provider": .text, "environment": .text, "user_ref": .text, "topic": .text, "kind": .text,
        "activity_id": .text, "installation_id": .text, "time_zone": .text,
        "endpoint": .text, "keys": .json, "expirationTime": .json,
    ], required: [])

    /// `DELETE /api/v1/devices`: which registrations.
    static let deviceKey = RequestFields(kinds: ["device_token": .text, "provider": .text, "environment": .text], required: ["device_token"])
}
