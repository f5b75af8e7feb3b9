import PushCore
import PushStore
import PGClient

/// Holds written as a worker's write-back writes them: the claim reads `pushq.credential_pauses`
/// itself, so a test holds an endpoint by giving it a row there.
public enum Holds {
    /// Holds `endpoints` (a credential pause each, its first probe an hour away).
    public static func add(_ c: PGConnection, _ endpoints: [Endpoint]) async throws {
        try await c.query("""
            INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
            SELECT e.credential, e.environment, 'credential', 'InvalidProviderToken', 'held by a test', now() + interval '1 hour'
              FROM unnest($1::text[], $2::text[]) AS e(credential, environment)
            """, [endpoints.map(\.credential), endpoints.map(\.channel)])
    }

    /// Lifts every hold.
    public static func clear(_ c: PGConnection) async throws {
        try await c.query("DELETE FROM pushq.credential_pauses")
    }
}
