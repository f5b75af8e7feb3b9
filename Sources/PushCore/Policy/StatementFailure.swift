/// What a failed database statement says about running it again, decided from its SQLSTATE.
///
/// | SQLSTATE | case | the worker |
/// |---|---|---|
/// | class 22, 23, P0 (`P0001` a `RAISE` in a trigger) | ``deterministic`` | splits the batch or claim until the row is alone and ends it |
/// | `25006` | ``readOnly`` | drops the session and reconnects (a multi-host URL moves to the writable host) |
/// | class 42, 28, 3D, 3F (`42501` permission denied, `42P01` no such table...) | ``configuration`` | logs an error naming the SQLSTATE and the fix, reports itself not live, retries with backoff |
/// | anything else, or none | ``transient`` | retries with backoff |
public enum StatementFailure: Sendable, Hashable {
    /// SQLSTATE class 22 (data exception: a value out of range, an infinite timestamp...), 23
    /// (integrity constraint violation) or P0 (a PL/pgSQL `RAISE`, e.g. from a trigger a DBA
    /// added): the rows make the statement fail, and running it again on them fails again.
    case deterministic
    /// `25006` (read-only SQL transaction): the session is on a standby, or on a server or
    /// database set `default_transaction_read_only`. Running it again on the same session
    /// fails again; a new session may find the primary.
    case readOnly
    /// The database refuses the statement whatever the rows, and only an operator can change
    /// that: class 42 (`42501` insufficient privilege, `42P01` undefined table, `42703`
    /// undefined column...), 28 (invalid authorization), 3D (invalid catalog name) or 3F
    /// (invalid schema name).
    case configuration
    /// Anything else: a lost connection (no SQLSTATE), a serialization failure (40001), a
    /// deadlock (40P01), a server shutting down (57P01), a statement timeout (57014)... Worth
    /// running again after a backoff.
    case transient

    /// Classifies a failure by its SQLSTATE (nil when none came: a lost connection, a client error).
    public init(sqlState: String?) {
        if sqlState == "25006" {
            self = .readOnly
            return
        }
        switch sqlState?.prefix(2) {
        case "22", "23", "P0": self = .deterministic
        case "42", "28", "3D", "3F": self = .configuration
        default: self = .transient
        }
    }

    /// What an operator does about a ``configuration`` or ``readOnly`` failure with this
    /// SQLSTATE, as the end of a log line; nil for the other kinds.
    public static func fix(sqlState: String?) -> String? {
        switch StatementFailure(sqlState: sqlState) {
        case .readOnly:
            return "the session is on a read-only server (a standby, or default_transaction_read_only is on): the worker reconnects; list the primary in PUSHQ_DATABASE_URL (pushq adds target_session_attrs=read-write unless the URL sets it)"
        case .configuration:
            switch sqlState {
            case "42501":
                return "grant the worker's role what it lacks: `pushq migrate --print-grants <role> --for worker` prints every GRANT it needs; run them as the schema's owner, again after each upgrade"
            case let s? where s.hasPrefix("28"):
                return "check the user and password in PUSHQ_DATABASE_URL and the server's pg_hba.conf"
            default:
                return "the schema is missing, altered or older than this worker: run `pushq migrate` against this database, and undo manual changes to the pushq schema"
            }
        case .deterministic, .transient:
            return nil
        }
    }
}
