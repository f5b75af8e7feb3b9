import COpenSSL
import PushCore

/// A Web Push credential's VAPID key (RFC 8292): a P-256 private key in PEM, PKCS#8 or SEC1
/// (`PUSHQ_WEBPUSH_VAPID_KEY_FILE`), which signs the `Authorization: vapid` tokens.
///
/// The key itself is an ``ES256PrivateKey`` (the one P-256 loader and signer, APNs' too); this
/// adds its public half, the `applicationServerKey` a web page passes to
/// `PushManager.subscribe` (and `pushq webpush-key FILE` will print).
public final class VAPIDKey: Sendable {
    let key: ES256PrivateKey
    /// The public key, uncompressed (65 bytes): the header's `k=`.
    public let publicKey: [UInt8]

    /// The base64url (no padding) of ``publicKey``: the `applicationServerKey` for the front end.
    public var applicationServerKey: String { Base64URL.encode(publicKey) }

    /// Parses a PEM P-256 private key (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`).
    ///
    /// - Throws: ``PushTransportError`` `.invalidKey` with OpenSSL's message, never the key.
    public init(pem: [UInt8]) throws {
        key = try ES256PrivateKey(pem: pem, named: "VAPID key", for: "Web Push")
        publicKey = try encodedPublicKey(key.key, of: "the VAPID key")
    }

    /// Reads and parses a PEM key file.
    ///
    /// - Throws: ``PushTransportError`` `.invalidKey` naming the file.
    public init(file path: String) throws {
        key = try ES256PrivateKey(file: path, named: "VAPID key", for: "Web Push")
        publicKey = try encodedPublicKey(key.key, of: "the VAPID key in \(path)")
    }

    /// The signed JWT for `claims`.
    ///
    /// - Throws: ``PushTransportError`` `.signingFailed` with OpenSSL's message.
    public func token(_ claims: VAPIDClaims) throws -> String {
        claims.token(rawSignature: try key.sign(Array(claims.signingInput.utf8)))
    }

    /// The `Authorization` header's value for `claims`: `vapid t=<JWT>, k=<public key>`.
    ///
    /// - Throws: ``PushTransportError`` `.signingFailed` with OpenSSL's message.
    public func authorization(_ claims: VAPIDClaims) throws -> String {
        "vapid t=" + (try token(claims)) + ", k=" + applicationServerKey
    }
}
