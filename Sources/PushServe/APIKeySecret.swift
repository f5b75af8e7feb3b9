import COpenSSL
import PushCore

/// API keys and session tokens: random secrets, and the SHA-256 that the database keeps in
/// their place (`pushq.api_keys.key_hash`, `pushq.api_sessions.token_hash`).
public enum APIKeySecret {
    /// A new API key: `pq_` and 32 random bytes in base64url (43 characters).
    public static func newKey() -> String { "pq_" + randomToken() }

    /// 32 random bytes in base64url, from the system's generator (`getrandom(2)` on Linux).
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// The SHA-256 of `secret`'s UTF-8 bytes, 64 lower-case hex digits.
    public static func hash(_ secret: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(secret.utf8)
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        // EVP_Digest with SHA-256 fails only when out of memory: there is no hash to give then.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return digest.map { byte in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
        }.joined()
    }
}
