import PushCore
import PGClient

/// Which rows a worker may claim by credential: APNs rows of its APNs credentials, FCM rows of
/// its FCM credentials (`"default"` names the rows whose `credential` is NULL, per provider).
/// A probe (`only`) claims its one endpoint's credential of its provider.
///
/// Four parameters, in this order: APNs names, whether APNs `default` is one, FCM names,
/// whether FCM `default` is one. Bound by value, a provider with no names folds to false at
/// plan time and the claim walks notifications_due as before.
struct ClaimRouting {
    var apns: [String]
    var fcm: [String]

    init(apns: [String], fcm: [String], only: Endpoint?) {
        if let only {
            self.apns = only.provider == .apns ? [only.credential] : []
            self.fcm = only.provider == .fcm ? [only.credential] : []
        } else {
            self.apns = apns
            self.fcm = fcm
        }
    }

    /// A worker with the `default` credential claims the rows whose `credential` is NULL and
    /// those that name `'default'` literally (`pushq send --credential default` writes that):
    /// both are the default credential everywhere else too (status, holds, metrics).
    var parameters: [(any PGParameter)?] {
        [apns, apns.contains("default"), fcm, fcm.contains("default")]
    }

    /// The condition over `n`, its parameters numbered from `first`.
    static func sql(from first: Int) -> String {
        """
        AND ((n.provider = 'apns' AND (n.credential = ANY($\(first)::text[]) OR (n.credential IS NULL AND $\(first + 1))))
                    OR (n.provider = 'fcm' AND (n.credential = ANY($\(first + 2)::text[]) OR (n.credential IS NULL AND $\(first + 3)))))
        """
    }
}
