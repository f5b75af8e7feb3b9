@testable import PushServe
import PushStore
import Testing
import PGClient

/// What the API checks itself before the table does: a time's form.
@Suite("API: request fields")
struct RequestFieldsTests {
    @Test("RFC 3339 times with their offset are accepted, each field in range; anything else is refused")
    func times() {
        for good in ["2026-03-01T09:30:00Z", "2026-03-01t09:30:00z", "2026-03-01 09:30:00+01:00", "2026-12-31T23:59:60.123456789-15:59",
                     "0001-01-01T00:00:00Z"] {
            #expect(RequestFields.isRFC3339(good), "\(good)")
        }
        for bad in ["2026-03-01T09:30:00", "2026-03-01", "2026-13-01T09:30:00Z", "2026-00-01T09:30:00Z", "2026-03-32T09:30:00Z",
                    "2026-03-01T24:00:00Z", "2026-03-01T09:60:00Z", "2026-03-01T09:30:61Z", "2026-03-01T09:30:00.Z",
                    "2026-03-01T09:30:00.1234567890Z", "2026-03-01T09:30:00+16:00", "2026-03-01T09:30:00+0100", "infinity",
                    "2026-03-01T09:30:00Z ", "+2026-03-01T09:30:00Z", "2026-03-01T09:30:00+01:00:00"] {
            #expect(!RequestFields.isRFC3339(bad), "\(bad)")
        }
    }

    @Test("the notification's fields are exactly the columns producers write; the device's the registry's")
    func fields() {
        #expect(Set(RequestFields.notification.kinds.keys) == Set(NotificationInsert.writableColumns.map(\.name)))
        // A PushSubscription's endpoint, keys and expirationTime stand for device_token (provider webpush) and webpush_keys.
        #expect(Set(RequestFields.device.kinds.keys).union(["webpush_keys"])
                == Set(DeviceRegistration.writableColumns).union(["endpoint", "keys", "expirationTime"]))
        #expect(Set(RequestFields.fanOut.kinds.keys) == Set(PGConnection.enqueueForUserArguments))
    }
}
