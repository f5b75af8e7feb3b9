import Foundation
import PGClient

/// A row of `pushq.api_keys`, without its hash.
public struct APIKeyRecord: Sendable, Equatable {
    public var id: Int64
    public var name: String
    /// `read`, `enqueue`, `devices` or `admin`.
    public var scope: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?
}

/// Who a request comes from: a key that is not revoked.
public struct APIKeyIdentity: Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var scope: String
}

extension PGConnection {
    /// Stores a new key's hash under `name`.
    ///
    /// - Parameter keyHash: the key's SHA-256, 64 lower-case hex digits (never the key).
    /// - Throws: `PGError` with constraint `api_keys_name_key` when the name is taken,
    ///   `api_keys_name_shape` or `api_keys_scope_known` for a value the table refuses.
    public func createAPIKey(name: String, scope: String, keyHash: String) throws(PGError) -> APIKeyRecord {
        let r = try query("""
            INSERT INTO pushq.api_keys (name, scope, key_hash) VALUES ($1, $2, $3)
            RETURNING id, name, scope, created_at, last_used_at, revoked_at
            """, [name, scope, keyHash])
        return try Self.apiKeys(r)[0]
    }

    /// Every key, revoked ones included, by name.
    public func apiKeys() throws(PGError) -> [APIKeyRecord] {
        try Self.apiKeys(query("SELECT id, name, scope, created_at, last_used_at, revoked_at FROM pushq.api_keys ORDER BY name"))
    }

    /// Revokes the key named `name` and ends its sessions.
    ///
    /// - Returns: the key, or nil when no key has that name; a key revoked already keeps its
    ///   first `revoked_at`.
    public func revokeAPIKey(name: String) throws -> APIKeyRecord? {
        try transaction { c in
            let r = try c.query("""
                UPDATE pushq.api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE name = $1
                RETURNING id, name, scope, created_at, last_used_at, revoked_at
                """, [name])
            guard r.count == 1 else { return nil }
            let key = try Self.apiKeys(r)[0]
            try c.query("DELETE FROM pushq.api_sessions WHERE key_id = $1", [key.id])
            return key
        }
    }

    /// The key whose SHA-256 is `keyHash`, unless revoked; notes its use (at most once a minute).
    /// One statement through `api_keys_key_hash_key`.
    public func authenticateAPIKey(keyHash: String) throws(PGError) -> APIKeyIdentity? {
        try Self.identity(query(Self.authenticateKeySQL, [keyHash]))
    }

    static let authenticateKeySQL = """
        WITH k AS (
            SELECT id, name, scope, last_used_at FROM pushq.api_keys WHERE key_hash = $1 AND revoked_at IS NULL
        ), used AS (
            UPDATE pushq.api_keys a SET last_used_at = now() FROM k
             WHERE a.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute')
        )
        SELECT id, name, scope FROM k
        """

    // MARK: Sessions

    /// Starts a dashboard session for key `keyID`, ending `seconds` from now, and deletes up to
    /// 100 expired sessions (oldest first, through `api_sessions_expires`).
    ///
    /// - Parameter tokenHash: the session token's SHA-256 (hex); the token itself stays in the cookie.
    public func createSession(tokenHash: String, keyID: Int64, seconds: Int) throws(PGError) {
        try query("""
            WITH expired AS (
                SELECT token_hash FROM pushq.api_sessions WHERE expires_at < now() ORDER BY expires_at LIMIT 100
            ), gone AS (
                DELETE FROM pushq.api_sessions s USING expired e WHERE s.token_hash = e.token_hash
            )
            INSERT INTO pushq.api_sessions (token_hash, key_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 second')
            """, [tokenHash, keyID, seconds])
    }

    /// The key of the live session whose token hashes to `tokenHash`: not expired, key not revoked.
    public func sessionIdentity(tokenHash: String) throws(PGError) -> APIKeyIdentity? {
        try Self.identity(query(Self.sessionSQL, [tokenHash]))
    }

    static let sessionSQL = """
        SELECT k.id, k.name, k.scope FROM pushq.api_sessions s JOIN pushq.api_keys k ON k.id = s.key_id
         WHERE s.token_hash = $1 AND s.expires_at > now() AND k.revoked_at IS NULL
        """

    /// Ends the session whose token hashes to `tokenHash` (logout).
    public func endSession(tokenHash: String) throws(PGError) {
        try query("DELETE FROM pushq.api_sessions WHERE token_hash = $1", [tokenHash])
    }

    private static func identity(_ r: PGResult) throws(PGError) -> APIKeyIdentity? {
        guard r.count == 1 else { return nil }
        let row = try r.firstRow()
        return APIKeyIdentity(id: try row.decode(Int64.self, "id"), name: try row.decode(String.self, "name"),
                              scope: try row.decode(String.self, "scope"))
    }

    private static func apiKeys(_ r: PGResult) throws(PGError) -> [APIKeyRecord] {
        var keys: [APIKeyRecord] = []
        for row in r.rows {
            keys.append(APIKeyRecord(id: try row.decode(Int64.self, "id"), name: try row.decode(String.self, "name"),
                                     scope: try row.decode(String.self, "scope"), createdAt: try row.decode(Date.self, "created_at"),
                                     lastUsedAt: try row.decode(Date?.self, "last_used_at"),
                                     revokedAt: try row.decode(Date?.self, "revoked_at")))
        }
        return keys
    }
}
