import PushCore
import PGClient

/// The conditions a claim adds to "due, of these credentials" (``ClaimRouting``): no endpoint
/// held (``heldSQL(environment:)``) or the one endpoint a probe claims, a single row, rows to
/// leave out. Written over `n`, with parameters numbered from `next`. A row's endpoint is its
/// credential and channel: `fcm` for an FCM row, its environment (or the default) for an APNs row,
/// its endpoint's origin for a Web Push row (`WebPushOrigin`'s text: `https://` and the host
/// lower-cased, `:port` unless 443; the row rules refuse a port with leading zeros).
///
/// Filters are written so the planner can estimate them (no expressions over columns but the
/// endpoint's): with a misjudged filter it sorts every waiting row instead of walking
/// notifications_due.
struct ClaimFilter {
    /// Where a statement's text takes the filter (``SQLTemplate``).
    static let marker = "/*FILTER*/"

    var sql = ""
    var parameters: [(any PGParameter)?] = []
    var next: Int
    /// The parameter holding the default environment (`$5`), or nil to bind one when needed.
    var environment: String?
    let defaultEnvironment: APNsEnvironment
    /// A probe, a row or rows left out: a claim to plan for its values (not prepared).
    private(set) var custom = false

    init(next: Int, environment: String?, defaultEnvironment: APNsEnvironment) {
        self.next = next
        self.environment = environment
        self.defaultEnvironment = defaultEnvironment
    }

    mutating func add(only: Endpoint?, row: Int64?, excluding: [Int64]) {
        if let only {
            custom = true
            // ClaimRouting keeps the probe to its provider; FCM has no environment to filter on.
            if only.provider == .apns {
                let environment = environmentParameter()
                add(only.environment.rawValue) { "AND COALESCE(n.environment, \(environment)) = \($0)" }
            }
            // A Web Push probe takes its origin's rows alone (a hold is per origin).
            if only.provider == .webpush, only.origin != nil {
                add(only.channel) { "AND \(Self.webPushOriginSQL) = \($0)" }
            }
        } else {
            sql += (sql.isEmpty ? "" : " ") + Self.heldSQL(environment: environmentParameter())
        }
        if let row { custom = true; add(row) { "AND n.id = \($0)::bigint" } }
        if !excluding.isEmpty { custom = true; add(excluding) { "AND n.id <> ALL (\($0)::bigint[])" } }
    }

    /// Row `n`'s endpoint has no hold (no row in `pushq.credential_pauses`), as the statement's
    /// snapshot sees that table. Read there, not from a list the worker read before: a write-back
    /// that holds an endpoint gives its rows back in the same transaction, so a claim that sees
    /// those rows due again also sees the hold. A list read before the claim could be older than
    /// the rows' give-back, and the claim then sent them again (``CredentialTests``).
    ///
    /// Both sub-selects are uncorrelated, so each runs once per statement: whether any hold
    /// exists (with none, the usual case, a row costs a test of that answer), and the holds
    /// hashed for the `NOT IN`.
    static func heldSQL(environment: String) -> String {
        """
        AND (NOT EXISTS (SELECT 1 FROM pushq.credential_pauses)
             OR (COALESCE(n.credential, 'default'),
                 CASE WHEN n.provider = 'fcm' THEN 'fcm'
                      WHEN n.provider = 'webpush' THEN \(webPushOriginSQL)
                      ELSE COALESCE(n.environment, \(environment)) END)
                NOT IN (SELECT p.credential, p.environment FROM pushq.credential_pauses p))
        """
    }

    /// The origin of Web Push row `n`'s endpoint, as `WebPushOrigin` writes it (the key of its
    /// holds): `https://`, the host lower-cased, `:port` unless 443. Exact for what the row rules
    /// admit (`https://host[:port]/path`, any case, no userinfo, no port with leading zeros).
    static let webPushOriginSQL = "regexp_replace(lower(substring(n.device_token from '^[^/]*//[^/?]*')), ':443$', '')"

    private mutating func environmentParameter() -> String {
        if let environment { return environment }
        let name = "$\(next)"
        parameters.append(defaultEnvironment.rawValue)
        next += 1
        environment = name
        return name
    }

    private mutating func add(_ value: any PGParameter, _ condition: (String) -> String) {
        sql += (sql.isEmpty ? "" : " ") + condition("$\(next)")
        parameters.append(value)
        next += 1
    }
}
